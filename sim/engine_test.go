package sim

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// Fixture builders.

func node(name string, cpu, mem int64) NodeSpec {
	return NodeSpec{Name: name, Allocatable: Resources{CPU: cpu, Mem: mem}}
}

func pod(name string, at Time, cpu, mem int64, dur Time) PodSpec {
	return PodSpec{Name: name, Arrival: at, Requests: Resources{CPU: cpu, Mem: mem}, Duration: dur}
}

// quietConfig has no startup noise, a 10 s sample interval, and startup
// latency base.
func quietConfig(base Time) Config {
	c := DefaultConfig()
	c.StartupBase = base
	c.StartupNoise = 0
	c.SampleInterval = 10 * Second
	return c
}

// scripted places pods by name on a node index, first-fit for the others,
// and leaves every pod pending after its first attempt when noRetry is set.
type scripted struct {
	place   map[string]int
	noRetry bool
}

func (s scripted) Name() string { return "scripted" }

func (s scripted) Schedule(c *Cluster, p *Pod) int {
	if s.noRetry && p.Attempts > 0 {
		return PendingDecision
	}
	if i, ok := s.place[p.Spec.Name]; ok {
		return i
	}
	for i := range c.nodes {
		if Feasible(&c.nodes[i], p.Spec) {
			return i
		}
	}
	return PendingDecision
}

// randomPolicy picks a random feasible node, and now and then Pending or an
// out-of-range index, to exercise every path of Decide.
type randomPolicy struct{ r *rand.Rand }

func (randomPolicy) Name() string { return "random-test" }

func (s randomPolicy) Schedule(c *Cluster, p *Pod) int {
	switch k := s.r.IntN(20); k {
	case 0:
		return PendingDecision
	case 1:
		return len(c.nodes) + s.r.IntN(3) // invalid
	case 2:
		return s.r.IntN(len(c.nodes) + 1) // maybe infeasible
	}
	var feas []int
	for i := range c.nodes {
		if Feasible(&c.nodes[i], p.Spec) {
			feas = append(feas, i)
		}
	}
	if len(feas) == 0 {
		return PendingDecision
	}
	return feas[s.r.IntN(len(feas))]
}

