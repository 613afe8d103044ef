package ppo

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/agent"
	"github.com/kubesim/kubesim/env"
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
// search (sigma, loss_weight) is refused.
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
	averse := es
	averse.LossWeight = 2
	if _, err := TrainGPUES(context.Background(), averse, cfg, ec, w, resume); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "loss_weight") {
		t.Fatalf("resume with another loss_weight: %v, want ErrConfig naming it", err)
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
		"es.sigma":        func(c *ESConfig) { c.Sigma = 0 },
		"es.pairs":        func(c *ESConfig) { c.Pairs = 0 },
		"es.generations":  func(c *ESConfig) { c.Generations = -1 },
		"es.workers":      func(c *ESConfig) { c.Workers = 100 },
		"es.loss_weight":  func(c *ESConfig) { c.LossWeight = -1 },
		"es.loss_weight ": func(c *ESConfig) { c.LossWeight = math.NaN() },
	} {
		c := smallES()
		mod(&c)
		err := c.Validate()
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: %v; want ErrConfig naming it", key, err)
		}
	}
}

// TestLossAverse: a hand-computed case. Episodes 80 and 82 against the
// selection policy's 81 and 80: mean 81, shortfalls 1 and 0, so weight 2
// gives 81 - 2*(1/2) = 80, weight 0 the mean.
func TestLossAverse(t *testing.T) {
	v, base := []float64{80, 82}, []float64{81, 80}
	if got := lossAverse(v, base, 2); got != 80 {
		t.Errorf("lossAverse weight 2 = %v; want 80", got)
	}
	if got := lossAverse(v, base, 0); got != 81 {
		t.Errorf("lossAverse weight 0 = %v; want the mean 81", got)
	}
}

// TestTrainGPUESLossWeight: a loss-averse run (es.loss_weight 50) logs the
// same centre and selection policy in its first generation as a plain run
// (they are not weighed), while its candidates' mean fitness is lower: the
// candidates that perturb the start fall short of the selection policy on
// some episode here (sigma 1), and each point short costs 50. A CPU run
// refuses the key.
func TestTrainGPUESLossWeight(t *testing.T) {
	w := smallOpenb(t)
	cfg, ec := smallGPUConfig()
	run := func(lw float64) []string {
		t.Helper()
		es := smallES()
		es.EvalFreq, es.LossWeight, es.Sigma = 0, lw, 1
		out := t.TempDir()
		if _, err := TrainGPUES(context.Background(), es, cfg, ec, w, GPUOptions{Out: out, ValInflate: 1.3}); err != nil {
			t.Fatal(err)
		}
		prog, err := os.ReadFile(filepath.Join(out, "progress.csv"))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Split(strings.Split(strings.TrimSpace(string(prog)), "\n")[1], ",")
	}
	plain, averse := run(0), run(50)
	if strings.Join(plain[6:9], ",") != strings.Join(averse[6:9], ",") {
		t.Errorf("generation 1 logs centre,selection,difference %v; the plain run %v: want the same", averse[6:9], plain[6:9])
	}
	pm, err1 := strconv.ParseFloat(plain[5], 64)
	am, err2 := strconv.ParseFloat(averse[5], 64)
	if err1 != nil || err2 != nil || !(am < pm-1) {
		t.Errorf("candidates' mean fitness %s, plain %s: want the loss-averse one lower by more than a point", averse[5], plain[5])
	}
	es := smallES()
	es.LossWeight = 1
	if _, err := TrainES(context.Background(), es, DefaultConfig(), env.DefaultConfig(), nil, nil, Options{Out: t.TempDir()}); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "loss_weight") {
		t.Errorf("a CPU run with es.loss_weight: %v; want ErrConfig naming it", err)
	}
}
