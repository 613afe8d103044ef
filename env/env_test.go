package env

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/kubesim/kubesim/sim"
)

// randomAction is a random policy that also misbehaves: mostly an allowed
// action (uniform over the mask), sometimes any node or Pending, sometimes
// an integer outside [0, N].
func randomAction(r *rand.Rand, obs Obs) int {
	switch k := r.IntN(20); {
	case k == 0:
		return obs.N
	case k == 1:
		return [...]int{-1, -2, obs.N + 1, math.MaxInt, math.MinInt}[r.IntN(5)]
	case k <= 3:
		return r.IntN(obs.N + 1)
	}
	return allowedAction(r, obs)
}

// allowedAction picks uniformly among the actions the mask allows.
func allowedAction(r *rand.Rand, obs Obs) int {
	n := 0
	for _, ok := range obs.Mask {
		if ok {
			n++
		}
	}
	k := r.IntN(n)
	for i, ok := range obs.Mask {
		if ok {
			if k == 0 {
				return i
			}
			k--
		}
	}
	return obs.N
}

// busyConfig is a small, overloaded cluster with an eager autoscaler, so
// that scale-ups, scale-downs, preemptions and evictions all happen within
// a short episode.
func busyConfig(nodes int) Config {
	cfg := DefaultConfig()
	cfg.MinNodes, cfg.MaxNodes = nodes, nodes
	cfg.Workload.PodsPerNode = 30
	cfg.Workload.Load = 1.3
	cfg.Sim.Autoscaler.ScaleDownCooldown = 2 * sim.Minute
	cfg.Sim.Autoscaler.ScaleDownDelayAfterAdd = 2 * sim.Minute
	return cfg
}

// fullStats recomputes the cluster sums from scratch.
func fullStats(c *sim.Cluster, typical sim.Resources) clusterStats {
	var s clusterStats
	for i := range c.Nodes() {
		s.add(&c.Nodes()[i], typical, 1)
	}
	return s
}

// checkObs verifies an observation against the engine it came from: shapes,
// N, failure domains, finite features, and the mask and Fits column against
// sim.Feasible for the pod awaiting a decision (nil at the end).
func checkObs(t *testing.T, e *Env, obs Obs, pod *sim.Pod) {
	t.Helper()
	nodes := e.eng.Cluster().Nodes()
	if obs.N != len(nodes) || len(obs.Nodes) != obs.N*NodeFeatures || len(obs.Domain) != obs.N ||
		len(obs.Mask) != obs.N+1 || len(obs.Pod) != PodFeatures {
		t.Fatalf("at %v: N %d, %d nodes in the cluster, %d node values, %d domains, %d mask entries, %d pod values",
			e.eng.Now(), obs.N, len(nodes), len(obs.Nodes), len(obs.Domain), len(obs.Mask), len(obs.Pod))
	}
	if !obs.Mask[obs.N] {
		t.Fatalf("at %v: Pending masked out", e.eng.Now())
	}
	for i := range nodes {
		want := pod != nil && sim.Feasible(&nodes[i], pod.Spec)
		if obs.Mask[i] != want || (obs.Row(i)[NodeFits] == 1) != want {
			t.Fatalf("at %v: node %d (%s): mask %v, fits %v; sim.Feasible %v",
				e.eng.Now(), i, nodes[i].Spec.Name, obs.Mask[i], obs.Row(i)[NodeFits], want)
		}
		if obs.Domain[i] != nodes[i].Domain[0] {
			t.Fatalf("at %v: node %d domain %d; want %d", e.eng.Now(), i, obs.Domain[i], nodes[i].Domain[0])
		}
	}
	for k, v := range obs.Nodes {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			t.Fatalf("at %v: node %d feature %d = %v", e.eng.Now(), k/NodeFeatures, k%NodeFeatures, v)
		}
	}
	for k, v := range obs.Pod {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			t.Fatalf("at %v: pod feature %d = %v", e.eng.Now(), k, v)
		}
	}
}