func mustRun(t *testing.T, w *Workload, cfg Config, s Scheduler) (*Engine, *Result) {
	t.Helper()
	e, err := New(w, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for {
		p, ok := e.Next()
		if !ok {
			break
		}
		e.Decide(s.Schedule(e.Cluster(), p))
	}
	return e, e.Result()
}

func approx(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// TestInvariantsRandomized replays synthetic workloads with machine events,
// the autoscaler and a policy that also defers and picks invalid nodes, and
// checks the engine's invariants after every event and every decision.
func TestInvariantsRandomized(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		o := DefaultSyntheticOptions(12)
		o.Pods, o.Seed, o.Load = 1500, seed, 1.2
		w, err := Synthetic(o)
		if err != nil {
			t.Fatal(err)
		}
		w.Events = []MachineEvent{
			{At: 10 * Minute, Kind: MachineRemove, Node: NodeSpec{Name: "node-003"}},
			{At: 12 * Minute, Kind: MachineAdd, Node: node("late-1", 16000, 65536)},
			{At: 20 * Minute, Kind: MachineRemove, Node: NodeSpec{Name: "late-1"}},
			{At: 25 * Minute, Kind: MachineRemove, Node: NodeSpec{Name: "missing"}},
		}
		// A few DAG edges among batch pods.
		for i := 200; i < 400; i += 7 {
			w.Pods[i].After = []int32{int32(i - 3), int32(i - 5)}
		}
		cfg := DefaultConfig()
		cfg.Seed = seed
		cfg.Autoscaler.Enabled = true
		cfg.Autoscaler.Template = node("as", 32000, 131072)
		cfg.Autoscaler.MaxNodes = 16
		cfg.Autoscaler.ScaleDownCooldown = 2 * Minute
		cfg.Autoscaler.ScaleDownDelayAfterAdd = 2 * Minute
		e, err := New(w, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var failed error
		events := 0
		e.afterEvent = func() {
			events++
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
			failed = e.CheckInvariants()
		}
		if failed != nil {
			t.Fatalf("seed %d at %v: %v", seed, e.Now(), failed)
		}
		c := e.Counters()
		if c.Binds == 0 || c.Evictions == 0 || c.Invalid == 0 || c.Deferred == 0 || c.ScaleUps == 0 {
			t.Errorf("seed %d: a path was not exercised: %+v", seed, c)
		}
		t.Logf("seed %d: %d events, %+v", seed, events, c)
	}
}

func TestDeterminism(t *testing.T) {
	run := func(seed uint64) *Result {
		o := DefaultSyntheticOptions(10)
		o.Pods = 1200
		w, err := Synthetic(o)
		if err != nil {
			t.Fatal(err)
		}
		cfg := DefaultConfig()
		cfg.Seed = seed
		_, r := mustRun(t, w, cfg, scripted{})
		return r
	}
	a, b, c := run(7), run(7), run(8)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("same seed, different results:\n%+v\n%+v", a, b)
	}
	if reflect.DeepEqual(a, c) {
		t.Errorf("seeds 7 and 8 gave identical results")
	}
}

// TestMetricsThreeNodes checks every sampled metric on a hand-built cluster.
func TestMetricsThreeNodes(t *testing.T) {
	p3 := pod("p3", 0, 6000, 1024, 0)
	p3.Priority = High
	p3.Usage = []UsagePoint{{Use: Resources{CPU: 9000, Mem: 1024}}}
	p1 := pod("p1", 0, 2000, 4096, 0)
	p1.Usage = []UsagePoint{{Use: Resources{CPU: 1000, Mem: 2048}}}
	w := &Workload{
		Name:  "three",
		Nodes: []NodeSpec{node("A", 4000, 8192), node("B", 4000, 8192), node("C", 8000, 4096)},
		Pods:  []PodSpec{p1, pod("p2", 0, 1000, 6144, 0), p3},
		End:   10 * Second,
	}
	e, r := mustRun(t, w, quietConfig(0), scripted{place: map[string]int{"p1": 0, "p2": 1, "p3": 2}})
	if n := len(e.Samples()); n != 1 {
		t.Fatalf("%d samples; want 1 (at 10 s)", n)
	}
	s := e.Samples()[0]
	// Free: A 2000m/4096Mi, B 3000m/2048Mi, C 2000m/3072Mi; totals 7000m of
	// 16000m and 9216Mi of 20480Mi.
	// Typical pod (median, nearest rank of 3): 2000m and 4096Mi.
	// Stranded CPU: B and C have less than 4096Mi free: (3000+2000)/7000.
	// Stranded memory: no node has less than 2000m free: 0.
	// Node CPU utilisation: A 1000/4000, B 1000/4000, C min(9000,8000)/8000.
	want := Sample{
		At: 10 * Second, Nodes: 3, Pending: 0,
		CPUAlloc: 9000.0 / 16000, MemAlloc: 11264.0 / 20480,
		CPUUtil: 10000.0 / 16000, MemUtil: 9216.0 / 20480,
		Fragmentation: 1 - (7000.0/16000)/(9216.0/20480),
		StrandedCPU:   5000.0 / 7000, StrandedMem: 0,
		NodeCPUVar: (0.25*0.25+0.25*0.25+1)/3 - 0.5*0.5, // mean 0.5
	}
	want.NodeCPUStd = math.Sqrt(want.NodeCPUVar)
	fields := []struct {
		name      string
		got, want float64
	}{
		{"cpu alloc", s.CPUAlloc, want.CPUAlloc}, {"mem alloc", s.MemAlloc, want.MemAlloc},
		{"cpu util", s.CPUUtil, want.CPUUtil}, {"mem util", s.MemUtil, want.MemUtil},
		{"fragmentation", s.Fragmentation, want.Fragmentation},
		{"stranded cpu", s.StrandedCPU, want.StrandedCPU}, {"stranded mem", s.StrandedMem, want.StrandedMem},
		{"node cpu var", s.NodeCPUVar, want.NodeCPUVar}, {"node cpu std", s.NodeCPUStd, want.NodeCPUStd},
		// Summary: one sample, so means equal it.
		{"fragmentation mean", r.FragmentationMean, want.Fragmentation},
		{"fragmentation at peak", r.FragmentationAtPeak, want.Fragmentation},
		// p3 (high priority) is throttled on C for the whole 10 s: 1 of 3 pods.
		{"sla per 1k", r.SLAViolationsPer1k, 1000.0 / 3},
		{"violation seconds", r.ViolationSeconds, 10},
		// Three nodes for 10 s.
		{"node hours", r.NodeHours, 30.0 / 3600},
		{"pending latency", r.PendingLatencyMeanMs, 0},
	}
	for _, f := range fields {
		if !approx(f.got, f.want) {
			t.Errorf("%s = %v; want %v", f.name, f.got, f.want)
		}
	}
	if s.At != want.At || s.Nodes != 3 || s.Pending != 0 || r.Pods != 3 || r.Unschedulable != 0 {
		t.Errorf("sample %+v, result pods %d unschedulable %d", s, r.Pods, r.Unschedulable)
	}
}

// TestPendingLatency: p2 cannot fit until p1 finishes at 5 s; its backoff
// (1 s from its attempt at 1 s) has expired by then, so it binds at 5 s.
func TestPendingLatency(t *testing.T) {
	w := &Workload{
		Nodes: []NodeSpec{node("n", 4000, 4096)},
		Pods:  []PodSpec{pod("p1", 0, 4000, 1024, 5*Second), pod("p2", Second, 1000, 1024, Second)},
	}
	_, r := mustRun(t, w, quietConfig(0), scripted{})
	// Latencies 0 and 4000 ms: mean 2000; nearest-rank p50 = 0, p95 = 4000.
	l := r.PendingLatency
	if l.Count != 2 || l.Mean != 2000 || l.P50 != 0 || l.P95 != 4000 || l.P99 != 4000 {
		t.Errorf("latency %+v; want count 2, mean 2000, p50 0, p95 4000, p99 4000", l)
	}
	// The run ends when p2 finishes at 6 s.
	if r.SimulatedSeconds != 6 || r.FailedAttempts != 1 {
		t.Errorf("ended at %v s with %d failed attempts; want 6 s and 1", r.SimulatedSeconds, r.FailedAttempts)
	}
}

// TestStartupLatency: bound at 0, started after the 3 s startup, finished
// 5 s later; the DAG dependant c arrives when b finishes.
func TestStartupLatency(t *testing.T) {
	c := pod("c", 0, 1000, 1024, Second)
	c.After = []int32{1}
	w := &Workload{
		Nodes: []NodeSpec{node("n", 4000, 4096)},
		Pods:  []PodSpec{pod("a", 0, 1000, 1024, 5*Second), pod("b", 0, 1000, 1024, 2*Second), c},
	}
	e, r := mustRun(t, w, quietConfig(3*Second), scripted{})
	a, b, cc := e.Pod(0), e.Pod(1), e.Pod(2)
	if a.boundAt != 0 || a.startedAt != 3*Second || a.State != Finished {
		t.Errorf("a bound %v started %v state %v; want 0s, 3s, finished", a.boundAt, a.startedAt, a.State)
	}
	// b finishes at 3+2 = 5 s, so c arrives at 5 s, starts at 8 s, ends at 9 s.
	if b.startedAt != 3*Second || cc.arrivedAt != 5*Second || cc.startedAt != 8*Second {
		t.Errorf("b started %v, c arrived %v started %v; want 3s, 5s, 8s", b.startedAt, cc.arrivedAt, cc.startedAt)
	}
	if r.SimulatedSeconds != 9 {
		t.Errorf("run ended at %v s; want 9", r.SimulatedSeconds)
	}
}

func TestStartupNoise(t *testing.T) {
	w := &Workload{Nodes: []NodeSpec{node("n", 64000, 65536)}}
	for i := range 50 {
		w.Pods = append(w.Pods, pod("p", 0, 100, 100, Second))
		_ = i
	}
	cfg := quietConfig(2 * Second)
	cfg.StartupNoise = Second
	e, _ := mustRun(t, w, cfg, scripted{})
	distinct := map[Time]bool{}
	for i := range w.Pods {
		s := e.Pod(PodID(i)).startedAt
		if s < 0 {
			t.Fatalf("negative start %v", s)
		}
		distinct[s] = true
	}
	if len(distinct) < 40 {
		t.Errorf("only %d distinct start times among 50 noisy starts", len(distinct))
	}
}

// TestOOMEvictionOrder: actual memory 4096+2048+2304+2560 = 11008 MiB on an
// 8192 MiB node; shedding 2816 takes the low-priority pods most over their
// requests first: d (512 over, 2560) then c (256 over, 2304). a is more over
// (2048) but high priority; b is not over at all.
func TestOOMEvictionOrder(t *testing.T) {
	mk := func(name string, prio Priority, use int64) PodSpec {
		p := pod(name, 0, 1000, 2048, 0)
		p.Priority = prio
		p.Usage = []UsagePoint{{Use: Resources{CPU: 1000, Mem: use}}}
		return p
	}
	w := &Workload{
		Nodes: []NodeSpec{node("n", 8000, 8192)},
		Pods:  []PodSpec{mk("a", High, 4096), mk("b", Low, 2048), mk("c", Low, 2304), mk("d", Low, 2560)},
		End:   10 * Second,
	}
	e, r := mustRun(t, w, quietConfig(0), scripted{noRetry: true})
	want := []PodState{Running, Running, Pending, Pending}
	for i, s := range want {
		if got := e.Pod(PodID(i)).State; got != s {
			t.Errorf("pod %s state %v; want %v", w.Pods[i].Name, got, s)
		}
	}
	if r.Evictions != 2 || r.SLAViolationsPer1k != 0 {
		t.Errorf("evictions %d, sla %v; want 2 and 0", r.Evictions, r.SLAViolationsPer1k)
	}
}

// TestPreemption: h fits nowhere. On n0, reprieving a0 (1500m) leaves 500m,
// so a1 and a2 are victims (2); on n1, b0 is reprieved and b1 is the only
// victim, so h preempts b1 on n1.
func TestPreemption(t *testing.T) {
	h := pod("h", Second, 2000, 1024, 0)
	h.Priority = High
	w := &Workload{
		Nodes: []NodeSpec{node("n0", 4000, 8192), node("n1", 4000, 8192)},
		Pods: []PodSpec{pod("a0", 0, 1500, 1024, 0), pod("a1", 0, 1500, 1024, 0), pod("a2", 0, 1000, 1024, 0),
			pod("b0", 0, 2000, 1024, 0), pod("b1", 0, 2000, 1024, 0), h},
		End: 10 * Second,
	}
	place := map[string]int{"a0": 0, "a1": 0, "a2": 0, "b0": 1, "b1": 1}
	e, r := mustRun(t, w, quietConfig(0), scripted{place: place, noRetry: true})
	if r.Preemptions != 1 {
		t.Fatalf("preemptions %d; want 1", r.Preemptions)
	}
	if got := e.Pod(4).State; got != Pending {
		t.Errorf("b1 state %v; want pending", got)
	}
	if hp := e.Pod(5); hp.State != Running || hp.Node != 1 {
		t.Errorf("h state %v on node %d; want running on n1", hp.State, hp.Node)
	}
}

// TestScaleUpThenDown follows the autoscaler by hand: p1 is unschedulable
// from 0 s; the scan at 10 s sees it 10 s old and provisions a node, ready
// at 70 s; p1 binds there at once and runs until 370 s. The new node is
// under the threshold from the scan at 370 s and is removed after the 600 s
// cool-down, at 970 s.
func TestScaleUpThenDown(t *testing.T) {
	w := &Workload{
		Nodes: []NodeSpec{node("n0", 4000, 4096)},
		Pods:  []PodSpec{pod("p0", 0, 3000, 1024, 30*Minute), pod("p1", 0, 3000, 1024, 5*Minute)},
		End:   1200 * Second,
	}
	cfg := quietConfig(0)
	cfg.Autoscaler.Enabled = true
	cfg.Autoscaler.Template = node("as", 4000, 4096)
	cfg.Autoscaler.MaxNodes = 3
	cfg.Autoscaler.ProvisionNoise = 0
	_, r := mustRun(t, w, cfg, scripted{})
	if r.ScaleUps != 1 || r.ScaleDowns != 1 {
		t.Fatalf("scale-ups %d, scale-downs %d; want 1 and 1", r.ScaleUps, r.ScaleDowns)
	}
	// p1 waited 70 s; node-seconds: n0 1200 + the new node 970-70 = 900.
	if r.HighPrioLatency.Count != 0 || r.LowPrioLatency.P99 != 70000 {
		t.Errorf("latency %+v; want p1's 70000 ms as the worst", r.LowPrioLatency)
	}
	if !approx(r.NodeHours, 2100.0/3600) {
		t.Errorf("node hours %v; want %v", r.NodeHours, 2100.0/3600)
	}
	if r.NodesMax != 2 || r.NodesMin != 1 {
		t.Errorf("nodes %d..%d; want 1..2", r.NodesMin, r.NodesMax)
	}
}

// TestTaintBlocks: the only node with room is tainted NoSchedule, so a pod
// without the toleration is unschedulable there and choosing it is invalid;
// a pod with the toleration is placed.
func TestTaintBlocks(t *testing.T) {
	tainted := node("t", 4000, 4096)
	tainted.Taints = []Taint{{Key: "dedicated", Value: "online", Effect: NoSchedule}}
	tol := pod("tol", 0, 1000, 1024, 0)
	tol.Tolerations = []Toleration{{Key: "dedicated", Value: "online", Effect: NoSchedule}}
	w := &Workload{
		Nodes: []NodeSpec{tainted, node("full", 1000, 1024)},
		Pods:  []PodSpec{pod("filler", 0, 1000, 1024, 0), pod("plain", 0, 1000, 1024, 0), tol},
		End:   5 * Second,
	}
	e, err := New(w, quietConfig(0))
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		node int
		want Outcome
	}{
		{"filler", 1, OutcomeBound},
		{"plain", 0, OutcomeInvalid}, // tainted node refused
	}
	for _, s := range steps {
		p, ok := e.Next()
		if !ok || p.Spec.Name != s.name {
			t.Fatalf("next pod %v; want %s", p, s.name)
		}
		if got := e.Decide(s.node); got != s.want {
			t.Errorf("%s on %d: %v; want %v", s.name, s.node, got, s.want)
		}
	}
	p, _ := e.Next()
	if p.Spec.Name != "tol" || e.Decide(0) != OutcomeBound {
		t.Errorf("tolerating pod not bound on the tainted node")
	}
	// plain comes back after its backoff; nothing is feasible for it now.
	p, _ = e.Next()
	if p.Spec.Name != "plain" || e.Decide(PendingDecision) != OutcomeUnschedulable {
		t.Errorf("plain pod not unschedulable")
	}
}

