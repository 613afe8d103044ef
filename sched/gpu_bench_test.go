package sched_test

import (
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
func BenchmarkGPUDecisions(b *testing.B) {
	t, err := dataset.ReadOpenbCSV("../dataset/testdata/openb/openb_node_list_all_node.csv",
		"../dataset/testdata/openb/default/openb_pod_list_default.csv")
	if err != nil {
		b.Fatal(err)
	}
	w, err := t.Workload()
	if err != nil {
		b.Fatal(err)
	}
	order, rank := sim.GPUArrivals(w, 1.3, 42)
	base := sim.NewGPUCluster(w, rank)
	for _, name := range []string{sched.NameFGD, sched.NameBestFit, sched.NameRandom} {
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