// TestRandomEpisodes runs a misbehaving random policy through full episodes
// at several cluster sizes with the autoscaler on, checking after every step
// the observation against the engine (shapes, mask = sim.Feasible), the
// incremental fragmentation sums against a full recount, the simulator's
// invariants (every few steps), and at the end the environment's measures
// against the simulator's final metrics sample.
func TestRandomEpisodes(t *testing.T) {
	sizes := []struct {
		name  string
		nodes int
	}{
		{"nodes=2", 2},
		{"nodes=7", 7},
		{"nodes=25", 25},
	}
	var scaleUps, scaleDowns, preemptions, resized int64
	for _, sz := range sizes {
		e, err := New(busyConfig(sz.nodes), nil)
		if err != nil {
			t.Fatal(err)
		}
		e.afterDecide = func(after clusterStats) {
			if full := fullStats(e.eng.Cluster(), e.typical); after != full {
				t.Fatalf("%s at %v: incremental sums %+v; full recount %+v", sz.name, e.eng.Now(), after, full)
			}
		}
		r := rand.New(rand.NewPCG(uint64(sz.nodes), 3))
		obs, _, err := e.Reset(uint64(sz.nodes))
		for ep := range 2 {
			if err != nil {
				t.Fatal(err)
			}
			checkObs(t, e, obs, mustPod(t, e))
			for {
				var reward float64
				var term, trunc bool
				var info Info
				obs, reward, term, trunc, info = e.Step(randomAction(r, obs))
				if math.IsNaN(reward) || math.IsInf(reward, 0) || trunc {
					t.Fatalf("%s: reward %v, truncated %v", sz.name, reward, trunc)
				}
				if obs.N != sz.nodes {
					resized++
				}
				if term {
					checkObs(t, e, obs, nil)
					checkFinal(t, e)
					res := info.Episode.Result
					scaleUps += res.ScaleUps
					scaleDowns += res.ScaleDowns
					preemptions += res.Preemptions
					t.Logf("%s episode %d: %d steps, return %.1f, nodes %d..%d, %+v",
						sz.name, ep, info.Episode.Steps, info.Episode.Return, res.NodesMin, res.NodesMax, e.eng.Counters())
					break
				}
				checkObs(t, e, obs, mustPod(t, e))
				if info.Steps%50 == 0 {
					if err := e.eng.CheckInvariants(); err != nil {
						t.Fatalf("%s: %v", sz.name, err)
					}
				}
			}
			obs, _, err = e.NextEpisode()
		}
	}
	if scaleUps == 0 || scaleDowns == 0 || preemptions == 0 || resized == 0 {
		t.Errorf("paths not exercised: %d scale-ups, %d scale-downs, %d preemptions, %d steps at another size",
			scaleUps, scaleDowns, preemptions, resized)
	}
}

// mustPod returns the pod awaiting a decision (Next does not advance while
// one waits).
func mustPod(t *testing.T, e *Env) *sim.Pod {
	t.Helper()
	p, ok := e.eng.Next()
	if !ok {
		t.Fatalf("no pod awaits a decision at %v", e.eng.Now())
	}
	return p
}

// checkFinal compares the measures behind the reward at the end of a run
// with the simulator's final metrics sample, taken in the same state.
func checkFinal(t *testing.T, e *Env) {
	t.Helper()
	ss := e.eng.Samples()
	s := ss[len(ss)-1]
	st := &e.enc.stats
	got := []struct {
		name      string
		got, want float64
	}{
		{"fragmentation", st.fragmentation(), s.Fragmentation},
		{"stranded", st.stranded(), (s.StrandedCPU + s.StrandedMem) / 2},
		{"node cpu std", e.enc.std, s.NodeCPUStd},
	}
	for _, g := range got {
		if math.Abs(g.got-g.want) > 1e-9 {
			t.Errorf("final %s = %v; sim sample says %v", g.name, g.got, g.want)
		}
	}
}

