package env

import (
	"math"
	"testing"

	"github.com/kubesim/kubesim/sim"
)

// quietConfig is a two-node configuration without noise, autoscaler or
// preemption, pods starting the moment they are bound, and a reference node
// of 4000m/8192Mi. The weights are distinct so that every term shows.
func quietConfig() Config {
	cfg := DefaultConfig()
	cfg.Sim.StartupBase, cfg.Sim.StartupNoise = 0, 0
	cfg.Sim.SampleInterval = 10 * sim.Minute
	cfg.Sim.Autoscaler.Enabled = false
	cfg.Sim.Preemption = false
	cfg.MinNodes, cfg.MaxNodes = 2, 2
	cfg.Reference = Reference{CPU: 4000, Mem: 8192}
	cfg.Reward = Reward{
		Balance: 1, Fragment: 2, Violation: 3, Failure: 4, Pending: 0.5,
		BalanceForm: Bounded, BalanceOf: Used, FragmentMix: 0.25,
	}
	return cfg
}

// twoNodes is the hand-built case: node A 4000m/8192Mi in zone a, node B
// 8000m/4096Mi without a zone; three long-running pods
//
//	p0 at 0 s: 2000m/4096Mi, batch, uses its requests
//	p1 at 1 s: 4000m/1024Mi, online, uses 9000m (more than B's 8000m)
//	p2 at 2 s: 1000m/1024Mi, batch
//
// and a window ending at 100 s. The typical pod (median, nearest rank of 3)
// is 2000m (of 1000, 2000, 4000) and 1024Mi (of 1024, 1024, 4096).
func twoNodes() *sim.Workload {
	a := sim.NodeSpec{Name: "A", Allocatable: sim.Resources{CPU: 4000, Mem: 8192},
		Labels: map[string]string{sim.LabelZone: "a"}}
	b := sim.NodeSpec{Name: "B", Allocatable: sim.Resources{CPU: 8000, Mem: 4096}}
	p1 := sim.PodSpec{Name: "p1", Arrival: sim.Second, Requests: sim.Resources{CPU: 4000, Mem: 1024},
		Priority: sim.High, Usage: []sim.UsagePoint{{Use: sim.Resources{CPU: 9000, Mem: 1024}}}}
	return &sim.Workload{
		Name:  "two-nodes",
		Nodes: []sim.NodeSpec{a, b},
		Pods: []sim.PodSpec{
			{Name: "p0", Requests: sim.Resources{CPU: 2000, Mem: 4096}},
			p1,
			{Name: "p2", Arrival: 2 * sim.Second, Requests: sim.Resources{CPU: 1000, Mem: 1024}},
		},
		End: 100 * sim.Second,
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

// TestRewardTwoNodes steps the two-node case by hand. Weights: w1 = 1,
// w2 = 2, w3 = 3, w4 = 4, wp = 0.5, fragment_mix m = 0.25; bounded balance
// 1 - s/0.5 over actual CPU use. S is the mean stranded share, F the
// fragmentation ratio; "free" is summed allocatable minus requested out of
// 12000m/12288Mi.
func TestRewardTwoNodes(t *testing.T) {
	steps := []struct {
		name    string
		action  int
		outcome sim.Outcome
		at      sim.Time // time of the returned observation
		// unweighted terms
		balance, stranded, frag, violation, failure, pending float64
		reward                                               float64
		terminated                                           bool
	}{
		{
			// p0 on A. Before: nothing requested, S = 0, F = 0. After: free
			// 10000m/8192Mi; no node has less than 1024Mi or 2000m free, so
			// S = 0; F = 1 - (8192/12288)/(10000/12000) = 1 - (2/3)/(5/6) = 0.2.
			// p0 starts at once; the next decision is p1 at 1 s, where CPU
			// use is A 0.5, B 0: std 0.25, balance 1 - 0.25/0.5 = 0.5.
			// R_fragment = 0.75*0 + 0.25*(0 - 0.2) = -0.05;
			// reward = 0.5 + 2*(-0.05) = 0.4.
			name: "p0 on A", action: 0, outcome: sim.OutcomeBound, at: sim.Second,
			balance: 0.5, stranded: 0, frag: -0.2, reward: 0.4,
		},
		{
			// p1 on A: A has 2000m free, p1 asks 4000m, so the mask forbids
			// it: a failure, nothing changes, p1 retries after its 1 s
			// backoff, before p2 (higher priority) at 2 s. Balance still 0.5.
			// reward = 0.5 - 4*1 = -3.5.
			name: "p1 on A (masked)", action: 0, outcome: sim.OutcomeInvalid, at: 2 * sim.Second,
			balance: 0.5, failure: 1, reward: -3.5,
		},
		{
			// p1 on B. Before: free 10000m/8192Mi, S = 0, F = 0.2. After:
			// free 6000m/7168Mi; still no node under 1024Mi or 2000m free,
			// S = 0; F = 1 - (6000/12000)/(7168/12288) = 1 - 0.5/(7/12) = 1/7.
			// p1 starts using 9000m > 8000m on B: throttled, an SLA
			// violation. Next is p2 at 2 s; CPU use A 0.5, B min(9000,
			// 8000)/8000 = 1: std 0.25, balance 0.5.
			// R_fragment = 0.25*(0.2 - 1/7) = 0.25*2/35 = 1/70;
			// reward = 0.5 + 2/70 - 3*1.
			name: "p1 on B", action: 1, outcome: sim.OutcomeBound, at: 2 * sim.Second,
			balance: 0.5, frag: 0.2 - 1.0/7, violation: 1, reward: 0.5 + 2.0/70 - 3,
		},
		{
			// p2 deferred although A and B fit it: a deferral; it returns
			// after its 1 s backoff at 3 s. reward = 0.5 - 0.5*1 = 0.
			name: "p2 pending", action: 2, outcome: sim.OutcomeDeferred, at: 3 * sim.Second,
			balance: 0.5, pending: 1, reward: 0,
		},
		{
			// p2 on A. Before: free 6000m/7168Mi, S = 0, F = 1/7. After: A
			// has 1000m/3072Mi free, B 4000m/3072Mi; A is short of the
			// typical 2000m, so its 3072Mi are stranded: stranded memory
			// 3072/6144 = 0.5, stranded CPU 0, S = 0.25;
			// F = 1 - (5000/12000)/(6144/12288) = 1 - (5/12)/(1/2) = 1/6.
			// No pod is left: the run ends at 100 s with CPU use A 0.75, B 1:
			// std 0.125, balance 0.75.
			// R_fragment = 0.75*(0 - 0.25) + 0.25*(1/7 - 1/6);
			// reward = 0.75 + 2*R_fragment.
			name: "p2 on A", action: 0, outcome: sim.OutcomeBound, at: 100 * sim.Second,
			balance: 0.75, stranded: -0.25, frag: 1.0/7 - 1.0/6,
			reward: 0.75 + 2*(0.75*-0.25+0.25*(1.0/7-1.0/6)), terminated: true,
		},
	}
	e, err := New(quietConfig(), Fixed{twoNodes()})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.Reset(1); err != nil {
		t.Fatal(err)
	}
	var total float64
	for _, s := range steps {
		_, r, term, trunc, info := e.Step(s.action)
		total += s.reward
		terms := []struct {
			name      string
			got, want float64
		}{
			{"reward", r, s.reward},
			{"balance", info.Balance, s.balance},
			{"stranded", info.Stranded, s.stranded},
			{"frag", info.Frag, s.frag},
			{"fragment", info.Fragment, 0.75*s.stranded + 0.25*s.frag},
			{"violation", info.Violation, s.violation},
			{"failure", info.Failure, s.failure},
			{"pending", info.Pending, s.pending},
		}
		for _, tt := range terms {
			if !near(tt.got, tt.want) {
				t.Errorf("%s: %s = %v; want %v", s.name, tt.name, tt.got, tt.want)
			}
		}
		if info.Outcome != s.outcome || info.Time != s.at || term != s.terminated || trunc {
			t.Errorf("%s: outcome %v at %v, terminated %v truncated %v; want %v at %v, terminated %v",
				s.name, info.Outcome, info.Time, term, trunc, s.outcome, s.at, s.terminated)
		}
		if s.terminated {
			if info.Episode == nil {
				t.Fatalf("%s: no episode summary at the end", s.name)
			}
			// The return is the sum of the rewards above: 0.4 - 3.5 +
			// (0.5 + 1/35 - 3) + 0 + (0.75 - 0.375 - 1/84) = -125/24.
			if !near(info.Episode.Return, total) || !near(total, -125.0/24) || info.Episode.Steps != 5 {
				t.Errorf("episode return %v over %d steps; want %v = -125/24 over 5",
					info.Episode.Return, info.Episode.Steps, total)
			}
		}
	}
}

// TestObsTwoNodes checks the observation of the two-node case by hand at
// the first decision (p0 on an empty cluster) and at p1's retry.
func TestObsTwoNodes(t *testing.T) {
	e, err := New(quietConfig(), Fixed{twoNodes()})
	if err != nil {
		t.Fatal(err)
	}
	obs, _, err := e.Reset(1)
	if err != nil {
		t.Fatal(err)
	}
	// p0: 2000m/4096Mi of a 4000m/8192Mi reference; batch, long-running
	// (lifetime 1, known: level 1), first attempt, arrived now. Queue: p0
	// alone (ln 2/ln 1001), Q/(Q+F) = 2000/14000 and 4096/16384, rank 1/2;
	// one arrival at 0: 1/5 per minute over 2 nodes, ln 1.1/ln 11.
	// A (4000m/8192Mi) empty: after placing p0, 0.5 and 0.5; size 1, 1.
	// B (8000m/4096Mi) empty: after placing p0, 0.25 and 1; size 2, 0.5.
	check(t, "p0", obs,
		[]float64{0.5, 0.5, 0, 1, 1, 1, 0, 0,
			math.Log(2) / math.Log(1001), 1.0 / 7, 0.25, 0.5, math.Log(1.1) / math.Log(11)},
		[][]float64{
			{0, 0, 0, 0, 0.5, 0.5, 0, 0, 0, 0, 0, 1, 1, 1},
			{0, 0, 0, 0, 0.25, 1, 0, 0, 0, 0, 0, 1, 2, 0.5},
		},
		[]int32{0, -1}, []bool{true, true, true})

	e.Step(0) // p0 on A
	obs, _, _, _, _ = e.Step(0)
	// p1 (4000m/1024Mi, online) at 2 s, after one failed attempt at 1 s:
	// attempts ln 2/ln 17, waited 1 s: ln 2/ln 3601. Queue: p1 and p2
	// (arrived at 2 s): ln 3/ln 1001; Q = 5000m/2048Mi, F = 10000m/8192Mi:
	// 1/3 and 1/5; p2's dominant share 1/4 is below p1's 1: rank 1.
	// Arrivals at 0, 1 and 2 s decayed over 5 minutes, per minute, per node.
	// A holds p0 (2000m/4096Mi, using as much): ratios 0.5; after p1
	// (6000/4000, 5120/8192) = 1.5, 0.625; one pod of 110; p1 does not fit.
	// B is empty: after p1, 0.5 and 0.25.
	check(t, "p1 retry", obs,
		[]float64{1, 0.125, 1, 1, 1, 1, math.Log(2) / math.Log(17), math.Log(2) / math.Log(3601),
			math.Log(3) / math.Log(1001), 1.0 / 3, 0.2, 1,
			math.Log1p((1+math.Exp(-1.0/300)+math.Exp(-2.0/300))/5/2) / math.Log(11)},
		[][]float64{
			{0.5, 0.5, 0.5, 0.5, 1.5, 0.625, 1.0 / 110, 0, 0, 0, 0, 0, 1, 1},
			{0, 0, 0, 0, 0.5, 0.25, 0, 0, 0, 0, 0, 1, 2, 0.5},
		},
		[]int32{0, -1}, []bool{false, true, true})
}

func check(t *testing.T, name string, obs Obs, pod []float64, nodes [][]float64, dom []int32, mask []bool) {
	t.Helper()
	if obs.N != len(nodes) || len(obs.Nodes) != obs.N*NodeFeatures || len(obs.Domain) != obs.N || len(obs.Mask) != obs.N+1 {
		t.Fatalf("%s: N %d with %d node values, %d domains, %d mask entries; want N %d",
			name, obs.N, len(obs.Nodes), len(obs.Domain), len(obs.Mask), len(nodes))
	}
	for k := range PodFeatures {
		if !near(obs.Pod[k], pod[k]) {
			t.Errorf("%s: pod feature %d = %v; want %v", name, k, obs.Pod[k], pod[k])
		}
	}
	for i, want := range nodes {
		for k, w := range want {
			if got := obs.Row(i)[k]; !near(got, w) {
				t.Errorf("%s: node %d feature %d = %v; want %v", name, i, k, got, w)
			}
		}
		if obs.Domain[i] != dom[i] {
			t.Errorf("%s: node %d domain %d; want %d", name, i, obs.Domain[i], dom[i])
		}
	}
	for i, w := range mask {
		if obs.Mask[i] != w {
			t.Errorf("%s: mask[%d] = %v; want %v", name, i, obs.Mask[i], w)
		}
	}
}

// TestBalanceForms: std 0 gives 1 (bounded) and 100 (inverse); std 0.25
// gives 0.5 and 1/0.26; std 0.5, the largest for values in [0, 1], gives 0
// and 1/0.51.
func TestBalanceForms(t *testing.T) {
	cases := []struct {
		name string
		form BalanceForm
		std  float64
		want float64
	}{
		{"bounded even", Bounded, 0, 1},
		{"bounded quarter", Bounded, 0.25, 0.5},
		{"bounded worst", Bounded, 0.5, 0},
		{"inverse even", Inverse, 0, 100},
		{"inverse quarter", Inverse, 0.25, 1 / 0.26},
		{"inverse worst", Inverse, 0.5, 1 / 0.51},
	}
	for _, c := range cases {
		if got := balance(c.form, c.std); !near(got, c.want) {
			t.Errorf("%s: balance(%v) = %v; want %v", c.name, c.std, got, c.want)
		}
	}
}

// TestBalanceSignal: with a 10 s startup latency, p0 has not started at
// p1's decision (1 s): actual use is 0 everywhere (std 0, balance 1), while
// requested CPU is A 0.5, B 0 (std 0.25, balance 0.5).
func TestBalanceSignal(t *testing.T) {
	cases := []struct {
		name   string
		signal BalanceSignal
		want   float64
	}{
		{"used", Used, 1},
		{"requested", Requested, 0.5},
	}
	for _, c := range cases {
		cfg := quietConfig()
		cfg.Sim.StartupBase = 10 * sim.Second
		cfg.Reward.BalanceOf = c.signal
		e, err := New(cfg, Fixed{twoNodes()})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.Reset(1); err != nil {
			t.Fatal(err)
		}
		if _, _, _, _, info := e.Step(0); !near(info.Balance, c.want) {
			t.Errorf("%s: balance %v; want %v", c.name, info.Balance, c.want)
		}
	}
}

// TestObsFlags checks the taint and affinity columns and the mask on a
// hand-built cluster: n0 is tainted NoSchedule, n1 PreferNoSchedule, n2
// holds its one allowed pod. Pod q requires zone z0 and prefers z1 (weight
// 30) and z0 (weight 10), tolerating nothing.
func TestObsFlags(t *testing.T) {
	zone := func(z, r string) map[string]string { return map[string]string{sim.LabelZone: z, sim.LabelRack: r} }
	res := sim.Resources{CPU: 4000, Mem: 8192}
	nodes := []sim.NodeSpec{
		{Name: "n0", Allocatable: res, Labels: zone("z0", "r0"),
			Taints: []sim.Taint{{Key: "dedicated", Value: "online", Effect: sim.NoSchedule}}},
		{Name: "n1", Allocatable: res, Labels: zone("z1", "r1"),
			Taints: []sim.Taint{{Key: "spot", Value: "true", Effect: sim.PreferNoSchedule}}},
		{Name: "n2", Allocatable: res, Labels: zone("z0", "r2"), MaxPods: 1},
	}
	in := func(z string) sim.Term { return sim.Term{{Key: sim.LabelZone, Op: sim.OpIn, Values: []string{z}}} }
	q := sim.PodSpec{Name: "q", Arrival: sim.Second, Requests: sim.Resources{CPU: 1000, Mem: 1024},
		Affinity: &sim.Affinity{
			Required:  []sim.Term{in("z0")},
			Preferred: []sim.PreferredTerm{{Weight: 30, Term: in("z1")}, {Weight: 10, Term: in("z0")}},
		}}
	w := &sim.Workload{
		Nodes: nodes,
		Pods:  []sim.PodSpec{{Name: "filler", Requests: sim.Resources{CPU: 1000, Mem: 1024}}, q},
		End:   10 * sim.Second,
	}
	cases := []struct {
		name   string
		domain DomainLevel
		want   []int32
	}{
		{"zone", Zone, []int32{0, 1, 0}},
		{"rack", Rack, []int32{0, 1, 2}},
	}
	for _, c := range cases {
		cfg := quietConfig()
		cfg.ForcedSteps = true // node 2 fits nowhere for this pod: keep the forced observation
		cfg.Domain = c.domain
		e, err := New(cfg, Fixed{w})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.Reset(1); err != nil {
			t.Fatal(err)
		}
		obs, _, _, _, _ := e.Step(2) // filler on n2
		// Columns Pods, Taint, SoftTaint, AffinityMiss, AffinityPref, Fits:
		// n0: hard taint not tolerated, zone z0 matches, 10/40 preferred.
		// n1: soft taint, zone z1 fails the requirement, 30/40 preferred.
		// n2: one pod of one, z0, 10/40 preferred; full, so q does not fit.
		want := [][]float64{
			{0, 1, 0, 0, 0.25, 0},
			{0, 0, 1, 1, 0.75, 0},
			{1, 0, 0, 0, 0.25, 0},
		}
		for i, row := range want {
			got := obs.Row(i)[NodePods : NodeFits+1]
			for k := range row {
				if !near(got[k], row[k]) {
					t.Errorf("%s: node %d columns Pods..Fits = %v; want %v", c.name, i, got, row)
					break
				}
			}
			if obs.Mask[i] || obs.Domain[i] != c.want[i] {
				t.Errorf("%s: node %d mask %v domain %d; want false, %d", c.name, i, obs.Mask[i], obs.Domain[i], c.want[i])
			}
		}
	}
}
