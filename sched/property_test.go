package sched

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kubesim/kubesim/sim"
)

// randomCluster returns a seeded random cluster of n nodes: mixed sizes and
// fill levels, some full pod slots, NoSchedule/NoExecute/PreferNoSchedule
// taints and zone/disk labels.
func randomCluster(r *rand.Rand, n int) *sim.Cluster {
	nodes := make([]sim.Node, n)
	for i := range nodes {
		alloc := sim.Resources{CPU: 1000 * (1 + r.Int64N(64)), Mem: 1024 * (1 + r.Int64N(256))}
		spec := &sim.NodeSpec{Name: fmt.Sprintf("n%d", i), Allocatable: alloc, Labels: map[string]string{}}
		if r.IntN(4) > 0 {
			spec.Labels[sim.LabelZone] = []string{"a", "b", "c"}[r.IntN(3)]
		}
		if r.IntN(3) == 0 {
			spec.Labels["disk"] = "ssd"
		}
		for range r.IntN(3) {
			spec.Taints = append(spec.Taints, sim.Taint{
				Key:    []string{"gpu", "spot", "dedicated"}[r.IntN(3)],
				Value:  []string{"true", "x"}[r.IntN(2)],
				Effect: []sim.TaintEffect{sim.NoSchedule, sim.PreferNoSchedule, sim.NoExecute}[r.IntN(3)],
			})
		}
		maxPods := int32(1 + r.IntN(20))
		nodes[i] = sim.Node{
			Alloc:     alloc,
			Requested: sim.Resources{CPU: r.Int64N(alloc.CPU + 1), Mem: r.Int64N(alloc.Mem + 1)},
			Pods:      int32(r.IntN(int(maxPods) + 1)),
			MaxPods:   maxPods,
			Spec:      spec,
		}
	}
	return sim.NewCluster(0, nodes...)
}

// randomPod returns a seeded random pod, sometimes request-less, with
// random tolerations and node affinity.
func randomPod(r *rand.Rand) *sim.Pod {
	spec := &sim.PodSpec{Name: "p", Requests: sim.Resources{CPU: r.Int64N(16000), Mem: r.Int64N(65536)}}
	if r.IntN(10) == 0 {
		spec.Requests = sim.Resources{}
	}
	for range r.IntN(3) {
		spec.Tolerations = append(spec.Tolerations, sim.Toleration{
			Key:    []string{"gpu", "spot", "dedicated", ""}[r.IntN(4)],
			Value:  "true",
			Exists: r.IntN(2) == 0,
			Effect: sim.TaintEffect(r.IntN(4)),
		})
	}
	zone := sim.Requirement{Key: sim.LabelZone, Op: []sim.SelectorOp{sim.OpIn, sim.OpNotIn, sim.OpExists}[r.IntN(3)], Values: []string{"a", "b"}[:1+r.IntN(2)]}
	ssd := sim.Requirement{Key: "disk", Op: sim.OpExists}
	switch r.IntN(4) {
	case 1:
		spec.Affinity = &sim.Affinity{Required: []sim.Term{{zone}}}
	case 2:
		spec.Affinity = &sim.Affinity{Preferred: []sim.PreferredTerm{{Weight: 1 + r.Int32N(100), Term: sim.Term{zone}}, {Weight: 1 + r.Int32N(100), Term: sim.Term{ssd}}}}
	case 3:
		spec.Affinity = &sim.Affinity{Required: []sim.Term{{ssd}, {zone}}, Preferred: []sim.PreferredTerm{{Weight: 50, Term: sim.Term{zone}}}}
	}
	return &sim.Pod{Spec: spec}
}

// TestSchedulersRespectFeasibility is a randomised property test: on random
// clusters and pods every scheduler returns PendingDecision exactly when no
// node is feasible (sim.Feasible), and otherwise a feasible node; first-fit
// returns the first feasible node; the scoring schedulers return a node
// whose total score is the maximum (on clusters small enough to be scored in
// full). Clusters up to 400 nodes exercise kube-default's sampling.
func TestSchedulersRespectFeasibility(t *testing.T) {
	r := rand.New(rand.NewPCG(42, 1))
	scheds := map[string]sim.Scheduler{}
	names := Names()
	for _, name := range names {
		s, err := New(name, 9)
		if err != nil {
			t.Fatal(err)
		}
		scheds[name] = s
	}
	rounds := 2000
	if testing.Short() {
		rounds = 300
	}
	pendings, placements := 0, 0
	for round := range rounds {
		n := 1 + r.IntN(60)
		if round%20 == 0 {
			n = 150 + r.IntN(250)
		}
		c := randomCluster(r, n)
		for range 5 {
			p := randomPod(r)
			first := -1
			for i := range c.Nodes() {
				if sim.Feasible(&c.Nodes()[i], p.Spec) {
					first = i
					break
				}
			}
			for _, name := range names {
				s := scheds[name]
				d := s.Schedule(c, p)
				switch {
				case first < 0 && d != sim.PendingDecision:
					t.Fatalf("round %d, %s: no node is feasible but Schedule = %d", round, name, d)
				case first >= 0 && (d < 0 || d >= n):
					t.Fatalf("round %d, %s: node %d is feasible but Schedule = %d", round, name, first, d)
				case d >= 0 && !sim.Feasible(&c.Nodes()[d], p.Spec):
					t.Fatalf("round %d, %s: Schedule = %d, an infeasible node", round, name, d)
				case name == NameFirstFit && d != first:
					t.Fatalf("round %d, first-fit: Schedule = %d; want the first feasible node %d", round, d, first)
				}
				if d < 0 {
					pendings++
					continue
				}
				placements++
				f := s.(*Framework)
				if len(f.Profile().Scores) == 0 || n >= minFeasibleNodesToFind {
					continue
				}
				scores := f.Scores(c, p, nil)
				if best := slices.Max(scores); scores[d] != best {
					t.Fatalf("round %d, %s: chose node %d scoring %d; the best score is %d (%v)", round, name, d, scores[d], best, scores)
				}
				for i, sc := range scores {
					if (sc >= 0) != sim.Feasible(&c.Nodes()[i], p.Spec) {
						t.Fatalf("round %d, %s: Scores[%d] = %d disagrees with sim.Feasible", round, name, i, sc)
					}
				}
			}
		}
	}
	if pendings == 0 || placements == 0 {
		t.Errorf("the random cases never exercised both outcomes: %d pending, %d placed", pendings, placements)
	}
}

// TestDeterministicAcrossInstances checks that two instances with the same
// seed make the same decisions over a long random sequence, and that the
// seed matters for the randomised schedulers.
func TestDeterministicAcrossInstances(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			run := func(seed uint64) []int {
				r := rand.New(rand.NewPCG(5, 5))
				s, err := New(name, seed)
				if err != nil {
					t.Fatal(err)
				}
				var out []int
				for range 50 {
					c := randomCluster(r, 1+r.IntN(300))
					for range 4 {
						out = append(out, s.Schedule(c, randomPod(r)))
					}
				}
				return out
			}
			a, b := run(1), run(1)
			if !slices.Equal(a, b) {
				t.Fatalf("same seed, different decisions:\n%v\n%v", a, b)
			}
			if name == NameRandom && slices.Equal(a, run(2)) {
				t.Errorf("random: seeds 1 and 2 gave the same %d decisions", len(a))
			}
		})
	}
}
