package sim_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

// BenchmarkReplay replays 100,000 synthetic pods (offered memory load 0.8:
// busy, about one decision per pod) under two heuristics at three cluster sizes
// and reports pods/s. Each case's workload is generated once, outside the timer.
func BenchmarkReplay(b *testing.B) {
	const pods = 100_000
	for _, name := range []string{sched.NameKubeDefault, sched.NameFirstFit} {
		for _, n := range []int{10, 100, 1000} {
			b.Run(fmt.Sprintf("%s/nodes=%d", name, n), func(b *testing.B) {
				// Generated here, so that -bench selecting one case does
				// not build (and keep alive for the GC to mark) the rest.
				o := sim.DefaultSyntheticOptions(n)
				o.Pods, o.Load = pods, 0.8
				w, err := sim.Synthetic(o)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					s, err := sched.New(name, 1)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := sim.Run(context.Background(), w, sim.DefaultConfig(), s); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(pods)*float64(b.N)/b.Elapsed().Seconds(), "pods/s")
			})
		}
	}
}
