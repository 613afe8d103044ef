package sched

import (
	"fmt"

	"github.com/kubesim/kubesim/sim"
)

// mkNode returns a node named name with the given allocatable and requested
// resources (millicores, MiB); taints and labels may be added with the
// options.
func mkNode(name string, allocCPU, allocMem, reqCPU, reqMem int64, opts ...func(*sim.NodeSpec)) sim.Node {
	spec := &sim.NodeSpec{Name: name, Allocatable: sim.Resources{CPU: allocCPU, Mem: allocMem}}
	for _, o := range opts {
		o(spec)
	}
	// NewCluster derives the taint flags and the default pod limit.
	return sim.NewCluster(0, sim.Node{
		Alloc:     spec.Allocatable,
		Requested: sim.Resources{CPU: reqCPU, Mem: reqMem},
		Spec:      spec,
	}).Nodes()[0]
}

func taints(ts ...sim.Taint) func(*sim.NodeSpec) {
	return func(s *sim.NodeSpec) { s.Taints = ts }
}

func labels(kv ...string) func(*sim.NodeSpec) {
	return func(s *sim.NodeSpec) {
		s.Labels = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			s.Labels[kv[i]] = kv[i+1]
		}
	}
}

// mkPod returns a pod requesting cpu millicores and mem MiB.
func mkPod(cpu, mem int64) *sim.Pod {
	return &sim.Pod{Spec: &sim.PodSpec{Name: fmt.Sprintf("pod-%dm-%dMi", cpu, mem), Requests: sim.Resources{CPU: cpu, Mem: mem}}}
}

// allCand returns the candidate list 0..n-1.
func allCand(n int) []int32 {
	c := make([]int32, n)
	for i := range c {
		c[i] = int32(i)
	}
	return c
}