func TestDecideAnyInteger(t *testing.T) {
	w := &Workload{Nodes: []NodeSpec{node("n", 4000, 4096)}, Pods: []PodSpec{pod("p", 0, 1000, 1024, Second)}}
	e, err := New(w, quietConfig(0))
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Decide(0); got != OutcomeNoPod {
		t.Errorf("decide before next: %v; want no-pod", got)
	}
	for _, bad := range []int{math.MinInt, -2, 1, 7, math.MaxInt} {
		if _, ok := e.Next(); !ok {
			t.Fatal("run ended early")
		}
		if got := e.Decide(bad); got != OutcomeInvalid {
			t.Errorf("decide(%d) = %v; want invalid", bad, got)
		}
	}
	if c := e.Counters(); c.Invalid != 5 {
		t.Errorf("invalid count %d; want 5", c.Invalid)
	}
}

func TestMachineEvents(t *testing.T) {
	w := &Workload{
		Nodes: []NodeSpec{node("a", 4000, 4096)},
		Pods:  []PodSpec{pod("p", 0, 1000, 1024, 0), pod("q", 2*Second, 1000, 1024, 0)},
		Events: []MachineEvent{
			{At: Second, Kind: MachineAdd, Node: node("b", 8000, 8192)},
			{At: 3 * Second, Kind: MachineRemove, Node: NodeSpec{Name: "a"}},
		},
		End: 10 * Second,
	}
	e, r := mustRun(t, w, quietConfig(0), scripted{})
	// p goes to a (the only node), q to a (first fit); removing a at 3 s
	// evicts both and they move to b.
	if r.Evictions != 2 || e.Cluster().Len() != 1 || e.Cluster().Nodes()[0].Spec.Name != "b" {
		t.Errorf("evictions %d, nodes %d; want 2 and only b", r.Evictions, e.Cluster().Len())
	}
	if e.Cluster().Nodes()[0].Pods != 2 {
		t.Errorf("b has %d pods; want 2", e.Cluster().Nodes()[0].Pods)
	}
}

