package env

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/internal/openbtest"
	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

// openbDefault is the default pod list on the 1,213 GPU nodes (testdata).
func openbDefault(t testing.TB) *sim.GPUWorkload { return openbtest.Default(t, 0) }

func curveBits(c sim.Curve) []uint64 {
	v := make([]uint64, len(c))
	for i, x := range c {
		v[i] = math.Float64bits(x)
	}
	return v
}

// TestGPUEnvReproducesFGD drives the environment with FGD's own choice
// (Best) on the whole default list at 1.3x: the episode's result equals
// sim.RunGPU under fgd bit for bit, and the rewards sum to the GPUs
// allocated (no pod fails while a node could take it).
func TestGPUEnvReproducesFGD(t *testing.T) {
	if testing.Short() {
		t.Skip("a whole run of the default list")
	}
	w := openbDefault(t)
	const seed = 42
	s, err := sched.NewGPU(sched.NameFGD, seed)
	if err != nil {
		t.Fatal(err)
	}
	want, err := sim.RunGPU(w, s, sim.GPURunConfig{Inflate: 1.3, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultGPUConfig()
	cfg.Prior, cfg.PriorScale = sched.NameFGD, 2
	e, err := NewGPUEnv(cfg, w)
	if err != nil {
		t.Fatal(err)
	}
	obs, err := e.Reset(seed)
	if err != nil {
		t.Fatal(err)
	}
	var got *sim.GPUResult
	var alloc float64
	for steps := 0; got == nil; steps++ {
		a := e.Best()
		// FGD's node has prior 0, every other node less (ties broken by rank)
		if a < obs.N && obs.Prior[a] != 0 {
			t.Fatalf("step %d: FGD's node %d has prior %v; want 0", steps, a, obs.Prior[a])
		}
		for i := range obs.N {
			if a < obs.N && i != a && obs.Mask[i] && obs.Prior[i] >= obs.Prior[a] {
				t.Fatalf("step %d: node %d has prior %v, FGD's node %d %v", steps, i, obs.Prior[i], a, obs.Prior[a])
			}
		}
		var r float64
		var info GPUInfo
		obs, r, _, info, err = e.Step(a)
		if err != nil {
			t.Fatal(err)
		}
		if info.Failure != 0 {
			t.Fatalf("step %d: FGD failed a pod a node could take", steps)
		}
		alloc += r
		got = info.Result
	}
	got.Scheduler = want.Scheduler
	if got.Pods != want.Pods || got.Placed != want.Placed || got.Failed != want.Failed || got.AllocPct != want.AllocPct ||
		!reflect.DeepEqual(curveBits(got.AllocCurve), curveBits(want.AllocCurve)) || !reflect.DeepEqual(curveBits(got.FragCurve), curveBits(want.FragCurve)) {
		t.Fatalf("env driven by FGD: placed %d alloc %v; RunGPU: placed %d alloc %v", got.Placed, got.AllocPct, want.Placed, want.AllocPct)
	}
	if d := alloc - got.AllocPct/100*float64(got.GPUs); math.Abs(d) > 1e-6 {
		t.Errorf("rewards sum to %.4f GPUs; allocated %.4f", alloc, got.AllocPct/100*float64(got.GPUs))
	}
}

// episode runs one episode of random feasible actions (Pending one time in
// ten) drawn from rng and returns every observation's features, the
// rewards and the result.
func episode(t *testing.T, e *GPUEnv, seed uint64, rng *rand.Rand) ([]float64, []float64, *sim.GPUResult) {
	obs, err := e.Reset(seed)
	if err != nil {
		t.Fatal(err)
	}
	var feats, rewards []float64
	for {
		feats = append(feats, obs.Pod...)
		feats = append(feats, obs.Nodes...)
		feats = append(feats, obs.Prior...)
		var ok []int
		for i, m := range obs.Mask {
			if m {
				ok = append(ok, i)
			}
		}
		a := ok[rng.IntN(len(ok))]
		if rng.IntN(10) == 0 {
			a = obs.N
		}
		o, r, done, info, err := e.Step(a)
		if err != nil {
			t.Fatal(err)
		}
		rewards = append(rewards, r)
		if done {
			return feats, rewards, info.Result
		}
		obs = o
	}
}

func TestGPUEnvDeterministic(t *testing.T) {
	w := openbDefault(t)
	cfg := DefaultGPUConfig()
	cfg.MinNodes, cfg.MaxNodes = 20, 40
	cfg.Prior, cfg.PriorScale, cfg.PriorPending = sched.NameFGD, 3, -1
	e1, f1, res1 := twinEpisodes(t, cfg, w, 5, 1)
	// the subcluster is 20-40 nodes, the list thinned to 1.3x its capacity
	if n := e1.Cluster(); len(n.Nodes) < 20 || len(n.Nodes) > 40 {
		t.Errorf("subcluster of %d nodes; want 20..40", len(n.Nodes))
	}
	if res1.ArrivedPct < 120 || res1.ArrivedPct > 131 {
		t.Errorf("arrived %.1f%% of the subcluster; want about 130", res1.ArrivedPct)
	}
	// the same environment reset to the same seed replays it too
	f3, _, _ := episode(t, e1, 5, rand.New(rand.NewPCG(1, 1)))
	if !reflect.DeepEqual(f1, f3) {
		t.Error("a reset to the same seed differs")
	}
	f4, _, _ := episode(t, e1, 6, rand.New(rand.NewPCG(1, 1)))
	if reflect.DeepEqual(f1, f4) {
		t.Error("seeds 5 and 6 give the same episode")
	}
	for _, v := range f1 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatal("a feature is not finite")
		}
	}
}

