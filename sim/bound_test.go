package sim_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

// TestAdmissionBoundByHand: two 4-CPU, 8-GiB nodes and a 100 s window. The
// stuck pods (they cannot finish by the end) ask 1, 3, 5, 5 and 5 GiB: the
// smallest four fit the pooled 16 GiB (14), all five do not (19), so at least
// one is pending. A 9-GiB pod fits no node: pending too. The finite pod, the
// pod with a dependency, the pod arriving at the end and the pod of the
// warm-up do not count. A replay can only leave more pending.
func TestAdmissionBoundByHand(t *testing.T) {
	const gib = 1024
	n := func(name string) sim.NodeSpec {
		return sim.NodeSpec{Name: name, Allocatable: sim.Resources{CPU: 4000, Mem: 8 * gib}}
	}
	p := func(name string, at sim.Time, mem int64, dur sim.Time) sim.PodSpec {
		return sim.PodSpec{Name: name, Arrival: at, Requests: sim.Resources{CPU: 100, Mem: mem}, Duration: dur}
	}
	w := &sim.Workload{
		Nodes: []sim.NodeSpec{n("a"), n("b")},
		Pods: []sim.PodSpec{
			p("warmup", 0, 1*gib, 0),                       // before cfg.WarmUp: not measured
			p("s1", 2*sim.Second, 5*gib, 0),                // long-running
			p("s2", 3*sim.Second, 5*gib, 0),                // long-running
			p("s3", 4*sim.Second, 5*gib, 0),                // long-running
			p("s4", 5*sim.Second, 3*gib, 0),                // long-running
			p("s5", 6*sim.Second, 1*gib, 200*sim.Second),   // finishes after the end
			p("batch", 7*sim.Second, 2*gib, 10*sim.Second), // can finish
			p("huge", 8*sim.Second, 9*gib, 0),              // fits no node
			p("late", 100*sim.Second, 1*gib, 0),            // arrives at the end
		},
		End: 100 * sim.Second,
	}
	dep := p("child", 9*sim.Second, 8*gib, 0)
	dep.After = []int32{6}
	w.Pods = append(w.Pods, dep)
	cfg := sim.DefaultConfig()
	cfg.WarmUp = sim.Second
	got, ok, err := sim.AdmissionBound(w, cfg)
	if err != nil || !ok {
		t.Fatalf("AdmissionBound = %d, %v, %v", got, ok, err)
	}
	if got != 2 {
		t.Errorf("bound = %d, want 2 (one of the stuck pods, and the huge one)", got)
	}
	r, err := sim.Run(context.Background(), w, cfg, sched.NewFirstFit())
	if err != nil {
		t.Fatal(err)
	}
	if r.Unschedulable < got {
		t.Errorf("first-fit left %d pods pending, below the bound %d", r.Unschedulable, got)
	}

	// the pod limit binds: two slots in all, four stuck pods that fit in
	// memory (1 GiB each) leave two pending
	small := &sim.Workload{Nodes: []sim.NodeSpec{n("a"), n("b")}, End: 100 * sim.Second}
	small.Nodes[0].MaxPods, small.Nodes[1].MaxPods = 1, 1
	for i := range 4 {
		small.Pods = append(small.Pods, p(string(rune('a'+i)), sim.Time(i)*sim.Second, gib, 0))
	}
	if got, _, _ := sim.AdmissionBound(small, sim.DefaultConfig()); got != 2 {
		t.Errorf("pod-limit bound = %d, want 2", got)
	}

	// without an end only long-running pods are stuck: s5 may finish
	w.End = 0
	if got, _, _ := sim.AdmissionBound(w, cfg); got != 2 {
		t.Errorf("bound without an end = %d, want 2 (s5 may finish, late now counts: 1+3+5+5 of 16 GiB kept, one 5 pending, and huge)", got)
	}

	cfg.Autoscaler.Enabled = true
	if _, ok, err := sim.AdmissionBound(w, cfg); ok || err != nil {
		t.Errorf("with the autoscaler: ok %v, err %v; want no bound and no error", ok, err)
	}
	w.Pods[1].Requests.CPU = -1
	if _, _, err := sim.AdmissionBound(w, sim.DefaultConfig()); err == nil {
		t.Error("an invalid workload gave no error")
	}
}

