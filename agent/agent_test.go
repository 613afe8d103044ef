package agent

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/model"
	"github.com/kubesim/kubesim/sim"
)

// obs makes an observation of n nodes whose features are all v.
func obs(n int, v float64) env.Obs {
	o := env.Obs{N: n, Pod: make([]float64, env.PodFeatures), Nodes: make([]float64, n*env.NodeFeatures),
		Domain: make([]int32, n), Mask: make([]bool, n+1)}
	for i := range o.Nodes {
		o.Nodes[i] = v
	}
	for i := range n {
		o.Domain[i] = int32(i % 2)
		o.Mask[i] = i != 1 // node 1 infeasible
	}
	o.Mask[n] = true
	return o
}

func TestPaddedN(t *testing.T) {
	// multiples of 4 up to 64, of 16 up to 256, of 64 above
	for _, c := range [][2]int{{1, 4}, {4, 4}, {5, 8}, {64, 64}, {65, 80}, {256, 256}, {257, 320}} {
		if got := PaddedN(c[0]); got != c[1] {
			t.Errorf("PaddedN(%d) = %d; want %d", c[0], got, c[1])
		}
	}
}

// TestFill: a batch of 3 and 6 nodes pads both to 8; padding rows are
// zero, invalid, masked and in no domain; Pending moves to index 8.
func TestFill(t *testing.T) {
	var b model.Batch
	Fill(&b, []env.Obs{obs(3, 1), obs(6, 2)})
	if b.B != 2 || b.N != 8 {
		t.Fatalf("batch %d x %d; want 2 x 8", b.B, b.N)
	}
	d := env.NodeFeatures
	for s, n := range []int{3, 6} {
		for i := range b.N {
			valid, mask, dom := b.NodeValid[s*8+i], b.Mask[s*9+i], b.Domain[s*8+i]
			row := b.Nodes[(s*8+i)*d : (s*8+i+1)*d]
			if i < n {
				if !valid || mask != (i != 1) || dom != int32(i%2) || row[0] != float64(s+1) {
					t.Errorf("obs %d node %d: valid %v mask %v domain %d feature %v", s, i, valid, mask, dom, row[0])
				}
				continue
			}
			if valid || mask || dom != -1 || row[0] != 0 {
				t.Errorf("obs %d padding row %d: valid %v mask %v domain %d feature %v", s, i, valid, mask, dom, row[0])
			}
		}
		if !b.Mask[s*9+8] {
			t.Errorf("obs %d: Pending (index 8) not allowed", s)
		}
	}
	// actions map between the environment's Pending (n) and the batch's (8)
	if ToModel(3, 3, 8) != 8 || ToEnv(8, 3, 8) != 3 || ToModel(2, 3, 8) != 2 || ToEnv(2, 3, 8) != 2 {
		t.Error("Pending or a node index mapped wrongly between env and batch")
	}
}

// TestFillPrior: priors are laid out like the mask, Pending's at index 8,
// padding entries and an observation without a prior 0; a batch of
// observations without priors has none, even after one that had.
func TestFillPrior(t *testing.T) {
	a, b, c := obs(3, 1), obs(6, 2), obs(2, 3)
	a.Prior = []float64{-1, 0, -0.5, -2}
	b.Prior = []float64{-0.1, 0, -0.2, -0.3, -0.4, -0.5, -3}
	var bt model.Batch
	Fill(&bt, []env.Obs{a, b, c})
	want := []float64{
		-1, 0, -0.5, 0, 0, 0, 0, 0, -2,
		-0.1, 0, -0.2, -0.3, -0.4, -0.5, 0, 0, -3,
		0, 0, 0, 0, 0, 0, 0, 0, 0,
	}
	if len(bt.Prior) != len(want) {
		t.Fatalf("%d prior entries, want %d", len(bt.Prior), len(want))
	}
	for i, w := range want {
		if bt.Prior[i] != w {
			t.Errorf("prior[%d] = %v, want %v", i, bt.Prior[i], w)
		}
	}
	Fill(&bt, []env.Obs{obs(3, 1), c})
	if len(bt.Prior) != 0 {
		t.Errorf("observations without priors give %d prior entries, want none", len(bt.Prior))
	}
}