// TestGPUEnvObservation checks the features of a hand-made case: two nodes
// (8 CPUs, 2 GPUs of model T4; 16 CPUs, 4 GPUs of model V100), a share of
// 500 placed on node 0, then a pod of one whole T4 GPU.
func TestGPUEnvObservation(t *testing.T) {
	w := &sim.GPUWorkload{Name: "hand", Models: []string{"T4", "V100"},
		Nodes: []sim.GPUNodeSpec{{Name: "a", CPU: 8000, Mem: 65536, GPUs: 2, Model: 0}, {Name: "b", CPU: 16000, Mem: 65536, GPUs: 4, Model: 1}},
		Pods: []sim.GPUPodSpec{
			{Name: "s", CPU: 2000, Mem: 1024, GPU: sim.GPURequest{Count: 1, Milli: 500}},
			{Name: "t4", CPU: 4000, Mem: 2048, GPU: sim.GPURequest{Count: 1, Milli: 1000, Models: 1 << 0}},
		},
	}
	cfg := DefaultGPUConfig()
	cfg.Inflate = 0
	e, err := NewGPUEnv(cfg, w)
	if err != nil {
		t.Fatal(err)
	}
	// a seed whose arrival order starts with s (the two pods are shuffled)
	var obs *Obs
	for seed := uint64(1); ; seed++ {
		if obs, err = e.Reset(seed); err != nil {
			t.Fatal(err)
		}
		if k, _ := e.st.Pod(); k == 0 {
			break
		}
	}
	obs, r, done, info, err := e.Step(0)
	if err != nil || done || !info.Placed || r != 0.5 {
		t.Fatalf("placing s: reward %v done %v info %+v err %v; want 0.5", r, done, info, err)
	}
	row := obs.Nodes[:GPUNodeFeatures]
	want := map[int]float64{
		GPUNodeCPUFree: 6000.0 / 8000, GPUNodeMemFree: (65536 - 1024.0) / 65536, GPUNodeCPUSize: 8000.0 / GPURefCPU,
		GPUNodeFree0: 1, GPUNodeFree0 + 1: 0.5, GPUNodeFree0 + 2: 0, GPUNodeGPUs: 2.0 / 8, GPUNodeIdle: 1.0 / 8,
		GPUNodeModelOK: 1, GPUNodeFits: 1,
	}
	for col, v := range want {
		if math.Abs(row[col]-v) > 1e-12 {
			t.Errorf("node 0 column %d = %v; want %v", col, row[col], v)
		}
	}
	if r1 := obs.Nodes[GPUNodeFeatures:]; r1[GPUNodeModelOK] != 0 || r1[GPUNodeFits] != 0 || obs.Mask[1] || !obs.Mask[0] || !obs.Mask[2] {
		t.Errorf("node 1 (V100) for a T4 pod: model ok %v fits %v mask %v", r1[GPUNodeModelOK], r1[GPUNodeFits], obs.Mask)
	}
	p := obs.Pod
	if p[GPUPodCount] != 1.0/8 || p[GPUPodMilli] != 1 || p[GPUPodShare] != 0 || p[GPUPodModels] != 1 || p[GPUPodModelNodes] != 0.5 ||
		p[GPUPodArrived] != 0.5/6 || p[GPUPodAlloc] != 0.5/6 || p[GPUPodMixSmall] != 1 || p[GPUPodTypeFreq] != 0 {
		t.Errorf("pod features %v", p)
	}
	if obs.Domain[0] != 0 || obs.Domain[1] != 1 {
		t.Errorf("domains %v; want the model ids 0, 1", obs.Domain)
	}
	// an infeasible node fails the pod, with the penalty
	_, r, done, info, err = e.Step(1)
	if err != nil || !done || !info.Invalid || info.Failure != 1 || r != -1 {
		t.Errorf("t4 on the V100 node: reward %v done %v info %+v err %v; want -1, done, invalid", r, done, info, err)
	}
	if _, _, _, _, err := e.Step(0); err == nil {
		t.Error("a step after the end: no error")
	}
}

