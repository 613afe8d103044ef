package ppo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/env"
)

func TestTeacherAction(t *testing.T) {
	for _, tc := range []struct {
		name  string
		mask  []bool
		prior []float64
		want  int
	}{
		{"best allowed node", []bool{true, true, true, true}, []float64{-1, -0.2, -3, -2}, 1},
		{"masked node's higher prior ignored", []bool{true, false, true, true}, []float64{-1, 0, -0.5, -2}, 2},
		{"Pending best", []bool{true, true, false, true}, []float64{-3, -2, 0, -1}, 3},
		{"tie: lowest index", []bool{false, true, true, true}, []float64{0, -1, -1, -1}, 1},
	} {
		o := env.Obs{N: 3, Mask: tc.mask, Prior: tc.prior}
		if got, err := TeacherAction(&o); err != nil || got != tc.want {
			t.Errorf("%s: %d, %v; want %d", tc.name, got, err, tc.want)
		}
	}
	if _, err := TeacherAction(&env.Obs{N: 2, Mask: []bool{true, true, true}}); err == nil {
		t.Error("no error without a prior")
	}
}

// Behaviour cloning of best fit (the packing toy's prior) by a policy
// without a prior, from the node features alone: held-out agreement over
// 95%, logged in bc.csv and progress.csv, and the cloned greedy policy
// places both items like best fit (PPO after it runs at a negligible
// learning rate).
func TestBehaviourCloning(t *testing.T) {
	cfg := smallConfig(256)
	cfg.BCSteps, cfg.BCEpochs, cfg.BCLearningRate = 2048, 8, 3e-3
	cfg.LearningRate, cfg.AnnealLR = 1e-12, false
	tr := train(t, cfg, newToyVec(4, packPriorReset, packPriorStep), Options{})
	if tr.Policy().Config().Prior {
		t.Fatal("the policy has a prior; this test clones from features alone")
	}
	data, err := os.ReadFile(filepath.Join(tr.opts.Out, CloneFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2+cfg.BCEpochs || lines[0] != "epoch,loss,train_agreement,heldout_agreement" {
		t.Fatalf("%s:\n%s", CloneFile, data)
	}
	last := strings.Split(lines[len(lines)-1], ",")
	held, err := strconv.ParseFloat(last[3], 64)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("held-out agreement with best fit after %d epochs: %.3f", cfg.BCEpochs, held)
	if held <= 0.95 {
		t.Errorf("held-out agreement %.3f, want > 0.95\n%s", held, data)
	}
	prog, err := ReadProgress(filepath.Join(tr.opts.Out, ProgressFile))
	if err != nil {
		t.Fatal(err)
	}
	if col, ok := prog.Column("bc/heldout_agreement"); !ok || len(col) == 0 || col[0] != held {
		t.Errorf("progress.csv bc/heldout_agreement %v, want %v in the first row", col, held)
	}
	if got := greedyReturn(t, tr.Policy(), packReset, packStep, 200, 321); got < 1.95 {
		t.Errorf("cloned policy placed %.3f items per episode, best fit 2", got)
	}
}

// Cloning needs observations with a prior: the teacher is the prior's
// heuristic.
func TestBehaviourCloningNeedsPrior(t *testing.T) {
	cfg := smallConfig(256)
	cfg.BCSteps = 64
	vec := newToyVec(4, packReset, packStep)
	tr, err := New(cfg, env.DefaultConfig(), nil, nil, Options{Out: t.TempDir(), NewVec: func(int) (Vec, error) { return vec, nil }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Train(context.Background()); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "bc_steps") {
		t.Errorf("cloning without a prior: error %v, want ErrConfig naming bc_steps", err)
	}
}

// packVec adds a most-allocated prior to a real environment's
// observations (the requested CPU plus memory ratios after placing the pod,
// scaled like the env's priors), standing in for the environment's own
// prior heuristic.
type packVec struct {
	*env.VecEnv
}

func (v packVec) Reset(seed uint64) (*env.Batch, error) {
	b, err := v.VecEnv.Reset(seed)
	if err == nil {
		addPackPrior(b)
	}
	return b, err
}

func (v packVec) Step(a []int) (*env.Batch, error) {
	b, err := v.VecEnv.Step(a)
	if err == nil {
		addPackPrior(b)
	}
	return b, err
}

func addPackPrior(b *env.Batch) {
	const scale = 2.0
	for e := range b.Obs {
		o := &b.Obs[e]
		o.Prior = make([]float64, o.N+1)
		maxS := 0.0
		for i := range o.N {
			if o.Mask[i] {
				maxS = max(maxS, o.Row(i)[env.NodeCPUAfter]+o.Row(i)[env.NodeMemAfter])
			}
		}
		for i := range o.N {
			if o.Mask[i] && maxS > 0 {
				o.Prior[i] = scale * ((o.Row(i)[env.NodeCPUAfter]+o.Row(i)[env.NodeMemAfter])/maxS - 1)
			}
		}
		o.Prior[o.N] = -1.5 * scale
	}
}

// Behaviour cloning of a most-allocated heuristic on the simulator (small
// clusters), from the features alone (no prior in the policy): over 95%
// agreement on held-out decisions.
func TestBehaviourCloningOnSimulator(t *testing.T) {
	ec := env.DefaultConfig()
	ec.MinNodes, ec.MaxNodes = 3, 8
	ec.Workload.PodsPerNode = 30
	ec.MaxSteps = 200
	cfg := smallConfig(256)
	cfg.BCSteps, cfg.BCEpochs, cfg.BCLearningRate, cfg.BCHoldout = 4096, 10, 3e-3, 0.2
	cfg.LearningRate, cfg.AnnealLR = 1e-12, false
	cfg.NEnvs, cfg.NSteps = 4, 64
	dir := t.TempDir()
	tr, err := New(cfg, ec, nil, nil, Options{Out: dir, NewVec: func(n int) (Vec, error) {
		v, err := env.NewVec(ec, ec.Workload, n)
		return packVec{v}, err
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	prog, err := ReadProgress(filepath.Join(dir, ProgressFile))
	if err != nil {
		t.Fatal(err)
	}
	col, ok := prog.Column("bc/heldout_agreement")
	if !ok || len(col) == 0 {
		t.Fatal("progress.csv lacks bc/heldout_agreement")
	}
	data, _ := os.ReadFile(filepath.Join(dir, CloneFile))
	t.Logf("held-out agreement with most-allocated: %.3f\n%s", col[0], data)
	if col[0] <= 0.95 {
		t.Errorf("held-out agreement %.3f, want > 0.95", col[0])
	}
}