// TestDeterminism: the same seed and the same actions give the same
// observations, rewards and infos over two episodes; another seed does not.
func TestDeterminism(t *testing.T) {
	type step struct {
		obs    Obs
		reward float64
		term   bool
		trunc  bool
		info   Info
	}
	run := func(seed uint64) []step {
		cfg := busyConfig(4)
		cfg.MinNodes, cfg.MaxNodes = 3, 9
		cfg.MaxSteps = 300
		e, err := New(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(1, 2))
		var out []step
		obs, _, err := e.Reset(seed)
		for range 2 {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, step{obs: obs.Clone()})
			for {
				o, rew, term, trunc, info := e.Step(randomAction(r, obs))
				obs = o
				out = append(out, step{obs.Clone(), rew, term, trunc, info})
				if term || trunc {
					break
				}
			}
			obs, _, err = e.NextEpisode()
		}
		return out
	}
	a, b, c := run(11), run(11), run(12)
	if len(a) != len(b) {
		t.Fatalf("same seed: %d and %d steps", len(a), len(b))
	}
	for i := range a {
		if !reflect.DeepEqual(a[i], b[i]) {
			t.Fatalf("same seed, step %d differs:\n%+v\n%+v", i, a[i], b[i])
		}
	}
	if reflect.DeepEqual(a, c) {
		t.Error("seeds 11 and 12 gave identical trajectories")
	}
}

// TestAnyAction: no integer makes Step panic, before Reset, during an
// episode and after it; -1 is a failure (not Pending), N is Pending.
func TestAnyAction(t *testing.T) {
	e, err := New(quietConfig(), Fixed{twoNodes()})
	if err != nil {
		t.Fatal(err)
	}
	weird := []int{math.MinInt, -2, -1, 2, 3, 1 << 40, math.MaxInt}
	for _, a := range weird {
		if _, r, _, _, info := e.Step(a); info.Outcome != sim.OutcomeNoPod || r != 0 {
			t.Errorf("before reset: action %d gave %v, reward %v; want no-pod and 0", a, info.Outcome, r)
		}
	}
	obs, _, err := e.Reset(1)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		action int
		want   sim.Outcome
	}{
		{"minus one", -1, sim.OutcomeInvalid},
		{"min int", math.MinInt, sim.OutcomeInvalid},
		{"N+1", obs.N + 1, sim.OutcomeInvalid},
		{"max int", math.MaxInt, sim.OutcomeInvalid},
		{"minus two", -2, sim.OutcomeInvalid},
		{"pending", obs.N, sim.OutcomeDeferred},
	}
	for _, c := range cases {
		_, _, _, _, info := e.Step(c.action)
		if info.Outcome != c.want || info.Failure != map[bool]float64{true: 1}[c.want == sim.OutcomeInvalid] {
			t.Errorf("%s (%d): outcome %v, failure %v; want %v", c.name, c.action, info.Outcome, info.Failure, c.want)
		}
	}
	for {
		_, _, term, _, _ := e.Step(0)
		if term {
			break
		}
	}
	last := e.obs
	for _, a := range weird {
		obs, r, term, _, info := e.Step(a)
		if !term || r != 0 || info.Outcome != sim.OutcomeNoPod || !reflect.DeepEqual(obs, last) {
			t.Errorf("after the end: action %d: terminated %v, reward %v, %v", a, term, r, info.Outcome)
		}
	}
}

// TestTruncation: with max_steps 10 the episode is truncated on the 10th
// decision and its observation still holds the next pod.
func TestTruncation(t *testing.T) {
	cfg := busyConfig(3)
	cfg.MaxSteps = 10
	e, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	obs, _, err := e.Reset(5)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 5))
	for i := 1; i <= 10; i++ {
		var term, trunc bool
		var info Info
		obs, _, term, trunc, info = e.Step(allowedAction(r, obs))
		if term || trunc != (i == 10) || (info.Episode != nil) != (i == 10) {
			t.Fatalf("step %d: terminated %v truncated %v episode %v", i, term, trunc, info.Episode)
		}
	}
	if obs.Pod[PodCPU] == 0 || obs.Pod[PodMem] == 0 {
		t.Errorf("truncated observation has no pod: %v", obs.Pod)
	}
}

