package ppo

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/agent"
	"github.com/kubesim/kubesim/env"
)

// gatedSetup is a small environment whose prior is a gate over tetris and
// kube-default-nospread, and a trainer config of total steps with a zero
// correction, evaluated every evalFreq steps on 3 episodes.
func gatedSetup(total, evalFreq int64) (env.Config, Config) {
	ec := env.DefaultConfig()
	ec.MinNodes, ec.MaxNodes = 3, 5
	ec.Workload.PodsPerNode = 30
	ec.MaxSteps = 128
	ec.Prior = env.Prior{Heuristics: []string{"tetris", "kube-default-nospread"}, Scale: 20, Pending: -10, Normalize: env.Range}
	cfg := smallConfig(total)
	cfg.Prior, cfg.ZeroInit = true, true
	cfg.EvalFreq, cfg.EvalEpisodes = evalFreq, 3
	return ec, cfg
}

// trainProgress trains tr to the end and reads the progress.csv it wrote
// in dir.
func trainProgress(t *testing.T, tr *Trainer, dir string) (Summary, *ProgressTable) {
	t.Helper()
	sum, err := tr.Train(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	prog, err := ReadProgress(filepath.Join(dir, ProgressFile))
	if err != nil {
		t.Fatal(err)
	}
	return sum, prog
}

// A gated prior (prior.heuristics) trains a policy whose gate mixes as
// many priors, and its checkpoints keep the gate and the heuristics. With
// ppo.select: unschedulable, best.ckpt is the first evaluation with the
// fewest unschedulable pods, whatever its reward, and its score is minus
// that count.
func TestGatedTrainingSelectsOnUnschedulable(t *testing.T) {
	ec, cfg := gatedSetup(1024, 256)
	cfg.Select = SelectUnschedulable
	dir := t.TempDir()
	tr, err := New(cfg, ec, nil, nil, Options{Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	if g := tr.Policy().Config().Gate; g != 2 {
		t.Fatalf("policy gate %d, want 2 (two prior heuristics)", g)
	}
	sum, prog := trainProgress(t, tr, dir)
	uns, ok := prog.Column("eval/unschedulable")
	if !ok || len(uns) != 4 {
		t.Fatalf("eval/unschedulable %v, want 4 evaluations", uns)
	}
	if best := slices.Min(uns); sum.BestEvalScore != -best {
		t.Errorf("best score %v, want minus the fewest unschedulable pods %v (evaluations %v)", sum.BestEvalScore, best, uns)
	}
	pol, ecLoaded, err := agent.Load(filepath.Join(dir, BestCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	if pol.Config().Gate != 2 || !slices.Equal(ecLoaded.Prior.Heuristics, ec.Prior.Heuristics) {
		t.Errorf("best.ckpt: gate %d, heuristics %v", pol.Config().Gate, ecLoaded.Prior.Heuristics)
	}
	v, err := strconv.ParseFloat(pol.Meta()[metaBest], 64)
	if err != nil || v != sum.BestEvalScore || math.IsNaN(v) {
		t.Errorf("best.ckpt's score %v (%v), want %v", v, err, sum.BestEvalScore)
	}
	// the checkpoint acts on the environment it records
	ev, err := agent.Evaluate(context.Background(), pol, ecLoaded, nil, 3, agent.EvalSeed)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Unschedulable != -sum.BestEvalScore {
		t.Errorf("best.ckpt re-evaluated: %v unschedulable, recorded %v", ev.Unschedulable, -sum.BestEvalScore)
	}
}

// ppo.select accepts reward and unschedulable only.
func TestSelectValidate(t *testing.T) {
	c := smallConfig(256)
	c.Select = "count"
	if err := c.Validate(); err == nil {
		t.Error("ppo.select: count accepted")
	}
	for _, s := range []string{"", SelectReward, SelectUnschedulable} {
		c.Select = s
		if err := c.Validate(); err != nil {
			t.Errorf("ppo.select %q: %v", s, err)
		}
	}
}

// ppo.eval_start evaluates the untrained policy before the first update:
// a run of two rollouts evaluates twice, the first figure is the untrained
// policy's (the priors' mean, with a fresh gate and a zero correction) on
// the same episodes, and best.ckpt is the better of the two; without
// eval_freq it is refused.
func TestEvalStart(t *testing.T) {
	ec, cfg := gatedSetup(512, 512)
	cfg.EvalStart = true
	dir := t.TempDir()
	tr, err := New(cfg, ec, nil, nil, Options{Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	start := filepath.Join(t.TempDir(), "start.ckpt")
	ecJSON, err := json.Marshal(ec)
	if err != nil {
		t.Fatal(err)
	}
	meta := map[string]string{agent.MetaEnv: string(ecJSON)}
	if err := tr.Policy().Save(start, meta); err != nil {
		t.Fatal(err)
	}
	sum, prog := trainProgress(t, tr, dir)
	col, ok := prog.Column("eval/mean_reward")
	rew := slices.DeleteFunc(slices.Clone(col), math.IsNaN) // rows without an evaluation
	if !ok || len(rew) != 2 || math.IsNaN(col[0]) {
		t.Fatalf("eval/mean_reward %v, want 2 evaluations (the start and step 512)", col)
	}
	if sum.BestEvalScore != slices.Max(rew) {
		t.Errorf("best score %v; evaluations %v", sum.BestEvalScore, rew)
	}
	evalOf := func(path string) agent.EvalResult {
		pol, ecl, err := agent.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := agent.Evaluate(context.Background(), pol, ecl, nil, 3, agent.EvalSeed)
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	s := evalOf(start)
	if s.MeanReward != rew[0] {
		t.Errorf("the untrained policy's reward %v; the first evaluation recorded %v", s.MeanReward, rew[0])
	}
	if b := evalOf(filepath.Join(dir, BestCheckpoint)); b.MeanReward != slices.Max(rew) {
		t.Errorf("best.ckpt's reward %v; want the better evaluation's %v (of %v)", b.MeanReward, slices.Max(rew), rew)
	}
	if rew[0] == rew[1] {
		t.Error("the update did not change the evaluation: the test cannot tell the start from the trained policy")
	}
	cfg.EvalFreq = 0
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "eval_start") {
		t.Errorf("eval_start without eval_freq: %v; want an error naming eval_start", err)
	}
}
