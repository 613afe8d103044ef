package ppo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kubesim/kubesim/internal/atomicdir"
)

// cancelAfter is a context whose Err reports Canceled from its n+1-th call
// on: TrainGPU asks once per update (without validation), so the run stops
// after n updates, as a Ctrl-C between them would stop it.
type cancelAfter struct {
	context.Context
	n, calls atomic.Int64
}

func (c *cancelAfter) Err() error {
	if c.calls.Add(1) > c.n.Load() {
		return context.Canceled
	}
	return nil
}

// TestTrainGPURunFolder: a second run into a locked folder fails naming
// the holder's pid; a fresh run into a folder with history fails
// (ErrRunExists) and leaves progress.csv as it was, and overwrites it with
// Force; resume and force together are a config error; a finished run
// leaves its learning curve (a PNG).
func TestTrainGPURunFolder(t *testing.T) {
	w := smallOpenb(t)
	cfg, ec := smallGPUConfig()
	cfg.EvalFreq = 0
	dir := filepath.Join(t.TempDir(), "run")
	opts := GPUOptions{Out: dir, ValInflate: 1.3}

	l, err := atomicdir.Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := TrainGPU(context.Background(), cfg, ec, w, opts); !errors.Is(err, atomicdir.ErrLocked) || !strings.Contains(err.Error(), strconv.Itoa(os.Getpid())) {
		t.Fatalf("run into a locked folder: %v; want ErrLocked naming pid %d", err, os.Getpid())
	}
	l.Unlock()

	if _, err := TrainGPU(context.Background(), cfg, ec, w, opts); err != nil {
		t.Fatal(err)
	}
	png, err := os.ReadFile(filepath.Join(dir, GPUCurvePNG))
	if err != nil || !strings.HasPrefix(string(png), "\x89PNG") {
		t.Errorf("learning curve: %v; want a PNG", err)
	}
	progress := filepath.Join(dir, "progress.csv")
	old, err := os.ReadFile(progress)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := TrainGPU(context.Background(), cfg, ec, w, opts); !errors.Is(err, ErrRunExists) || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("second fresh run: %v; want ErrRunExists mentioning --force", err)
	}
	if b, _ := os.ReadFile(progress); string(b) != string(old) {
		t.Fatal("a refused run changed progress.csv")
	}
	both := opts
	both.Force, both.Resume = true, filepath.Join(dir, LastCheckpoint)
	if _, err := TrainGPU(context.Background(), cfg, ec, w, both); !errors.Is(err, ErrConfig) {
		t.Fatalf("resume and force: %v; want ErrConfig", err)
	}
	forced := opts
	forced.Force = true
	if _, err := TrainGPU(context.Background(), cfg, ec, w, forced); err != nil {
		t.Fatalf("forced run: %v", err)
	}
	if b, _ := os.ReadFile(progress); strings.Count(string(b), "\n") != 3 {
		t.Errorf("forced run's progress.csv:\n%s\nwant a header and 2 updates (the old rows replaced)", b)
	}
}

// TestTrainGPUResume: a 4-update run interrupted after its second update
// saves last.ckpt; resumed from it, the run ends at the uninterrupted run's
// step and update counts, its progress.csv has the same four steps and
// learning rates (the schedule of the whole run), and its first two rows
// are the uninterrupted run's, loss for loss (same seeds, same updates).
// The rows after the resume differ: the resumed environments start new
// episodes (GPUOptions.Resume).
func TestTrainGPUResume(t *testing.T) {
	w := smallOpenb(t)
	cfg, ec := smallGPUConfig()
	cfg.EvalFreq, cfg.TotalTimesteps = 0, 256
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	whole := GPUOptions{Out: filepath.Join(t.TempDir(), "whole"), ValInflate: 1.3}
	if _, err := TrainGPU(context.Background(), cfg, ec, w, whole); err != nil {
		t.Fatal(err)
	}
	parts := GPUOptions{Out: filepath.Join(t.TempDir(), "parts"), ValInflate: 1.3}
	ctx := &cancelAfter{Context: context.Background()}
	ctx.n.Store(2)
	sum, err := TrainGPU(ctx, cfg, ec, w, parts)
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Interrupted || sum.Steps != 128 || sum.Updates != 2 {
		t.Fatalf("interrupted run: %+v; want interrupted after 2 updates, 128 steps", sum)
	}
	parts.Resume = filepath.Join(parts.Out, LastCheckpoint)
	if sum, err = TrainGPU(context.Background(), cfg, ec, w, parts); err != nil {
		t.Fatal(err)
	}
	if sum.Interrupted || sum.Steps != 256 || sum.Updates != 4 {
		t.Fatalf("resumed run: %+v; want 256 steps in 4 updates", sum)
	}
	read := func(dir string) *ProgressTable {
		p, err := ReadProgress(filepath.Join(dir, "progress.csv"))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b := read(whole.Out), read(parts.Out)
	if len(a.Rows) != 4 || len(b.Rows) != 4 {
		t.Fatalf("%d and %d progress rows; want 4 each", len(a.Rows), len(b.Rows))
	}
	for _, key := range []string{"update", "steps", "learning_rate"} {
		x, _ := a.Column(key)
		y, _ := b.Column(key)
		for i := range 4 {
			if x[i] != y[i] {
				t.Errorf("row %d: %s %v resumed, %v uninterrupted", i, key, y[i], x[i])
			}
		}
	}
	for _, key := range []string{"loss", "approx_kl", "ep_return_mean"} {
		x, _ := a.Column(key)
		y, _ := b.Column(key)
		for i := range 2 {
			if x[i] != y[i] {
				t.Errorf("row %d (before the interruption): %s %v, uninterrupted %v", i, key, y[i], x[i])
			}
		}
	}
	if _, err := os.Stat(filepath.Join(parts.Out, GPUCurvePNG)); err != nil {
		t.Errorf("resumed run's learning curve: %v", err)
	}
}