// TestAdmissionBoundHolds: on saturated synthetic workloads cut at half
// their arrivals, no heuristic leaves fewer pods pending than the bound, and
// the bound is not trivially zero.
func TestAdmissionBoundHolds(t *testing.T) {
	var positive int
	for seed := uint64(1); seed <= 4; seed++ {
		o := sim.DefaultSyntheticOptions(8)
		o.Pods, o.Seed, o.Load = 1500, seed, 1.4
		w, err := sim.Synthetic(o)
		if err != nil {
			t.Fatal(err)
		}
		w.End = w.Pods[len(w.Pods)/2].Arrival
		cfg := sim.DefaultConfig()
		bound, ok, err := sim.AdmissionBound(w, cfg)
		if err != nil || !ok {
			t.Fatalf("seed %d: %v %v", seed, ok, err)
		}
		if bound > 0 {
			positive++
		}
		for name, r := range runEvery(t, w, cfg, seed) {
			if r.Unschedulable < bound {
				t.Errorf("seed %d: %s left %d pods pending, below the bound %d", seed, name, r.Unschedulable, bound)
			}
		}
	}
	if positive == 0 {
		t.Error("the bound was 0 on every workload: the test says nothing")
	}
}

// TestPackingBoundByHand: two 10-GiB nodes, each running a warm-started
// 6-GiB service for the whole window, leave holes of 4 GiB. Three 5-GiB
// services arrive: pooled, 20 GiB hold the two warm ones and one more
// (admission bound 2 of the five), but no hole takes a 5-GiB pod, so all
// three are pending (packing bound 3), which first-fit confirms. A warm
// batch pod that outlasts the window is no fixed pod (a service could
// preempt it): it is an item, and its node's memory counts as free.
func TestPackingBoundByHand(t *testing.T) {
	const gib = 1024
	n := func(name string) sim.NodeSpec {
		return sim.NodeSpec{Name: name, Allocatable: sim.Resources{CPU: 8000, Mem: 10 * gib}}
	}
	svc := func(name string, at sim.Time, mem int64) sim.PodSpec {
		return sim.PodSpec{Name: name, Arrival: at, Priority: sim.High, Requests: sim.Resources{CPU: 100, Mem: mem}}
	}
	w := &sim.Workload{
		Nodes: []sim.NodeSpec{n("a"), n("b")},
		Pods: []sim.PodSpec{
			svc("warm-a", 0, 6*gib), svc("warm-b", 0, 6*gib),
			svc("s1", sim.Second, 5*gib), svc("s2", 2*sim.Second, 5*gib), svc("s3", 3*sim.Second, 5*gib),
		},
		Initial: []sim.Placement{{Pod: 0, Node: 0}, {Pod: 1, Node: 1}},
		End:     100 * sim.Second,
	}
	cfg := sim.DefaultConfig()
	pooled, _, err := sim.AdmissionBound(w, cfg)
	if err != nil || pooled != 2 {
		t.Fatalf("AdmissionBound = %d, %v; want 2", pooled, err)
	}
	got, ok, err := sim.PackingBound(w, cfg)
	if err != nil || !ok || got != 3 {
		t.Fatalf("PackingBound = %d, %v, %v; want 3", got, ok, err)
	}
	r, err := sim.Run(context.Background(), w, cfg, sched.NewFirstFit())
	if err != nil {
		t.Fatal(err)
	}
	if r.Unschedulable != 3 {
		t.Errorf("first-fit left %d pending; want 3", r.Unschedulable)
	}
	// s1-s3 find 4 GiB free on each node: 3 x 5 GiB left pending
	if r.UnschedulableMemGiB != 15 {
		t.Errorf("first-fit left %v GiB pending; want 15", r.UnschedulableMemGiB)
	}

	// the warm service on b becomes a batch pod that runs past the end: it
	// is an item beside s1-s3 (5, 5, 5, 6 GiB), b's 10 GiB and a's 4 hold
	// two of them, so two are pending (pooled: 5+5+5+6+6 > 20, also 2)
	w.Pods[1].Priority, w.Pods[1].Duration = sim.Low, 500*sim.Second
	if got, _, _ := sim.PackingBound(w, cfg); got != 2 {
		t.Errorf("with a warm batch pod: PackingBound = %d, want 2", got)
	}

	cfg.Autoscaler.Enabled = true
	if _, ok, err := sim.PackingBound(w, cfg); ok || err != nil {
		t.Errorf("with the autoscaler: ok %v, err %v; want no bound and no error", ok, err)
	}
}

