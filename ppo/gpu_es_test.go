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
	"github.com/kubesim/kubesim/model"
)

// TestCentredRanks: by hand, [3, 1, 2, 2] ranks 3, 0, 1.5, 1.5 of 0..3,
// scaled to [-0.5, 0.5]; one value is 0.
func TestCentredRanks(t *testing.T) {
	got := centredRanks([]float64{3, 1, 2, 2})
	want := []float64{0.5, -0.5, 0, 0}
	if !slices.Equal(got, want) {
		t.Errorf("centredRanks = %v, want %v", got, want)
	}
	if got := centredRanks([]float64{7}); got[0] != 0 {
		t.Errorf("one value: %v, want 0", got)
	}
}

func smallES() ESConfig {
	return ESConfig{Generations: 2, Pairs: 2, Episodes: 2, Sigma: 0.05, LearningRate: 0.05, EvalFreq: 1, Workers: 2}
}

// lastWeights reads the logit weights of a run folder's last.ckpt.
func lastWeights(t *testing.T, dir string) []float64 {
	t.Helper()
	pol, _, err := agent.LoadGPU(filepath.Join(dir, LastCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	return pol.LogitWeights(nil)
}

// TestTrainGPUES: two generations run and validate after the start, which
// validates as FGD exactly (a zero correction over FGD's prior), and the
// first generation's centre plays FGD's allocation exactly; best.ckpt
// is written; the weights moved; and the same run with one worker gives
// the same weights bit for bit (results do not depend on the workers).
func TestTrainGPUES(t *testing.T) {
	w := smallOpenb(t)
	cfg, ec := smallGPUConfig()
	es := smallES()
	opts := GPUOptions{ValSeeds: []uint64{1001}, ValInflate: 1.3}
	run := func(es ESConfig, out, resume string) GPUSummary {
		t.Helper()
		o := opts
		o.Out, o.Resume = out, resume
		sum, err := TrainGPUES(context.Background(), es, cfg, ec, w, o)
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
	val, err := os.ReadFile(filepath.Join(a, "validation.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSpace(string(val)), "\n")
	if len(rows) != 4 {
		t.Fatalf("validation.csv:\n%s\nwant a header, the start and 2 generations", val)
	}
	if f := strings.Split(rows[1], ","); f[2] != f[3] {
		t.Errorf("the start validates at %s, FGD at %s; want equal", f[2], f[3])
	}
	prog, err := os.ReadFile(filepath.Join(a, "progress.csv"))
	if err != nil {
		t.Fatal(err)
	}
	pr := strings.Split(strings.TrimSpace(string(prog)), "\n")
	if len(pr) != 3 || pr[0] != strings.Join(esHeader, ",") {
		t.Fatalf("progress.csv:\n%s\nwant the es header and 2 generations", prog)
	}
	// the first generation's centre is the untrained start, a zero
	// correction over FGD's prior: FGD on the same episodes, exactly
	if g1 := strings.Split(pr[1], ","); g1[6] != g1[7] || g1[8] != "0" {
		t.Errorf("generation 1: centre %s, selection policy %s, difference %s; want equal and 0", g1[6], g1[7], g1[8])
	}
	if _, err := os.Stat(filepath.Join(a, BestCheckpoint)); err != nil {
		t.Error(err)
	}
	wa := lastWeights(t, a)
	fresh, err := model.New(gpuModelConfig(cfg, ec))
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(wa, fresh.LogitWeights(nil)) {
		t.Error("two generations and the weights are the start's")
	}

	es1 := es
	es1.Workers = 1
	b := t.TempDir()
	run(es1, b, "")
	if !slices.Equal(wa, lastWeights(t, b)) {
		t.Error("one worker and two give different weights")
	}

}

// TestTrainGPUESResume: one generation, then a resume to two, ends with
// the weights of a run of two, bit for bit; a resume that changes the
// search (sigma) is refused.
func TestTrainGPUESResume(t *testing.T) {
	w := smallOpenb(t)
	cfg, ec := smallGPUConfig()
	es := smallES()
	es.EvalFreq = 0
	full := t.TempDir()
	if _, err := TrainGPUES(context.Background(), es, cfg, ec, w, GPUOptions{Out: full, ValInflate: 1.3}); err != nil {
		t.Fatal(err)
	}
	part := t.TempDir()
	short := es
	short.Generations = 1
	if _, err := TrainGPUES(context.Background(), short, cfg, ec, w, GPUOptions{Out: part, ValInflate: 1.3}); err != nil {
		t.Fatal(err)
	}
	resume := GPUOptions{Out: part, ValInflate: 1.3, Resume: filepath.Join(part, LastCheckpoint)}
	other := es
	other.Sigma *= 2
	if _, err := TrainGPUES(context.Background(), other, cfg, ec, w, resume); !errors.Is(err, ErrConfig) {
		t.Fatalf("resume with another sigma: %v, want ErrConfig", err)
	}
	curve := resume
	curve.Objective = ObjectiveCurve
	if _, err := TrainGPUES(context.Background(), es, cfg, ec, w, curve); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "objective") {
		t.Fatalf("resume under another objective: %v, want ErrConfig naming the objective", err)
	}
	sum, err := TrainGPUES(context.Background(), es, cfg, ec, w, resume)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Updates != 2 {
		t.Errorf("resumed to %d generations, want 2", sum.Updates)
	}
	if !slices.Equal(lastWeights(t, full), lastWeights(t, part)) {
		t.Error("one generation and a resume: not the weights of a run of two")
	}
}

func TestESConfigErrors(t *testing.T) {
	for key, mod := range map[string]func(*ESConfig){
		"es.sigma":       func(c *ESConfig) { c.Sigma = 0 },
		"es.pairs":       func(c *ESConfig) { c.Pairs = 0 },
		"es.generations": func(c *ESConfig) { c.Generations = -1 },
		"es.workers":     func(c *ESConfig) { c.Workers = 100 },
	} {
		c := smallES()
		mod(&c)
		err := c.Validate()
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: %v; want ErrConfig naming it", key, err)
		}
	}
}
