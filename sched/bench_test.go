package sched

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kubesim/kubesim/sim"
)

// benchCluster returns a cluster of n nodes of three sizes, each filled to a
// random share (seeded), with a PreferNoSchedule taint on every tenth node
// and zone/rack labels, and a set of pods of mixed sizes, a few with
// tolerations or node affinity, most of them in one of benchGroups groups
// whose pods are spread over the nodes. It models a cluster in steady state.
func benchCluster(n int, seed uint64) (*sim.Cluster, []*sim.Pod) {
	r := rand.New(rand.NewPCG(seed, 7))
	sizes := []sim.Resources{{CPU: 16000, Mem: 65536}, {CPU: 32000, Mem: 131072}, {CPU: 64000, Mem: 262144}}
	nodes := make([]sim.Node, n)
	for i := range nodes {
		alloc := sizes[r.IntN(len(sizes))]
		spec := &sim.NodeSpec{
			Name:        fmt.Sprintf("node-%d", i),
			Allocatable: alloc,
			Labels:      map[string]string{sim.LabelZone: fmt.Sprintf("z%d", i%3), sim.LabelRack: fmt.Sprintf("r%d", i%10)},
		}
		if i%10 == 9 {
			spec.Taints = []sim.Taint{{Key: "spot", Value: "true", Effect: sim.PreferNoSchedule}}
		}
		fill := 0.2 + 0.7*r.Float64()
		nodes[i] = sim.Node{
			Alloc:     alloc,
			Requested: sim.Resources{CPU: int64(fill * float64(alloc.CPU)), Mem: int64((0.2 + 0.7*r.Float64()) * float64(alloc.Mem))},
			Pods:      int32(10 + r.IntN(50)),
			Spec:      spec,
		}
	}
	pods := make([]*sim.Pod, 256)
	for i := range pods {
		spec := &sim.PodSpec{
			Name:     fmt.Sprintf("pod-%d", i),
			Requests: sim.Resources{CPU: 100 * (1 + r.Int64N(40)), Mem: 128 * (1 + r.Int64N(64))},
		}
		switch i % 16 {
		case 3:
			spec.Tolerations = []sim.Toleration{{Key: "spot", Exists: true}}
		case 7:
			spec.Affinity = &sim.Affinity{Preferred: []sim.PreferredTerm{{Weight: 10, Term: sim.Term{{Key: sim.LabelZone, Op: sim.OpIn, Values: []string{"z1"}}}}}}
		case 11:
			spec.Affinity = &sim.Affinity{Required: []sim.Term{{{Key: sim.LabelZone, Op: sim.OpNotIn, Values: []string{"z2"}}}}}
		}
		pods[i] = &sim.Pod{Spec: spec, ID: sim.PodID(i)}
	}
	c := sim.NewCluster(0, nodes...)
	// Groups (services and jobs) from a stream of their own, so the nodes
	// and pods above stay as they were: a quarter of each node's pods
	// belong to one of benchGroups groups, and 7 in 8 pods have a group.
	rg := rand.New(rand.NewPCG(seed, 11))
	for i := range nodes {
		for range nodes[i].Pods / 4 {
			c.AddGroupPods(i, sim.GroupID(rg.IntN(benchGroups)), 1)
		}
	}
	for _, p := range pods {
		if rg.IntN(8) > 0 {
			g := rg.IntN(benchGroups)
			p.Spec.Group, p.Group = fmt.Sprintf("app-%d", g), sim.GroupID(g)
		}
	}
	return c, pods
}

// benchGroups is the number of pod groups in benchCluster.
const benchGroups = 32

// BenchmarkSchedule measures one scheduling decision of each scheduler on a
// steady-state cluster (the cluster is not modified between decisions).
func BenchmarkSchedule(b *testing.B) {
	for _, name := range Names() {
		for _, n := range []int{10, 100, 1000} {
			b.Run(fmt.Sprintf("%s/nodes=%d", name, n), func(b *testing.B) {
				c, pods := benchCluster(n, 1)
				s, err := New(name, 1)
				if err != nil {
					b.Fatal(err)
				}
				for _, p := range pods { // grow the buffers before timing
					s.Schedule(c, p)
				}
				b.ReportAllocs()
				decisions := 0
				for b.Loop() {
					s.Schedule(c, pods[decisions%len(pods)])
					decisions++
				}
				b.ReportMetric(float64(decisions)/b.Elapsed().Seconds(), "decisions/s")
			})
		}
	}
}
