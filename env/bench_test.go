package env

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkEnvStep steps one environment under a random policy (uniform
// over the allowed actions) on the default configuration (autoscaler on,
// synthetic episodes of 100 pods a node) at a fixed initial size. Episode
// resets (workload generation included) are part of the measured time.
func BenchmarkEnvStep(b *testing.B) {
	for _, n := range []int{10, 100} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.MinNodes, cfg.MaxNodes = n, n
			e, err := New(cfg, nil)
			if err != nil {
				b.Fatal(err)
			}
			obs, _, err := e.Reset(1)
			if err != nil {
				b.Fatal(err)
			}
			r := rand.New(rand.NewPCG(1, 1))
			episodes := 0
			b.ReportAllocs()
			for b.Loop() {
				o, _, term, trunc, _ := e.Step(allowedAction(r, obs))
				obs = o
				if term || trunc {
					episodes++
					if obs, _, err = e.NextEpisode(); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
			b.ReportMetric(float64(episodes), "episodes")
		})
	}
}

// BenchmarkVecStep steps K environments of 10 nodes with a VecEnv; steps/s
// counts the steps of all K environments.
func BenchmarkVecStep(b *testing.B) {
	for _, k := range []int{2, 8} {
		b.Run(fmt.Sprintf("envs=%d/nodes=10", k), func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.MinNodes, cfg.MaxNodes = 10, 10
			v, err := NewVec(cfg, nil, k)
			if err != nil {
				b.Fatal(err)
			}
			batch, err := v.Reset(1)
			if err != nil {
				b.Fatal(err)
			}
			r := rand.New(rand.NewPCG(1, 1))
			actions := make([]int, k)
			b.ReportAllocs()
			for b.Loop() {
				for i := range actions {
					actions[i] = allowedAction(r, batch.Obs[i])
				}
				if batch, err = v.Step(actions); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*k)/b.Elapsed().Seconds(), "steps/s")
		})
	}
}

// BenchmarkEncode measures building one observation (features, mask,
// domains and the cluster measures behind the reward) on a cluster in the
// middle of an episode.
func BenchmarkEncode(b *testing.B) {
	for _, n := range []int{10, 100} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.MinNodes, cfg.MaxNodes = n, n
			e, err := New(cfg, nil)
			if err != nil {
				b.Fatal(err)
			}
			obs, _, err := e.Reset(1)
			if err != nil {
				b.Fatal(err)
			}
			r := rand.New(rand.NewPCG(1, 1))
			for range 20 * n { // fill the cluster
				obs, _, _, _, _ = e.Step(allowedAction(r, obs))
			}
			p, ok := e.eng.Next()
			if !ok {
				b.Fatal("episode over")
			}
			b.ReportAllocs()
			for b.Loop() {
				e.enc.encode(e.eng.Cluster(), p, e.typical)
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "nodes/s")
		})
	}
}
