package ppo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/agent"
	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/model"
)

// smallCPUES is a TrainES problem that runs in a second: small synthetic
// clusters under a tetris prior with a zero-initialised correction, and a
// noise scale large enough that candidates decide differently.
func smallCPUES() (ESConfig, Config, env.Config) {
	ec := env.DefaultConfig()
	ec.MinNodes, ec.MaxNodes = 3, 6
	ec.Workload.PodsPerNode = 30
	ec.Workload.Load = 4
	ec.Prior = env.Prior{Heuristic: "tetris", Scale: 20, Pending: -10, Normalize: env.Range}
	cfg := smallConfig(512)
	cfg.Prior, cfg.ZeroInit, cfg.LogitClip = true, true, 3
	cfg.Select, cfg.EvalEpisodes = SelectUnschedulable, 3
	es := ESConfig{Generations: 2, Pairs: 3, Episodes: 2, Sigma: 1, LearningRate: 0.5, EvalFreq: 1, Workers: 2}
	return es, cfg, ec
}

func cpuLastWeights(t *testing.T, dir string) []float64 {
	t.Helper()
	pol, _, err := agent.Load(filepath.Join(dir, LastCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	return pol.LogitWeights(nil)
}

func csvRows(t *testing.T, path string) [][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		rows = append(rows, strings.Split(l, ","))
	}
	return rows
}

// TestTrainES: the start validates as the prior heuristic exactly (a zero
// correction is tetris with lowest ties), the first generation's centre
// plays the prior's count exactly, the candidates differ (overloaded
// clusters, so that counts are not all 0), the weights move,
// best.ckpt loads as a CPU policy, and one worker gives the same weights
// as two bit for bit.
func TestTrainES(t *testing.T) {
	es, cfg, ec := smallCPUES()
	run := func(es ESConfig, out, resume string) Summary {
		t.Helper()
		sum, err := TrainES(context.Background(), es, cfg, ec, nil, nil, Options{Out: out, Resume: resume})
		if err != nil {
			t.Fatal(err)
		}
		return sum
	}
	a := t.TempDir()
	sum := run(es, a, "")
	if sum.Updates != 2 || sum.Steps == 0 || sum.Interrupted {
		t.Fatalf("summary %+v; want 2 generations", sum)
	}
	val := csvRows(t, filepath.Join(a, "validation.csv"))
	if len(val) != 4 || !slices.Equal(val[0], esCPUValHeader) {
		t.Fatalf("validation.csv %v: want its header, the start and 2 generations", val)
	}
	if val[1][2] != val[1][3] {
		t.Errorf("the start validates at %s, the prior at %s; want equal", val[1][2], val[1][3])
	}
	prog := csvRows(t, filepath.Join(a, "progress.csv"))
	if len(prog) != 3 || !slices.Equal(prog[0], esCPUHeader) {
		t.Fatalf("progress.csv %v: want its header and 2 generations", prog)
	}
	if g := prog[1]; g[6] != g[7] || g[8] != "0" {
		t.Errorf("generation 1: centre %s, prior %s, gain %s; want the centre to be the prior", g[6], g[7], g[8])
	}
	if prog[1][4] == prog[1][5] && prog[2][4] == prog[2][5] {
		t.Errorf("progress.csv %v: in no generation did the candidates differ, so the test checks nothing", prog)
	}
	w2 := cpuLastWeights(t, a)
	fresh, err := newPolicyForTest(cfg, ec)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(w2, fresh) {
		t.Error("two generations left the weights where they started")
	}
	if _, _, err := agent.Load(filepath.Join(a, BestCheckpoint)); err != nil {
		t.Errorf("best.ckpt: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(a, CurvePNG)); err != nil || fi.Size() == 0 {
		t.Errorf("no learning curve: %v", err)
	}
	one := es
	one.Workers = 1
	b := t.TempDir()
	run(one, b, "")
	if !slices.Equal(cpuLastWeights(t, b), w2) {
		t.Error("one worker and two gave different weights")
	}
}

// TestTrainESResume: one generation, then a resume to two, ends with the
// weights of an uninterrupted two-generation run bit for bit; a resume with
// another search is refused naming it.
func TestTrainESResume(t *testing.T) {
	es, cfg, ec := smallCPUES()
	ctx := context.Background()
	whole := t.TempDir()
	if _, err := TrainES(ctx, es, cfg, ec, nil, nil, Options{Out: whole}); err != nil {
		t.Fatal(err)
	}
	part := t.TempDir()
	first := es
	first.Generations = 1
	if _, err := TrainES(ctx, first, cfg, ec, nil, nil, Options{Out: part}); err != nil {
		t.Fatal(err)
	}
	last := filepath.Join(part, LastCheckpoint)
	other := es
	other.Sigma = 0.5
	if _, err := TrainES(ctx, other, cfg, ec, nil, nil, Options{Out: part, Resume: last}); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "sigma") {
		t.Errorf("resuming with another sigma: %v; want ErrConfig naming the search's keys", err)
	}
	if _, err := TrainES(ctx, es, cfg, ec, nil, nil, Options{Out: part, Resume: last}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cpuLastWeights(t, part), cpuLastWeights(t, whole)) {
		t.Error("a resumed run ended with other weights than an uninterrupted one")
	}
	if p, w := csvRows(t, filepath.Join(part, "progress.csv")), csvRows(t, filepath.Join(whole, "progress.csv")); len(p) != len(w) {
		t.Errorf("the resumed progress.csv has %d rows, the uninterrupted one %d", len(p), len(w))
	}
}

// TestTrainESConfig: ES selects on the unschedulable count it searches, so
// ppo.select: reward is refused naming the key.
func TestTrainESConfig(t *testing.T) {
	es, cfg, ec := smallCPUES()
	cfg.Select = SelectReward
	_, err := TrainES(context.Background(), es, cfg, ec, nil, nil, Options{Out: t.TempDir()})
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "ppo.select") {
		t.Errorf("select reward: %v; want ErrConfig naming ppo.select", err)
	}
}

// newPolicyForTest is the logit weights of TrainES's untrained policy.
func newPolicyForTest(cfg Config, ec env.Config) ([]float64, error) {
	pol, err := model.New(cpuModelConfig(cfg, ec))
	if err != nil {
		return nil, err
	}
	return pol.LogitWeights(nil), nil
}