// emptySource gives workloads without pods: nothing to decide.
type emptySource struct{}

func (emptySource) Episode(*rand.Rand, int) (*sim.Workload, error) {
	return &sim.Workload{Nodes: []sim.NodeSpec{{Name: "n", Allocatable: sim.Resources{CPU: 1, Mem: 1}}}}, nil
}

// failingSource always fails.
type failingSource struct{}

var errBroken = errors.New("broken trace")

func (failingSource) Episode(*rand.Rand, int) (*sim.Workload, error) { return nil, errBroken }

// TestResetErrors: a failing source, a source without decisions and a
// workload the simulator refuses each give an error, and Step stays safe.
func TestResetErrors(t *testing.T) {
	bad := twoNodes()
	bad.Pods[0].Requests.CPU = -1
	cases := []struct {
		name string
		src  Source
	}{
		{"failing source", failingSource{}},
		{"no decisions", emptySource{}},
		{"invalid workload", Fixed{bad}},
		{"no workload", Fixed{}},
	}
	for _, c := range cases {
		e, err := New(quietConfig(), c.src)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.Reset(1); err == nil {
			t.Errorf("%s: no error", c.name)
		}
		if _, _, _, _, info := e.Step(0); info.Outcome != sim.OutcomeNoPod {
			t.Errorf("%s: step after a failed reset: %v", c.name, info.Outcome)
		}
	}
	e, _ := New(quietConfig(), failingSource{})
	if _, _, err := e.Reset(1); !errors.Is(err, errBroken) {
		t.Errorf("source error not wrapped: %v", err)
	}
}

// TestStepAllocs: after warm-up a step allocates nothing (the engine's
// amortised growth and episode ends aside, averaging below one).
func TestStepAllocs(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MinNodes, cfg.MaxNodes = 10, 10
	e, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	obs, _, err := e.Reset(1)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 1))
	step := func() {
		var term, trunc bool
		obs, _, term, trunc, _ = e.Step(allowedAction(r, obs))
		if term || trunc {
			t.Fatal("episode ended during the allocation test")
		}
	}
	for range 200 {
		step()
	}
	if a := testing.AllocsPerRun(500, step); a != 0 {
		t.Errorf("%v allocations per step; want 0", a)
	}
}

// TestEmptyCluster: a workload whose only node joins at 5 s. The pod
// arriving at 0 s meets N = 0: the observation has no node rows and only
// Pending is allowed; Pending is then the only legal action (unschedulable,
// not a deferral), and action 0 (= N) is that Pending.
func TestEmptyCluster(t *testing.T) {
	w := &sim.Workload{
		Pods: []sim.PodSpec{{Name: "p", Requests: sim.Resources{CPU: 1000, Mem: 1024}, Duration: sim.Second}},
		Events: []sim.MachineEvent{{At: 5 * sim.Second, Kind: sim.MachineAdd,
			Node: sim.NodeSpec{Name: "late", Allocatable: sim.Resources{CPU: 4000, Mem: 8192}}}},
		End: 20 * sim.Second,
	}
	cfg := quietConfig()
	cfg.ForcedSteps = true // the observation where nothing fits is what this test looks at
	e, err := New(cfg, Fixed{w})
	if err != nil {
		t.Fatal(err)
	}
	obs, _, err := e.Reset(1)
	if err != nil {
		t.Fatal(err)
	}
	if obs.N != 0 || len(obs.Nodes) != 0 || len(obs.Domain) != 0 || len(obs.Mask) != 1 || !obs.Mask[0] {
		t.Fatalf("empty cluster: N %d, %d node values, %d domains, mask %v; want 0, 0, 0, [true]",
			obs.N, len(obs.Nodes), len(obs.Domain), obs.Mask)
	}
	obs, r, _, _, info := e.Step(0)
	// Nothing happened and nothing is placed: balance over no node is 1
	// (std 0), no other term: reward 1.
	if info.Outcome != sim.OutcomeUnschedulable || info.Pending != 0 || info.Failure != 0 || r != 1 {
		t.Errorf("pending on an empty cluster: %v, pending %v, failure %v, reward %v; want unschedulable, 0, 0, 1",
			info.Outcome, info.Pending, info.Failure, r)
	}
	// The node joins at 5 s and the pod is retried at once.
	if obs.N != 1 || info.Time != 5*sim.Second || !obs.Mask[0] {
		t.Errorf("after the node joined: N %d at %v, mask %v; want 1 at 5s, [true true]", obs.N, info.Time, obs.Mask)
	}
}