// TestLoadAndSchedule saves a fresh policy as the trainer would, loads it,
// and replays a small workload with it: every decision is a feasible node
// or Pending, and the environment config comes back from the metadata.
func TestLoadAndSchedule(t *testing.T) {
	pol, err := model.New(model.Config{NodeFeatures: env.NodeFeatures, PodFeatures: env.PodFeatures, Hidden: 16, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	ec := env.DefaultConfig()
	ec.Reference.CPU = 48000
	data, _ := json.Marshal(ec)
	path := filepath.Join(t.TempDir(), "p.ckpt")
	if err := pol.Save(path, map[string]string{MetaEnv: string(data)}); err != nil {
		t.Fatal(err)
	}
	got, gotEC, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if gotEC.Reference.CPU != 48000 {
		t.Errorf("reference CPU %d; want the checkpoint's 48000", gotEC.Reference.CPU)
	}
	s, err := NewScheduler("learned", got, gotEC)
	if err != nil {
		t.Fatal(err)
	}
	o := sim.DefaultSyntheticOptions(4)
	o.Pods = 200
	w, err := sim.Synthetic(o)
	if err != nil {
		t.Fatal(err)
	}
	e, err := sim.New(w, sim.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var decisions, bound int
	for {
		p, ok := e.Next()
		if !ok {
			break
		}
		switch out := e.Decide(s.Schedule(e.Cluster(), p)); out {
		case sim.OutcomeInvalid:
			t.Fatalf("decision %d for %s: a node the filters refuse", decisions, p.Spec.Name)
		case sim.OutcomeBound:
			bound++
		}
		decisions++
	}
	if s.Err != nil || bound == 0 || e.Result().Pods != 200 {
		t.Errorf("replay: error %v, %d of %d decisions bound, %d pods", s.Err, bound, decisions, e.Result().Pods)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.ckpt")
	if err := os.WriteFile(corrupt, []byte("not a checkpoint"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(dir, "missing.ckpt"), corrupt} {
		if _, _, err := Load(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("Load(%s) = %v; want an error naming the file", path, err)
		}
	}
}

// TestGateStats replays a workload with a gated policy whose gate is fresh
// (zero weights: each of its 3 priors weighs 1/3 at every decision) and
// reads the mean weights back from the replay's Result.SchedulerStats, one
// decision counted per Schedule call; a policy without a gate reports
// nothing, so heuristics' and ungated rows keep no such column.
func TestGateStats(t *testing.T) {
	ec := env.DefaultConfig()
	ec.Prior = env.Prior{Heuristics: []string{"kube-default-nospread", "tetris", "holes"}, Scale: 20, Pending: -10, Normalize: env.Range}
	o := sim.DefaultSyntheticOptions(4)
	o.Pods = 150
	w, err := sim.Synthetic(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, gate := range []int{3, 0} {
		cfg := model.Config{NodeFeatures: env.NodeFeatures, PodFeatures: env.PodFeatures, Hidden: 16, Seed: 3, Prior: true, ZeroInit: true, Gate: gate}
		pol, err := model.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		pc := ec
		if gate == 0 {
			pc.Prior = env.Prior{Heuristic: "tetris", Scale: 20, Pending: -10, Normalize: env.Range}
		}
		s, err := NewScheduler("ppo", pol, pc)
		if err != nil {
			t.Fatal(err)
		}
		r, err := sim.Run(context.Background(), w, sim.DefaultConfig(), s)
		if err != nil || s.Err != nil {
			t.Fatal(err, s.Err)
		}
		st := r.SchedulerStats
		if gate == 0 {
			if st != nil {
				t.Errorf("no gate: stats %v, want none", st)
			}
			continue
		}
		if st["gate.decisions"] < float64(o.Pods) {
			t.Errorf("gate.decisions = %v; want at least one per pod (%d)", st["gate.decisions"], o.Pods)
		}
		for _, h := range ec.Prior.Heuristics {
			if v, ok := st["gate."+h]; !ok || math.Abs(v-1.0/3) > 1e-6 {
				t.Errorf("gate.%s = %v (present %v); want 1/3", h, v, ok)
			}
		}
	}
}

// alwaysAct is Scheduler without the forced-Pending shortcut: the policy's
// forward pass for every attempt.
type alwaysAct struct {
	*Scheduler
	forced int
}

func (a *alwaysAct) Schedule(c *sim.Cluster, p *sim.Pod) int {
	s := a.Scheduler
	s.obs[0] = s.enc.Encode(c, p)
	if Forced(&s.obs[0]) {
		a.forced++
	}
	Fill(&s.b, s.obs[:])
	if err := s.pol.Act(&s.b, true, nil, &s.act); err != nil {
		s.Err = err
		return sim.PendingDecision
	}
	if act := s.act.Actions[0]; act < c.Len() {
		return act
	}
	return sim.PendingDecision
}

// TestForcedPendingShortcut: on an overloaded cluster, where many attempts
// find no feasible node, the Scheduler that skips the forward pass for
// those replays exactly as one that runs it for every attempt (and the
// shortcut was taken: the test would check nothing otherwise).
func TestForcedPendingShortcut(t *testing.T) {
	ec := env.DefaultConfig()
	ec.Prior = env.Prior{Heuristic: "tetris", Scale: 20, Pending: -10, Normalize: env.Range}
	pol, err := model.New(model.Config{NodeFeatures: env.NodeFeatures, PodFeatures: env.PodFeatures, Hidden: 16, Seed: 3, Prior: true, LogitClip: 1})
	if err != nil {
		t.Fatal(err)
	}
	o := sim.DefaultSyntheticOptions(4)
	o.Pods, o.Load = 400, 3
	w, err := sim.Synthetic(o)
	if err != nil {
		t.Fatal(err)
	}
	replay := func(s sim.Scheduler) *sim.Result {
		r, err := sim.Run(context.Background(), w, sim.DefaultConfig(), s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	short, err := NewScheduler("p", pol, ec)
	if err != nil {
		t.Fatal(err)
	}
	full, err := NewScheduler("p", pol, ec)
	if err != nil {
		t.Fatal(err)
	}
	always := &alwaysAct{Scheduler: full}
	a, b := replay(short), replay(always)
	if always.forced == 0 || a.Unschedulable == 0 {
		t.Fatalf("%d forced attempts, %d unschedulable: the workload does not overload the cluster", always.forced, a.Unschedulable)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("with the shortcut %+v\nwithout %+v", a, b)
	}
}