func TestGPUConfigErrors(t *testing.T) {
	w := openbDefault(t)
	for _, tc := range []struct {
		key string
		mod func(*GPUConfig)
	}{
		{"inflate", func(c *GPUConfig) { c.Inflate = -1 }},
		{"inflate", func(c *GPUConfig) { c.Inflate = math.NaN() }},
		{"min_nodes", func(c *GPUConfig) { c.MinNodes, c.MaxNodes = 0, 10 }},
		{"min_nodes", func(c *GPUConfig) { c.MinNodes, c.MaxNodes = 20, 10 }},
		{"max_nodes", func(c *GPUConfig) { c.MinNodes = 5 }},
		{"max_nodes", func(c *GPUConfig) { c.MinNodes, c.MaxNodes = 5, 5000 }},
		{"fail_penalty", func(c *GPUConfig) { c.FailPenalty = -1 }},
		{"select", func(c *GPUConfig) { c.Select = "tetris" }},
		// an admission rule has no scores or GPU selection of its own
		{"select", func(c *GPUConfig) { c.Select = sched.NameFGD + "@reserve20" }},
		{"prior", func(c *GPUConfig) { c.Prior, c.PriorScale = sched.NameFGD+"@reserve20", 1 }},
		{"prior", func(c *GPUConfig) { c.Prior = "nope"; c.PriorScale = 1 }},
		{"prior_scale", func(c *GPUConfig) { c.Prior = sched.NameFGD }},
		{"prior", func(c *GPUConfig) { c.PriorScale = 1 }},
		// fgd-tiers' scores are not on the 0..100 scale the prior normalises
		{"prior = fgd-tiers", func(c *GPUConfig) { c.Prior, c.PriorScale = sched.NameFGDTiers, 50 }},
		{"spec_rate", func(c *GPUConfig) { c.SpecRate = -0.1 }},
		{"spec_rate", func(c *GPUConfig) { c.SpecRate = 1.5 }},
		{"spec_rate", func(c *GPUConfig) { c.SpecRate = math.NaN() }},
	} {
		cfg := DefaultGPUConfig()
		tc.mod(&cfg)
		_, err := NewGPUEnv(cfg, w)
		if err == nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%s: error %v; want ErrConfig naming %s", tc.key, err, tc.key)
		}
	}
	if _, err := NewGPUEnv(DefaultGPUConfig(), nil); err == nil {
		t.Error("no workload: no error")
	}
	cpu := &sim.GPUWorkload{Name: "cpu", Nodes: []sim.GPUNodeSpec{{Name: "a", CPU: 1, Mem: 1, Model: -1}}}
	if _, err := NewGPUEnv(DefaultGPUConfig(), cpu); err == nil {
		t.Error("a workload without GPU nodes: no error")
	}
	e, err := NewGPUEnv(DefaultGPUConfig(), w)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, _, err := e.Step(0); err == nil {
		t.Error("Step before Reset: no error")
	}
	if _, err := e.Reset(1); err != nil {
		t.Fatal(err)
	}
	if _, _, _, _, err := e.Step(-1); err == nil {
		t.Error("action -1: no error")
	}
}

// twinEpisodes runs one episode of seed on each of two environments built
// from cfg, with the same random actions (rng stream rs), fails unless the
// two agree bit for bit, and returns the first environment, its features
// and its result.
func twinEpisodes(t *testing.T, cfg GPUConfig, w *sim.GPUWorkload, seed, rs uint64) (*GPUEnv, []float64, *sim.GPUResult) {
	t.Helper()
	e1, err := NewGPUEnv(cfg, w)
	if err != nil {
		t.Fatal(err)
	}
	e2, err := NewGPUEnv(cfg, w)
	if err != nil {
		t.Fatal(err)
	}
	f1, r1, res1 := episode(t, e1, seed, rand.New(rand.NewPCG(rs, rs)))
	f2, r2, res2 := episode(t, e2, seed, rand.New(rand.NewPCG(rs, rs)))
	if !reflect.DeepEqual(f1, f2) || !reflect.DeepEqual(r1, r2) || res1.AllocPct != res2.AllocPct {
		t.Fatalf("two episodes of seed %d with the same actions differ (spec_rate %v)", seed, cfg.SpecRate)
	}
	return e1, f1, res1
}
