package env

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

// randomCluster returns a seeded random cluster of n nodes: mixed sizes and
// fill levels, some full pod slots, taints and zone/disk labels (as sched's
// property tests build them).
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
		if r.IntN(5) == 0 {
			spec.Taints = append(spec.Taints, sim.Taint{
				Key:    []string{"gpu", "spot"}[r.IntN(2)],
				Effect: []sim.TaintEffect{sim.NoSchedule, sim.PreferNoSchedule}[r.IntN(2)],
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

// randomPod returns a seeded random pod, sometimes with a toleration or
// required affinity.
func randomPod(r *rand.Rand) *sim.Pod {
	spec := &sim.PodSpec{Name: "p", Requests: sim.Resources{CPU: r.Int64N(16000), Mem: r.Int64N(65536)}, Duration: sim.Minute}
	if r.IntN(5) == 0 {
		spec.Tolerations = []sim.Toleration{{Key: "gpu", Exists: true}}
	}
	if r.IntN(5) == 0 {
		spec.Affinity = &sim.Affinity{Required: []sim.Term{{{Key: "disk", Op: sim.OpExists}}}}
	}
	return &sim.Pod{Spec: spec}
}

// TestPriorPicksHeuristicNode is a randomised property test: for every
// prior heuristic, on random clusters of up to 60 nodes (scored in full by
// every profile), the allowed node of highest Obs.Prior has the maximal
// heuristic score, it is the heuristic's own choice when that maximum is
// unique, feasible nodes lie in [-scale, 0] with the best at 0, infeasible
// ones at 0, and the Pending entry is prior.pending.
func TestPriorPicksHeuristicNode(t *testing.T) {
	names := PriorHeuristics()
	for _, want := range []string{sched.NameTetris, sched.NameKubeDefault, sched.NameBestFit, sched.NameMostAllocated, sched.NameHoles} {
		if !strings.Contains(strings.Join(names, ","), want) {
			t.Fatalf("PriorHeuristics() = %v lacks %s", names, want)
		}
	}
	for _, norm := range []PriorNorm{"", Range} {
		for _, name := range names {
			t.Run(fmt.Sprintf("%s/%s", name, norm), func(t *testing.T) {
				cfg := DefaultConfig()
				cfg.Prior = Prior{Heuristic: name, Scale: 10, Pending: -10, Normalize: norm}
				enc, err := NewEncoder(cfg)
				if err != nil {
					t.Fatal(err)
				}
				r := rand.New(rand.NewPCG(7, uint64(len(name))))
				unique := 0
				for trial := range 300 {
					c := randomCluster(r, 1+r.IntN(60))
					for range r.IntN(4) { // services seen: holes sizes its holes by them
						c.NoteService(&sim.PodSpec{Requests: sim.Resources{Mem: 1024 + r.Int64N(65536)}})
					}
					p := randomPod(r)
					obs := enc.Encode(c, p)
					if len(obs.Prior) != obs.N+1 || obs.Prior[obs.N] != -10 {
						t.Fatalf("trial %d: prior %v of %d nodes", trial, obs.Prior, obs.N)
					}
					f, _ := priorFramework(name)
					scores := f.Scores(c, p, nil)
					best, top := -1, int64(-1)
					for i := range obs.N {
						pr := obs.Prior[i]
						if !obs.Mask[i] {
							if pr != 0 {
								t.Fatalf("trial %d: infeasible node %d has prior %v", trial, i, pr)
							}
							continue
						}
						if pr > 0 || pr < -10 {
							t.Fatalf("trial %d: node %d prior %v outside [-10, 0]", trial, i, pr)
						}
						if best < 0 || pr > obs.Prior[best] {
							best = i
						}
						top = max(top, scores[i])
					}
					if best < 0 {
						continue // nothing fits: Pending is the only action
					}
					if obs.Prior[best] != 0 {
						t.Fatalf("trial %d: best prior %v, want 0", trial, obs.Prior[best])
					}
					if scores[best] != top {
						t.Fatalf("trial %d: argmax prior node %d scores %d, maximum %d", trial, best, scores[best], top)
					}
					ties := 0
					for i := range obs.N {
						if obs.Mask[i] && scores[i] == top {
							ties++
						}
					}
					if ties == 1 {
						unique++
						s, _ := sched.New(name, uint64(trial))
						if got := s.Schedule(c, p); got != best {
							t.Fatalf("trial %d: %s schedules node %d, prior's argmax %d", trial, name, got, best)
						}
					}
				}
				if unique < 50 {
					t.Errorf("only %d trials with a unique best node", unique)
				}
			})
		}
	}
}

// TestPriorFormula checks the prior's values against hand computation on a
// two-node cluster under Tetris: the pod (8 cores, 16 GiB) on node a
// (32 cores, 64 GiB, empty) and node b (same size, half full).
func TestPriorFormula(t *testing.T) {
	mk := func(name string, reqCPU, reqMem int64) sim.Node {
		a := sim.Resources{CPU: 32000, Mem: 65536}
		return sim.Node{Alloc: a, Requested: sim.Resources{CPU: reqCPU, Mem: reqMem}, Spec: &sim.NodeSpec{Name: name, Allocatable: a}}
	}
	c := sim.NewCluster(0, mk("a", 0, 0), mk("b", 16000, 32768), mk("full", 32000, 65536))
	p := &sim.Pod{Spec: &sim.PodSpec{Requests: sim.Resources{CPU: 8000, Mem: 16384}}}
	// Tetris: d = (0.25, 0.25) in units of 1e4; free a = (1, 1), b = (0.5, 0.5):
	// s_a = 2*2500*10000, s_b = 2*2500*5000, so s_b/s_a = 1/2.
	for _, tc := range []struct {
		norm PriorNorm
		want []float64
	}{
		{Ratio, []float64{0, -5, 0, 3}},
		{Range, []float64{0, -10, 0, 3}},
	} {
		cfg := DefaultConfig()
		cfg.Prior = Prior{Heuristic: sched.NameTetris, Scale: 10, Pending: 3, Normalize: tc.norm}
		enc, err := NewEncoder(cfg)
		if err != nil {
			t.Fatal(err)
		}
		obs := enc.Encode(c, p)
		for i, w := range tc.want {
			if obs.Prior[i] != w {
				t.Errorf("%s: prior = %v, want %v", tc.norm, obs.Prior, tc.want)
				break
			}
		}
	}
	enc, err := NewEncoder(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if obs := enc.Encode(c, p); obs.Prior != nil {
		t.Errorf("default config: prior %v, want nil", obs.Prior)
	}
}

// TestPriorValidate: bad prior settings are errors naming their YAML key.
func TestPriorValidate(t *testing.T) {
	for _, tc := range []struct {
		p   Prior
		key string
	}{
		{Prior{Heuristic: "nope", Scale: 1}, "prior.heuristic"},
		{Prior{Heuristic: sched.NameFirstFit, Scale: 1}, "prior.heuristic"},
		{Prior{Heuristic: sched.NameRandom, Scale: 1}, "prior.heuristic"},
		{Prior{Scale: 1}, "prior.heuristic"},
		{Prior{Heuristic: sched.NameTetris}, "prior.scale"},
		{Prior{Heuristic: sched.NameTetris, Scale: -1}, "prior.scale"},
		{Prior{Heuristic: sched.NameTetris, Scale: 1, Normalize: "minmax"}, "prior.normalize"},
	} {
		cfg := DefaultConfig()
		cfg.Prior = tc.p
		err := cfg.Validate()
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%+v: error %v, want one naming %s", tc.p, err, tc.key)
		}
	}
	cfg := DefaultConfig()
	cfg.Prior = Prior{Heuristic: sched.NameKubeDefault, Scale: 10, Pending: -10}
	if err := cfg.Validate(); err != nil {
		t.Error(err)
	}
}

// TestEnvPrior: an Env with a prior returns N+1 prior entries at every step,
// and the Encoder reproduces them.
func TestEnvPrior(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MinNodes, cfg.MaxNodes = 5, 5
	cfg.Workload.PodsPerNode = 20
	cfg.Prior = Prior{Heuristic: sched.NameTetris, Scale: 10, Pending: -10}
	e, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := NewEncoder(cfg)
	if err != nil {
		t.Fatal(err)
	}
	obs, _, err := e.Reset(1)
	if err != nil {
		t.Fatal(err)
	}
	for step := 0; step < 60; step++ {
		if len(obs.Prior) != obs.N+1 {
			t.Fatalf("step %d: %d prior entries for %d nodes", step, len(obs.Prior), obs.N)
		}
		p, ok := e.eng.Next()
		if !ok {
			break
		}
		got := enc.Encode(e.eng.Cluster(), p)
		for i := range got.Prior {
			if got.Prior[i] != obs.Prior[i] {
				t.Fatalf("step %d: encoder prior %v, env %v", step, got.Prior, obs.Prior)
			}
		}
		best := obs.N
		for i := range obs.N {
			if obs.Mask[i] && (best == obs.N || obs.Prior[i] > obs.Prior[best]) {
				best = i
			}
		}
		var done, trunc bool
		obs, _, done, trunc, _ = e.Step(best)
		if done || trunc {
			break
		}
	}
}

// lifetimeWorkload: on one roomy node, task j1/t's first two pods finish
// after 10 s and 100 s; at 200 s arrive the task's third pod (lasting
// third), a pod of another task of j1, a pod of a new job j2 and a service.
func lifetimeWorkload(third sim.Time) *sim.Workload {
	node := sim.NodeSpec{Name: "n", Allocatable: sim.Resources{CPU: 64000, Mem: 262144}}
	pod := func(name, group string, at, d sim.Time) sim.PodSpec {
		return sim.PodSpec{Name: name, Group: group, Arrival: at, Duration: d, Requests: sim.Resources{CPU: 1000, Mem: 1024}}
	}
	return &sim.Workload{Name: "lifetimes", Nodes: []sim.NodeSpec{node}, End: sim.Hour, Pods: []sim.PodSpec{
		pod("j1/t/1", "j1", 0, 10*sim.Second),
		pod("j1/t/2", "j1", 0, 100*sim.Second),
		pod("j1/t/3", "j1", 200*sim.Second, third),
		pod("j1/v/1", "j1", 200*sim.Second, sim.Minute),
		pod("j2/w/1", "j2", 200*sim.Second, sim.Minute),
		pod("svc", "app", 200*sim.Second, 0),
	}}
}

// TestLifetimeFeature: the lifetime column is the mean log lifetime of the
// finished pods of the pod's task, group or run, or the constant before any
// has finished, and the pod's own duration changes nothing in the
// observation of its decision.
func TestLifetimeFeature(t *testing.T) {
	mean := (math.Log1p(10) + math.Log1p(100)) / 2 * durationScale
	want := map[string][2]float64{ // lifetime, level
		"j1/t/1": {fallbackLifetime, 0},
		"j1/t/2": {fallbackLifetime, 0},
		"j1/t/3": {mean, 1},
		"j1/v/1": {mean, 2.0 / 3},
		"j2/w/1": {mean, 1.0 / 3},
		"svc":    {1, 1},
	}
	run := func(third sim.Time) map[string]Obs {
		cfg := quietConfig()
		cfg.MinNodes, cfg.MaxNodes = 1, 1
		e, err := New(cfg, Fixed{lifetimeWorkload(third)})
		if err != nil {
			t.Fatal(err)
		}
		obs, _, err := e.Reset(1)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]Obs{}
		for {
			p, ok := e.eng.Next()
			if !ok {
				break
			}
			seen[p.Spec.Name] = obs.Clone()
			var done, trunc bool
			obs, _, done, trunc, _ = e.Step(0)
			if done || trunc {
				break
			}
		}
		return seen
	}
	short, long := run(5*sim.Second), run(20*sim.Hour)
	for name, w := range want {
		o, ok := short[name]
		if !ok {
			t.Fatalf("no decision for %s", name)
		}
		if got := o.Pod[PodLifetime]; math.Abs(got-w[0]) > 1e-12 || o.Pod[PodLifetimeLevel] != w[1] {
			t.Errorf("%s: lifetime %v level %v; want %v level %v", name, got, o.Pod[PodLifetimeLevel], w[0], w[1])
		}
	}
	// Every decision up to and including j1/t/3's (the pods at 200 s are
	// decided in order) sees the same observation whatever its duration.
	for _, name := range []string{"j1/t/1", "j1/t/2", "j1/t/3"} {
		if !reflect.DeepEqual(short[name], long[name]) {
			t.Errorf("%s: observation depends on j1/t/3's duration:\n%+v\n%+v", name, short[name], long[name])
		}
	}
}

// TestQueueFeatures computes the queue columns by hand: two nodes of
// 4000m/8192Mi (the reference) and four pods arriving at 0 — a 2000m/1024Mi
// online pod, then batch pods of 1000m/4096Mi, 1000m/2048Mi and
// 500m/4096Mi — decided one by one, every one deferred.
func TestQueueFeatures(t *testing.T) {
	node := func(name string) sim.NodeSpec {
		return sim.NodeSpec{Name: name, Allocatable: sim.Resources{CPU: 4000, Mem: 8192}}
	}
	pod := func(name string, cpu, mem int64, prio sim.Priority) sim.PodSpec {
		return sim.PodSpec{Name: name, Requests: sim.Resources{CPU: cpu, Mem: mem}, Priority: prio, Duration: sim.Minute}
	}
	w := &sim.Workload{Name: "queue", Nodes: []sim.NodeSpec{node("a"), node("b")}, End: sim.Hour, Pods: []sim.PodSpec{
		pod("big", 2000, 1024, sim.High), // dominant share 1/2 (CPU)
		pod("m4", 1000, 4096, sim.Low),   // 1/2 (memory)
		pod("m2", 1000, 2048, sim.Low),   // 1/4
		pod("s4", 500, 4096, sim.Low),    // 1/2
	}}
	cfg := quietConfig()
	e, err := New(cfg, Fixed{w})
	if err != nil {
		t.Fatal(err)
	}
	obs, _, err := e.Reset(1)
	if err != nil {
		t.Fatal(err)
	}
	// Four pending pods, Q = 4500m/11264Mi, F = 8000m/16384Mi; four arrivals
	// at 0: 4/5 per minute over 2 nodes.
	queue := math.Log(5) / math.Log(1001)
	qc, qm := 4500.0/12500, 11264.0/27648
	arr := math.Log(1.4) / math.Log(11)
	want := []struct {
		name string
		rank float64
	}{
		// big: m2 smaller, m4 and s4 tie: (1 + 1)/3
		{"big", 2.0 / 3},
		// m4: m2 smaller, big and s4 tie
		{"m4", 2.0 / 3},
		// m2: the smallest
		{"m2", 0},
		{"s4", 2.0 / 3},
	}
	for _, w := range want {
		p, ok := e.eng.Next()
		if !ok || p.Spec.Name != w.name {
			t.Fatalf("decision for %v, want %s", p, w.name)
		}
		got := obs.Pod[PodQueue : PodArrivals+1]
		exp := []float64{queue, qc, qm, w.rank, arr}
		for k := range exp {
			if !near(got[k], exp[k]) {
				t.Errorf("%s: queue features %v, want %v", w.name, got, exp)
				break
			}
		}
		obs, _, _, _, _ = e.Step(obs.N) // defer: the queue stays the same
	}
	// Bind big on node a: three pods pending, Q = 2500m/10240Mi, F =
	// 6000m/15360Mi.
	for obs.N > 0 {
		p, _ := e.eng.Next()
		if p.Spec.Name == "big" {
			break
		}
		obs, _, _, _, _ = e.Step(obs.N)
	}
	obs, _, _, _, _ = e.Step(0)
	if p, _ := e.eng.Next(); p != nil {
		if got, want := obs.Pod[PodQueue], math.Log(4)/math.Log(1001); !near(got, want) {
			t.Errorf("after a bind: queue %v, want %v", got, want)
		}
		if got, want := obs.Pod[PodQueueCPU], 2500.0/8500; !near(got, want) {
			t.Errorf("after a bind: queue CPU %v, want %v", got, want)
		}
		if got, want := obs.Pod[PodQueueMem], 10240.0/25600; !near(got, want) {
			t.Errorf("after a bind: queue memory %v, want %v", got, want)
		}
	}
}

// TestEncoderView: on a cluster view (sim.NewCluster), as the scheduler
// extender builds one, the lifetime and queue columns come from what the
// view was told (NoteFinished, NotePending).
func TestEncoderView(t *testing.T) {
	a := sim.Resources{CPU: 4000, Mem: 8192}
	c := sim.NewCluster(0, sim.Node{Alloc: a, Spec: &sim.NodeSpec{Name: "a", Allocatable: a}})
	spec := func(name string, cpu int64) *sim.PodSpec {
		return &sim.PodSpec{Name: name, Group: "j", Duration: sim.Hour, Requests: sim.Resources{CPU: cpu, Mem: 1024}}
	}
	p := &sim.Pod{ID: 0, Spec: spec("j/t/2", 2000), Group: 0}
	q := &sim.Pod{ID: 1, Spec: spec("j/u/1", 1000), Group: 0}
	c.NoteFinished(spec("j/t/1", 1), 0, 99*sim.Second)
	c.NotePending(p, true)
	c.NotePending(q, true)
	cfg := DefaultConfig()
	cfg.Reference = Reference{CPU: 4000, Mem: 8192}
	enc, err := NewEncoder(cfg)
	if err != nil {
		t.Fatal(err)
	}
	obs := enc.Encode(c, p)
	want := map[int]float64{
		PodLifetime: math.Log(100) * durationScale, PodLifetimeLevel: 1,
		PodQueue: math.Log(3) / math.Log(1001), PodQueueCPU: 3000.0 / 7000, PodQueueMem: 2048.0 / 10240,
		PodQueueRank: 1, // q is smaller
	}
	for k, w := range want {
		if !near(obs.Pod[k], w) {
			t.Errorf("pod column %d = %v, want %v", k, obs.Pod[k], w)
		}
	}
	c.NotePending(q, false)
	if obs := enc.Encode(c, q); !near(obs.Pod[PodLifetimeLevel], 2.0/3) || !near(obs.Pod[PodQueueRank], 0) {
		t.Errorf("unlisted pod: level %v rank %v, want 2/3 and 0", obs.Pod[PodLifetimeLevel], obs.Pod[PodQueueRank])
	}
}
