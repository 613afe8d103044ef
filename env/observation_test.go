package env

import (
	"errors"
	"fmt"
	"math/rand/v2"
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
	for _, want := range []string{sched.NameTetris, sched.NameKubeDefault, sched.NameBestFit, sched.NameMostAllocated} {
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