// TestPackingBoundHolds: on saturated random workloads of large services
// (4-20 GiB on 32-GiB nodes, some warm-started on every node) and small
// batch pods, no heuristic run without evictions leaves fewer pods pending
// than the packing bound; the bound is never below the admission bound,
// and above it on some workload.
func TestPackingBoundHolds(t *testing.T) {
	const gib = 1024
	var tighter, checked int
	for seed := uint64(1); seed <= 6; seed++ {
		rng := rand.New(rand.NewPCG(seed, 3))
		w := &sim.Workload{End: 600 * sim.Second}
		for i := range 8 {
			w.Nodes = append(w.Nodes, sim.NodeSpec{Name: fmt.Sprintf("n%d", i), Allocatable: sim.Resources{CPU: 16000, Mem: 32 * gib}})
		}
		for i := range 240 {
			p := sim.PodSpec{Name: fmt.Sprintf("p%d", i), Arrival: sim.Time(rng.IntN(900)) * sim.Second}
			if rng.IntN(2) == 0 {
				p.Priority = sim.High
				p.Requests = sim.Resources{CPU: int64(250 * (1 + rng.IntN(8))), Mem: int64(4+rng.IntN(17)) * gib}
			} else {
				p.Duration = sim.Time(30+rng.IntN(900)) * sim.Second
				p.Requests = sim.Resources{CPU: int64(250 * (1 + rng.IntN(4))), Mem: int64(1+rng.IntN(8)) * gib}
			}
			if i < 24 && p.Priority == sim.High {
				p.Arrival = 0
				w.Initial = append(w.Initial, sim.Placement{Pod: int32(i), Node: int32(i % 8)})
			}
			w.Pods = append(w.Pods, p)
		}
		cfg := sim.DefaultConfig()
		pooled, _, err := sim.AdmissionBound(w, cfg)
		if err != nil {
			t.Fatal(err)
		}
		bound, ok, err := sim.PackingBound(w, cfg)
		if err != nil || !ok {
			t.Fatalf("seed %d: %v %v", seed, ok, err)
		}
		if bound < pooled {
			t.Errorf("seed %d: packing bound %d below the admission bound %d", seed, bound, pooled)
		}
		if bound > pooled {
			tighter++
		}
		best := int64(-1)
		for name, r := range runEvery(t, w, cfg, seed) {
			if r.Evictions > 0 {
				continue
			}
			checked++
			if best < 0 || r.Unschedulable < best {
				best = r.Unschedulable
			}
			if r.Unschedulable < bound {
				t.Errorf("seed %d: %s left %d pods pending, below the packing bound %d", seed, name, r.Unschedulable, bound)
			}
		}
		t.Logf("seed %d: admission bound %d, packing bound %d, best heuristic %d", seed, pooled, bound, best)
	}
	if tighter == 0 || checked == 0 {
		t.Errorf("packing bound above the admission bound on %d workloads, %d runs without evictions: the test says nothing", tighter, checked)
	}
}

// runEvery replays w under every heuristic of package sched, seeded with
// seed, and returns the results by scheduler name.
func runEvery(t *testing.T, w *sim.Workload, cfg sim.Config, seed uint64) map[string]*sim.Result {
	t.Helper()
	out := map[string]*sim.Result{}
	for _, name := range sched.Names() {
		s, err := sched.New(name, seed)
		if err != nil {
			t.Fatal(err)
		}
		r, err := sim.Run(context.Background(), w, cfg, s)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = r
	}
	return out
}
