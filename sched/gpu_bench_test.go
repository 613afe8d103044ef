package sched_test

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/kubesim/kubesim/dataset"
	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

// BenchmarkGPUDecisions replays the default openb pod list, inflated to
// 1.3 x the GPU capacity (seed 42), on all 1,523 openb nodes (310 without
// GPUs) and reports scheduling decisions per second: each decision filters
// and scores every node and places the pod. An iteration is one whole run
// (about 10,500 decisions) with a fresh copy of the empty cluster.
//
// The files are found from this source file's folder, so the test binary
// also runs from elsewhere (scripts/ab-bench.sh runs it from the root).
func BenchmarkGPUDecisions(b *testing.B) {
	_, src, _, _ := runtime.Caller(0)
	data := filepath.Join(filepath.Dir(src), "..", "dataset", "testdata", "openb")
	t, err := dataset.ReadOpenbCSV(filepath.Join(data, "openb_node_list_all_node.csv"),
		filepath.Join(data, "default", "openb_pod_list_default.csv"))
	if err != nil {
		b.Fatal(err)
	}
	w, err := t.Workload()
	if err != nil {
		b.Fatal(err)
	}
	order, rank := sim.GPUArrivals(w, 1.3, 42)
	base := sim.NewGPUCluster(w, rank)
	for _, name := range []string{sched.NameFGD, sched.NameFGDTiers, sched.NameFGDGuard, sched.NameBestFit, sched.NameRandom} {
		b.Run(name+"/nodes=1523", func(b *testing.B) {
			b.ReportAllocs()
			s, err := sched.NewGPU(name, 42)
			if err != nil {
				b.Fatal(err)
			}
			var n int
			for b.Loop() {
				c := *base
				c.Nodes = append([]sim.GPUNode(nil), base.Nodes...)
				for _, k := range order {
					p := &w.Pods[k]
					if i, m := s.Schedule(&c, int(k), p); i >= 0 {
						c.Place(i, p, m)
					}
				}
				n += len(order)
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "decisions/s")
		})
	}
}
