package sim

import (
	"math/rand/v2"
	"testing"
)

// TestWaitingIntegralByHand: without preemption, on one 4000m node, p1
// (low) binds at 0 and runs 5 s; p2 (high, 1000m) arrives at 1 s, fits only once p1 finishes and binds
// at 5 s: 4 s pending. p3 (low, 5000m) arrives at 2 s and fits nowhere until
// the window ends at 10 s: 8 s pending. So 12,000 pod-ms in all, 4,000 of
// them high-priority, and at the end one pod pending, none high.
func TestWaitingIntegralByHand(t *testing.T) {
	p2 := pod("p2", Second, 1000, 1024, Second)
	p2.Priority = High
	w := &Workload{
		Nodes: []NodeSpec{node("n", 4000, 4096)},
		Pods:  []PodSpec{pod("p1", 0, 4000, 1024, 5*Second), p2, pod("p3", 2*Second, 5000, 1024, Second)},
		End:   10 * Second,
	}
	cfg := quietConfig(0)
	cfg.Preemption = false
	e, _ := mustRun(t, w, cfg, scripted{})
	c := e.Counters()
	if e.Now() != 10*Second || c.PendingMs != 12000 || c.PendingHighMs != 4000 || e.Pending() != 1 || e.PendingHigh() != 0 {
		t.Errorf("at %v: pending %d pod-ms (%d high), %d pods pending (%d high); want 10 s, 12000 (4000), 1 (0)",
			e.Now(), c.PendingMs, c.PendingHighMs, e.Pending(), e.PendingHigh())
	}
}

// TestWaitingIntegralRandomized integrates the pending counts independently
// (a step function read after every event and every decision) on busy runs
// with evictions, machine events and the autoscaler, and compares with the
// engine's counters. Preemption is off: Next preempts for a retry that fits
// nowhere without an event or a decision this test could read after.
func TestWaitingIntegralRandomized(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		o := DefaultSyntheticOptions(8)
		o.Pods, o.Seed, o.Load = 1000, seed, 1.3
		w, err := Synthetic(o)
		if err != nil {
			t.Fatal(err)
		}
		w.Events = []MachineEvent{{At: 10 * Minute, Kind: MachineRemove, Node: NodeSpec{Name: "node-003"}}}
		cfg := DefaultConfig()
		cfg.Seed = seed
		cfg.Autoscaler.Enabled = true
		cfg.Autoscaler.Template = node("as", 32000, 131072)
		cfg.Autoscaler.MaxNodes = 10
		cfg.Preemption = false
		e, err := New(w, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var all, high int64
		last, n, nh := Time(0), 0, 0
		read := func() {
			all += int64(n) * int64(e.Now()-last)
			high += int64(nh) * int64(e.Now()-last)
			last, n, nh = e.Now(), e.Pending(), e.PendingHigh()
		}
		var failed error
		e.afterEvent = func() {
			read()
			if failed == nil {
				failed = e.CheckInvariants()
			}
		}
		pol := randomPolicy{rand.New(rand.NewPCG(seed, 9))}
		for failed == nil {
			p, ok := e.Next()
			if !ok {
				break
			}
			e.Decide(pol.Schedule(e.Cluster(), p))
			read()
		}
		read()
		if failed != nil {
			t.Fatalf("seed %d at %v: %v", seed, e.Now(), failed)
		}
		c := e.Counters()
		if c.PendingMs != all || c.PendingHighMs != high {
			t.Errorf("seed %d: pending %d pod-ms (%d high); integrated %d (%d)", seed, c.PendingMs, c.PendingHighMs, all, high)
		}
		if high == 0 || all == high || c.Evictions == 0 {
			t.Errorf("seed %d: a path was not exercised: %d pod-ms, %d high, %+v", seed, all, high, c)
		}
		t.Logf("seed %d: %.1f pod-hours pending, %.2f high-priority, %d evictions",
			seed, float64(all)/float64(Hour), float64(high)/float64(Hour), c.Evictions)
	}
}
