package ppo

import (
	"context"
	"encoding/csv"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/agent"
	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/internal/openbtest"
	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

// smallOpenb is the default pod list on the first 20 GPU nodes of the
// openb node list (about 90 GPUs).
func smallOpenb(t *testing.T) *sim.GPUWorkload { return openbtest.Default(t, 20) }

func smallGPUConfig() (Config, env.GPUConfig) {
	cfg := DefaultConfig()
	cfg.NEnvs, cfg.NSteps, cfg.BatchSize, cfg.NEpochs = 2, 32, 16, 2
	cfg.TotalTimesteps, cfg.EvalFreq = 128, 64
	cfg.Hidden, cfg.Rounds = 8, 1
	cfg.Prior, cfg.ZeroInit = true, true
	cfg.NormalizeReward = false
	ec := env.DefaultGPUConfig()
	ec.MinNodes, ec.MaxNodes = 5, 10
	ec.Prior, ec.PriorScale, ec.PriorPending = sched.NameFGD, 5, -10
	return cfg, ec
}

// TestTrainGPUZeroLearningRate trains with a learning rate of 1e-12 (0 is
// refused) from a zero correction over FGD's prior: the correction stays
// below 1e-10 logits, far under the prior's gaps (2e-5 at least), so each
// validation equals FGD's own allocation on the validation seeds; and the
// run's files are written and resumable.
func TestTrainGPUZeroLearningRate(t *testing.T) {
	w := smallOpenb(t)
	cfg, ec := smallGPUConfig()
	cfg.LearningRate = 1e-12
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	opts := GPUOptions{Out: out, ValSeeds: []uint64{1001, 1002}, ValInflate: 1.3}
	sum, err := TrainGPU(context.Background(), cfg, ec, w, opts)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Steps != 128 || sum.Updates != 2 || sum.Interrupted {
		t.Fatalf("summary %+v; want 128 steps in 2 updates", sum)
	}
	if math.IsNaN(sum.SelectVal) || sum.BestVal != sum.SelectVal {
		t.Errorf("validation %v, FGD %v; want equal (a zero correction is FGD)", sum.BestVal, sum.SelectVal)
	}
	for _, f := range []string{"progress.csv", "validation.csv", LastCheckpoint, BestCheckpoint} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	data, _ := os.ReadFile(filepath.Join(out, "progress.csv"))
	if n := strings.Count(string(data), "\n"); n != 3 {
		t.Errorf("progress.csv has %d lines; want a header and 2 updates", n)
	}
	if _, _, err := agent.LoadGPU(filepath.Join(out, BestCheckpoint)); err != nil {
		t.Errorf("best.ckpt: %v", err)
	}
	// resume for 2 more updates
	cfg.TotalTimesteps = 256
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	opts.Resume = filepath.Join(out, LastCheckpoint)
	sum, err = TrainGPU(context.Background(), cfg, ec, w, opts)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Steps != 256 || sum.Updates != 4 {
		t.Errorf("resumed: %d steps in %d updates; want 256 in 4", sum.Steps, sum.Updates)
	}
}

// TestTrainGPURuns runs two updates with the default learning rate: every
// loss in progress.csv is finite, the KL divergence is not 0 from the
// second update on (the first update changed the policy) and last.ckpt
// loads as a GPU policy.
func TestTrainGPURuns(t *testing.T) {
	w := smallOpenb(t)
	cfg, ec := smallGPUConfig()
	cfg.EvalFreq = 0
	out := t.TempDir()
	sum, err := TrainGPU(context.Background(), cfg, ec, w, GPUOptions{Out: out, ValInflate: 1.3})
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(sum.BestVal) || sum.Updates != 2 {
		t.Errorf("summary %+v; want 2 updates and no validation", sum)
	}
	f, err := os.Open(filepath.Join(out, "progress.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) != 3 {
		t.Fatalf("progress.csv: %d rows, %v; want 3", len(rows), err)
	}
	for _, r := range rows[1:] {
		for c := 6; c <= 11; c++ {
			if v, err := strconv.ParseFloat(r[c], 64); err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				t.Errorf("update %s: %s = %q; want a finite number", r[0], rows[0][c], r[c])
			}
		}
	}
	if kl, _ := strconv.ParseFloat(rows[2][10], 64); kl == 0 {
		t.Error("approx_kl 0 in the second update: the policy did not move")
	}
	if _, _, err := agent.LoadGPU(filepath.Join(out, LastCheckpoint)); err != nil {
		t.Errorf("last.ckpt: %v", err)
	}
}

func TestTrainGPUErrors(t *testing.T) {
	w := smallOpenb(t)
	for _, tc := range []struct {
		name string
		mod  func(*Config, *env.GPUConfig, *GPUOptions)
	}{
		{"no output folder", func(_ *Config, _ *env.GPUConfig, o *GPUOptions) { o.Out = "" }},
		{"prior without env prior", func(_ *Config, e *env.GPUConfig, _ *GPUOptions) { e.Prior, e.PriorScale, e.PriorPending = "", 0, 0 }},
		{"eval without seeds", func(_ *Config, _ *env.GPUConfig, o *GPUOptions) { o.ValSeeds = nil }},
		{"normalize reward", func(c *Config, _ *env.GPUConfig, _ *GPUOptions) { c.NormalizeReward = true }},
	} {
		cfg, ec := smallGPUConfig()
		opts := GPUOptions{Out: t.TempDir(), ValSeeds: []uint64{1}, ValInflate: 1.3}
		tc.mod(&cfg, &ec, &opts)
		if _, err := TrainGPU(context.Background(), cfg, ec, w, opts); err == nil || !errors.Is(err, ErrConfig) {
			t.Errorf("%s: error %v; want ErrConfig", tc.name, err)
		}
	}
}