// TestMaskMatchesFilters compares the mask and the taint and affinity
// columns with sim's filters on every node at every decision of random
// episodes on 20-node synthetic clusters (which have NoSchedule nodes and
// zone-affine pods), and checks that every way of failing was met, so the
// comparison is not vacuous.
func TestMaskMatchesFilters(t *testing.T) {
	cfg := busyConfig(20)
	cfg.MaxSteps = 1500
	e, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(9, 9))
	var seen struct{ fits, resources, taint, affinity int }
	for seed := range uint64(3) {
		obs, _, err := e.Reset(seed)
		if err != nil {
			t.Fatal(err)
		}
		for {
			p := mustPod(t, e)
			nodes := e.eng.Cluster().Nodes()
			for i := range nodes {
				n, s := &nodes[i], p.Spec
				res, tol, aff := sim.FitsResources(n, s), sim.ToleratesTaints(n, s), sim.MatchesAffinity(n, s)
				feasible := sim.Feasible(n, s)
				row := obs.Row(i)
				if obs.Mask[i] != feasible || (row[NodeTaint] == 1) == tol || (row[NodeAffinityMiss] == 1) == aff {
					t.Fatalf("seed %d at %v: pod %s on node %s: mask %v taint %v affinity-miss %v; "+
						"sim says feasible %v, tolerates %v, matches %v",
						seed, e.eng.Now(), s.Name, n.Spec.Name, obs.Mask[i], row[NodeTaint], row[NodeAffinityMiss],
						feasible, tol, aff)
				}
				switch {
				case feasible:
					seen.fits++
				case !tol:
					seen.taint++
				case !aff:
					seen.affinity++
				case !res:
					seen.resources++
				}
			}
			var term, trunc bool
			obs, _, term, trunc, _ = e.Step(allowedAction(r, obs))
			if term || trunc {
				break
			}
		}
	}
	if seen.fits == 0 || seen.resources == 0 || seen.taint == 0 || seen.affinity == 0 {
		t.Errorf("not every case met: %+v", seen)
	}
	t.Logf("node checks: %+v", seen)
}

// TestNoForcedSteps: by default every observation offers a real choice (some
// node passes the filters), even under heavy pressure, while the simulator
// keeps counting the unschedulable attempts the environment took itself;
// with forced_steps those attempts are steps of their own.
func TestNoForcedSteps(t *testing.T) {
	for _, forced := range []bool{false, true} {
		cfg := DefaultConfig()
		cfg.MinNodes, cfg.MaxNodes = 4, 4
		cfg.Workload.PodsPerNode = 60
		cfg.Workload.Load = 1.6
		cfg.ForcedSteps = forced
		e, err := New(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		obs, _, err := e.Reset(11)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(1, 1))
		sawForced := false
		for {
			choice := false
			for i := range obs.N {
				choice = choice || obs.Mask[i]
			}
			if !choice {
				sawForced = true
				if !forced {
					t.Fatal("an observation with no feasible node under the default config")
				}
			}
			var act int
			for {
				act = r.IntN(obs.N + 1)
				if obs.Mask[act] {
					break
				}
			}
			var term, trunc bool
			var info Info
			obs, _, term, trunc, info = e.Step(act)
			if term || trunc {
				if info.Episode.Result.FailedAttempts == 0 {
					t.Errorf("forced=%v: no unschedulable attempts under pressure; the test needs them", forced)
				}
				break
			}
		}
		if forced && !sawForced {
			t.Error("forced_steps: no forced observation under pressure")
		}
	}
}