func TestRejectsBadInput(t *testing.T) {
	cases := []struct {
		name string
		w    Workload
		cfg  func(*Config)
	}{
		{"negative request", Workload{Pods: []PodSpec{pod("p", 0, -1, 1, 0)}}, nil},
		{"node without capacity", Workload{Nodes: []NodeSpec{node("n", 0, 1)}}, nil},
		{"duplicate node", Workload{Nodes: []NodeSpec{node("n", 1, 1), node("n", 1, 1)}}, nil},
		{"dependency out of range", Workload{Pods: []PodSpec{{Name: "p", After: []int32{3}}}}, nil},
		{"zero sample interval", Workload{}, func(c *Config) { c.SampleInterval = 0 }},
		{"negative warm-up", Workload{}, func(c *Config) { c.WarmUp = -1 }},
		{"max below min", Workload{}, func(c *Config) {
			c.Autoscaler.Enabled = true
			c.Autoscaler.Template = node("t", 1, 1)
			c.Autoscaler.MinNodes, c.Autoscaler.MaxNodes = 5, 2
		}},
	}
	for _, tc := range cases {
		cfg := DefaultConfig()
		if tc.cfg != nil {
			tc.cfg(&cfg)
		}
		if _, err := New(&tc.w, cfg); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

func TestRunCancelled(t *testing.T) {
	w, err := Synthetic(DefaultSyntheticOptions(5))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, w, DefaultConfig(), scripted{}); err == nil {
		t.Error("cancelled run returned no error")
	}
}

// TestSelectKth: selection agrees with sorting on random slices with many
// ties, for every rank.
func TestSelectKth(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for trial := range 200 {
		n := 1 + r.IntN(60)
		v := make([]int64, n)
		for i := range v {
			v[i] = r.Int64N(int64(1 + trial%7))
		}
		sorted := slices.Clone(v)
		slices.Sort(sorted)
		for k := range n {
			if got := selectKth(slices.Clone(v), k); got != sorted[k] {
				t.Fatalf("select %d of %v = %d; want %d", k, v, got, sorted[k])
			}
		}
	}
}

// TestTaintSummaries checks the per-node taint summaries that the filters
// and scores rely on, and MayTolerate.
func TestTaintSummaries(t *testing.T) {
	soft := Taint{Key: "a", Effect: PreferNoSchedule}
	c := NewCluster(0,
		Node{Alloc: Resources{CPU: 1, Mem: 1}, Spec: &NodeSpec{Taints: []Taint{soft, {Key: "b", Effect: PreferNoSchedule}, {Key: "c", Effect: NoExecute}}}},
		Node{Alloc: Resources{CPU: 1, Mem: 1}, Spec: &NodeSpec{Taints: []Taint{{Key: "c", Effect: NoSchedule}}}},
		Node{Alloc: Resources{CPU: 1, Mem: 1}})
	n := c.Nodes()
	if n[0].SoftTaints != 2 || !n[0].HardTaints || n[1].SoftTaints != 0 || !n[1].HardTaints || n[2].SoftTaints != 0 || n[2].HardTaints {
		t.Fatalf("summaries: %+v", n)
	}
	none := &PodSpec{}
	if got := CountIntolerablePreferNoSchedule(&n[0], none); got != 2 {
		t.Errorf("count without tolerations = %d; want 2", got)
	}
	cases := []struct {
		tol  Toleration
		e    TaintEffect
		want bool
	}{
		{Toleration{Key: "a", Effect: NoSchedule}, PreferNoSchedule, false},
		{Toleration{Key: "a", Effect: NoSchedule}, NoSchedule, true},
		{Toleration{Key: "a"}, PreferNoSchedule, true}, // empty effect: every effect
		{Toleration{Exists: true, Effect: NoExecute}, NoSchedule, false},
	}
	for _, tc := range cases {
		if got := MayTolerate(&PodSpec{Tolerations: []Toleration{tc.tol}}, tc.e); got != tc.want {
			t.Errorf("MayTolerate(%+v, %v) = %v; want %v", tc.tol, tc.e, got, tc.want)
		}
	}
	if MayTolerate(none, NoSchedule) {
		t.Error("a pod without tolerations may tolerate")
	}
}
