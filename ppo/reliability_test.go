package ppo

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/env"
)

// TestResumeAfterKillBeforeCheckpoint (issue 28, defect 15): a run killed
// between an update's progress row and its checkpoint left, after
// --resume, a duplicate, non-monotonic row in progress.csv (the update was
// logged twice) and an orphan .last.ckpt.*.tmp. The resumed run now drops
// the rows past its checkpoint and removes the temporaries.
func TestResumeAfterKillBeforeCheckpoint(t *testing.T) {
	cfg, opts, sum, err := interruptedRun(t)
	dir := opts.Out
	if err != nil || sum.Steps != 512 {
		t.Fatalf("first run: %+v, %v; want interrupted at step 512", sum, err)
	}
	// the kill: update 3's row (step 768) written, its checkpoint not; a
	// checkpoint's temporary left behind
	path := filepath.Join(dir, ProgressFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	col := slices.Index(strings.Split(lines[0], ","), keyTimesteps)
	row := strings.Split(lines[len(lines)-1], ",")
	row[col] = "768"
	os.WriteFile(path, append(b, []byte(strings.Join(row, ",")+"\n")...), 0o644)
	orphan := filepath.Join(dir, ".last.ckpt.123456.tmp")
	os.WriteFile(orphan, []byte("half a checkpoint"), 0o644)

	opts.Resume = filepath.Join(dir, LastCheckpoint)
	opts.NewVec = func(int) (Vec, error) { return newToyVec(4, banditReset, banditStep), nil }
	tr2, err := New(cfg, env.DefaultConfig(), nil, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr2.Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	prog, err := ReadProgress(path)
	if err != nil {
		t.Fatal(err)
	}
	// one row per update of the whole run, in order: the resumed run logs
	// update 3 again, so the killed run's row of it is gone
	steps, _ := prog.Column(keyTimesteps)
	if want := []float64{256, 512, 768, 1024}; !slices.Equal(steps, want) {
		t.Errorf("progress steps %v; want %v", steps, want)
	}
	if _, err := os.Stat(orphan); err == nil {
		t.Errorf("%s is still there", orphan)
	}
}
