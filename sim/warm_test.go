package sim

import (
	"reflect"
	"testing"
)

// TestWarmStart follows a warm start by hand on two nodes A and B of
// 4000m/4096Mi, startup latency 2 s, samples every 4 s, end at 20 s:
//   - w0 (3000m) is placed on A and w1 (2000m) on B at time 0; w2 (2500m) is
//     refused on A (1000m free after w0) and arrives normally at 5 s.
//   - n0 (1000m) arrives at 0 and sees the warm pods: first fit puts it on A
//     (1000m free), bound at 0 and started at 2 s.
//   - w1's usage is 2000m from offset 0 and 1000m from offset 3 s. Warm pods
//     start at 0 with no startup latency, so at the 4 s sample A uses
//     3000+1000 and B 1000: CPU utilisation 5000/8000. (Had w1 started at
//     2 s, B would still use 2000m and the share would be 6000/8000.)
//   - w2 at 5 s: A is full, B has 2000m free: unschedulable. w0 ends at 10 s
//     (10 s from its start at 0), so w2 binds on A at 10 s: latency 5000 ms.
//
// Latency: n0 0 ms and w2 5000 ms (warm pods have none): count 2, mean 2500,
// p95 5000. Pods 4 (warm pods arrive at 0), warm 2, refused 1.
func TestWarmStart(t *testing.T) {
	w1 := pod("w1", 0, 2000, 1024, 0)
	w1.Usage = []UsagePoint{{Offset: 0, Use: Resources{CPU: 2000, Mem: 1024}}, {Offset: 3 * Second, Use: Resources{CPU: 1000, Mem: 1024}}}
	w := &Workload{
		Name:    "warm",
		Nodes:   []NodeSpec{node("A", 4000, 4096), node("B", 4000, 4096)},
		Pods:    []PodSpec{pod("w0", 0, 3000, 1024, 10*Second), w1, pod("w2", 5*Second, 2500, 1024, 0), pod("n0", 0, 1000, 1024, 0)},
		End:     20 * Second,
		Initial: []Placement{{Pod: 0, Node: 0}, {Pod: 1, Node: 1}, {Pod: 2, Node: 0}},
	}
	cfg := quietConfig(2 * Second)
	cfg.SampleInterval = 4 * Second
	e, err := New(w, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Before the first decision the warm pods already run on their nodes.
	if w0, w1 := e.Pod(0), e.Pod(1); w0.State != Running || w0.Node != 0 || w1.State != Running || w1.Node != 1 {
		t.Fatalf("after New: w0 %v on %d, w1 %v on %d; want both running, on A (0) and B (1)", w0.State, w0.Node, w1.State, w1.Node)
	}
	if w2 := e.Pod(2); w2.State != NotArrived {
		t.Fatalf("refused w2 in state %v; want not-arrived", w2.State)
	}
	for {
		p, ok := e.Next()
		if !ok {
			break
		}
		e.Decide(scripted{}.Schedule(e.Cluster(), p))
		if err := e.CheckInvariants(); err != nil {
			t.Fatal(err)
		}
	}
	r := e.Result()
	if got := e.Pod(2); got.Node != 0 || got.boundAt != 10*Second {
		t.Errorf("w2 on node %d bound at %v; want A (0) at 10s", got.Node, got.boundAt)
	}
	if got := e.Pod(3); got.Node != 0 || got.startedAt != 2*Second {
		t.Errorf("n0 on node %d started at %v; want A (0) at 2s", got.Node, got.startedAt)
	}
	if s := e.Samples()[0]; s.At != 4*Second || !approx(s.CPUUtil, 5000.0/8000) {
		t.Errorf("first sample at %v: cpu util %v; want 4s and %v", s.At, s.CPUUtil, 5000.0/8000)
	}
	l := r.PendingLatency
	if l.Count != 2 || l.Mean != 2500 || l.P95 != 5000 {
		t.Errorf("latency %+v; want count 2, mean 2500, p95 5000", l)
	}
	if r.Pods != 4 || r.WarmPods != 2 || r.WarmRejected != 1 || r.Unschedulable != 0 {
		t.Errorf("pods %d, warm %d, refused %d, unschedulable %d; want 4, 2, 1, 0", r.Pods, r.WarmPods, r.WarmRejected, r.Unschedulable)
	}
	if c := e.Counters(); c.Binds != 2 || c.Arrived != 4 {
		t.Errorf("binds %d, arrived %d; want 2 (n0, w2) and 4", c.Binds, c.Arrived)
	}
}

// TestWarmStartFilters: each hard filter refuses a placement, and placements
// are applied in order (the second pod on a one-pod node is refused).
func TestWarmStartFilters(t *testing.T) {
	tainted := node("tainted", 4000, 4096)
	tainted.Taints = []Taint{{Key: "k", Effect: NoExecute}}
	labelled := node("labelled", 4000, 4096)
	labelled.Labels = map[string]string{"zone": "a"}
	one := node("one", 4000, 4096)
	one.MaxPods = 1
	picky := pod("picky", 0, 100, 100, 0)
	picky.Affinity = &Affinity{Required: []Term{{{Key: "zone", Op: OpIn, Values: []string{"b"}}}}}
	w := &Workload{
		Nodes: []NodeSpec{tainted, labelled, one, node("small", 1000, 1024)},
		Pods:  []PodSpec{pod("plain", 0, 100, 100, 0), picky, pod("first", 0, 100, 100, 0), pod("second", 0, 100, 100, 0), pod("big", 0, 2000, 100, 0)},
		End:   Second,
		Initial: []Placement{
			{Pod: 0, Node: 0}, // taint NoExecute: refused
			{Pod: 1, Node: 1}, // affinity zone b, node in zone a: refused
			{Pod: 2, Node: 2}, // fits
			{Pod: 3, Node: 2}, // pod limit 1 reached by "first": refused
			{Pod: 4, Node: 3}, // 2000m on a 1000m node: refused
		},
	}
	e, err := New(w, quietConfig(0))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []PodState{NotArrived, NotArrived, Running, NotArrived, NotArrived} {
		if got := e.Pod(PodID(i)).State; got != want {
			t.Errorf("%s: %v; want %v", w.Pods[i].Name, got, want)
		}
	}
	if e.m.warmPods != 1 || e.m.warmRejected != 4 {
		t.Errorf("warm %d, refused %d; want 1 and 4", e.m.warmPods, e.m.warmRejected)
	}
}

// TestWarmStartDeterminism: a synthetic workload whose first pods start warm,
// round-robin over the nodes, gives identical results under one seed.
func TestWarmStartDeterminism(t *testing.T) {
	run := func() *Result {
		o := DefaultSyntheticOptions(8)
		o.Pods = 800
		w, err := Synthetic(o)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 60 {
			w.Initial = append(w.Initial, Placement{Pod: int32(i), Node: int32(i % len(w.Nodes))})
		}
		cfg := DefaultConfig()
		cfg.Seed = 3
		_, r := mustRun(t, w, cfg, scripted{})
		if r.WarmPods == 0 || r.WarmPods+r.WarmRejected != 60 {
			t.Fatalf("warm %d, refused %d; want some warm, 60 in all", r.WarmPods, r.WarmRejected)
		}
		return r
	}
	a, b := run(), run()
	if !reflect.DeepEqual(a, b) {
		t.Errorf("same seed, different results:\n%+v\n%+v", a, b)
	}
}

// TestWarmUp replays one 4000m node for 60 s (no startup latency, a sample
// every 4 s) with and without a 10 s warm-up:
//   - a (high, 3000m, uses 5000m) runs 0-30 s, throttled the whole time.
//   - b (2000m) arrives at 5 s, fails (1000m free), binds at 30 s when a
//     ends: 25000 ms; it runs 30-40 s.
//   - c (high, 1000m) arrives at 13 s, binds at once and runs 13-18 s,
//     throttled by a's overload: 5 s of violation.
//   - d (1500m) arrives at 15 s, fails (c and a hold 4000m; after c leaves
//     at 18 s 1000m is free, still too little), binds at 30 s after b:
//     15000 ms; it runs 30-35 s.
//   - machine removals of an unknown node at 3 s and 20 s are ignored.
//
// Requested CPU by sample: 4, 8, 12 s: 3000; 16 s: 4000; 20, 24, 28 s: 3000;
// 32 s: 3500; 36 s: 2000; 40-60 s (six samples): 0.
// With the warm-up, a and b (arrived before 10 s), the 5 s failure, the 3 s
// removal and the samples at 4 and 8 s are left out, and node-hours count
// 50 s.
func TestWarmUp(t *testing.T) {
	a := pod("a", 0, 3000, 512, 30*Second)
	a.Priority = High
	a.Usage = []UsagePoint{{Use: Resources{CPU: 5000, Mem: 512}}}
	c := pod("c", 13*Second, 1000, 512, 5*Second)
	c.Priority = High
	w := &Workload{
		Nodes: []NodeSpec{node("n", 4000, 4096)},
		Pods:  []PodSpec{a, pod("b", 5*Second, 2000, 512, 10*Second), c, pod("d", 15*Second, 1500, 512, 5*Second)},
		Events: []MachineEvent{
			{At: 3 * Second, Kind: MachineRemove, Node: NodeSpec{Name: "missing"}},
			{At: 20 * Second, Kind: MachineRemove, Node: NodeSpec{Name: "missing"}},
		},
		End: 60 * Second,
	}
	cases := []struct {
		name                 string
		warmUp               Time
		pods, failed, ignore int64
		samples              int
		latency              Latency
		allocMean            float64
		nodeHours            float64
		slaPer1k, violSec    float64
	}{
		{
			// Latencies 0 (a), 25000 (b), 0 (c), 15000 (d); violated a and c
			// of 4 pods, 30+5 s; 15 samples summing 27500m of 4000m each.
			name: "none", warmUp: 0, pods: 4, failed: 2, ignore: 2, samples: 15,
			latency:   Latency{Count: 4, Mean: 10000, P50: 0, P95: 25000, P99: 25000},
			allocMean: 27500.0 / 4000 / 15, nodeHours: 60.0 / 3600, slaPer1k: 500, violSec: 35,
		},
		{
			// Latencies 0 (c) and 15000 (d); violated c of 2 pods, 5 s; 13
			// samples summing 21500m.
			name: "10s", warmUp: 10 * Second, pods: 2, failed: 1, ignore: 1, samples: 13,
			latency:   Latency{Count: 2, Mean: 7500, P50: 0, P95: 15000, P99: 15000},
			allocMean: 21500.0 / 4000 / 13, nodeHours: 50.0 / 3600, slaPer1k: 500, violSec: 5,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := quietConfig(0)
			cfg.SampleInterval = 4 * Second
			cfg.WarmUp = tc.warmUp
			_, r := mustRun(t, w, cfg, scripted{})
			if r.Pods != tc.pods || r.FailedAttempts != tc.failed || r.IgnoredMachineEvents != tc.ignore || len(r.Samples) != tc.samples {
				t.Errorf("pods %d, failed %d, ignored %d, samples %d; want %d, %d, %d, %d",
					r.Pods, r.FailedAttempts, r.IgnoredMachineEvents, len(r.Samples), tc.pods, tc.failed, tc.ignore, tc.samples)
			}
			if r.PendingLatency != tc.latency {
				t.Errorf("latency %+v; want %+v", r.PendingLatency, tc.latency)
			}
			for _, f := range []struct {
				name      string
				got, want float64
			}{
				{"mean cpu alloc", r.MeanCPUAlloc, tc.allocMean},
				{"node hours", r.NodeHours, tc.nodeHours},
				{"sla per 1k", r.SLAViolationsPer1k, tc.slaPer1k},
				{"violation seconds", r.ViolationSeconds, tc.violSec},
			} {
				if !approx(f.got, f.want) {
					t.Errorf("%s = %v; want %v", f.name, f.got, f.want)
				}
			}
			if r.Unschedulable != 0 || r.SimulatedSeconds != 60 {
				t.Errorf("unschedulable %d, ended at %v s; want 0 and 60", r.Unschedulable, r.SimulatedSeconds)
			}
		})
	}
}

// TestWarmUpLongerThanRun: a warm-up that outlasts the run leaves nothing to
// measure.
func TestWarmUpLongerThanRun(t *testing.T) {
	w := &Workload{
		Nodes: []NodeSpec{node("n", 4000, 4096)},
		Pods:  []PodSpec{pod("a", 0, 3000, 512, 0), pod("b", Second, 3000, 512, 0)},
		End:   20 * Second,
	}
	cfg := quietConfig(0)
	cfg.WarmUp = Hour
	_, r := mustRun(t, w, cfg, scripted{})
	if r.Pods != 0 || r.FailedAttempts != 0 || r.Unschedulable != 0 || r.NodeHours != 0 || len(r.Samples) != 0 || r.PendingLatency.Count != 0 {
		t.Errorf("pods %d, failed %d, unschedulable %d, node-hours %v, samples %d, latency %+v; want all zero",
			r.Pods, r.FailedAttempts, r.Unschedulable, r.NodeHours, len(r.Samples), r.PendingLatency)
	}
}
