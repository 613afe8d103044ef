package sweep

import (
	"context"
	"runtime"
	"testing"
)

// benchSweep is a heuristic-only synthetic sweep at 100 nodes: 12 seeds,
// every heuristic (12 cells of 8 replays), each workload of the default
// synthetic size (100 pods per node: 10,000 pods).
const benchSweep = `name: bench
cluster:
  sim:
    autoscaler:
      enabled: false
eval:
  nodes: [100]
  seeds: 12
  train: false
`

// BenchmarkSweep measures a heuristic-only sweep at 100 nodes from an
// empty cache (cells/s), and BenchmarkSweep/bare the same replays (each
// cell's heuristics and its fluid relaxation, as a sweep replays them)
// without the sweep's hashing, files and tables: the sweep's overhead is
// the difference.
func BenchmarkSweep(b *testing.B) {
	s, err := ParseSpec([]byte(benchSweep))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("sweep", func(b *testing.B) {
		cells := 0
		for b.Loop() {
			o, err := Sweep(context.Background(), s, SweepOptions{Out: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			cells += o.Evaluated
		}
		b.ReportMetric(float64(cells)/b.Elapsed().Seconds(), "cells/s")
	})
	b.Run("bare", func(b *testing.B) {
		scheds, err := Schedulers(s, "")
		if err != nil {
			b.Fatal(err)
		}
		cells := 0
		for b.Loop() {
			cases, err := Cases(s, nil, 1)
			if err != nil {
				b.Fatal(err)
			}
			err = parallel(context.Background(), runtime.GOMAXPROCS(0), len(cases), func(i int) error {
				_, err := replayCase(context.Background(), cases[i], scheds, true, nil)
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
			cells += len(cases)
		}
		b.ReportMetric(float64(cells)/b.Elapsed().Seconds(), "cells/s")
	})
}
