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
	"github.com/kubesim/kubesim/internal/atomicdir"
)

// Tests of issue 16 for the run folder.

func toyOpts(dir string) Options {
	return Options{Out: dir, NewVec: func(int) (Vec, error) { return newToyVec(4, banditReset, banditStep), nil }}
}

func trainToy(t *testing.T, cfg Config, opts Options) (Summary, error) {
	t.Helper()
	tr, err := New(cfg, env.DefaultConfig(), nil, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	return tr.Train(context.Background())
}

// TestTrainOutKeepsHistory: a fresh run into a folder with history fails
// (ErrRunExists) and leaves it untouched; a run that fails to start, even
// with --force, leaves it untouched too (the old code truncated
// progress.csv before the environments started); --force replaces it as a
// whole once the run has started.
func TestTrainOutKeepsHistory(t *testing.T) {
	cfg := smallConfig(256 * 2)
	dir := filepath.Join(t.TempDir(), "run")
	if _, err := trainToy(t, cfg, toyOpts(dir)); err != nil {
		t.Fatal(err)
	}
	progress := filepath.Join(dir, ProgressFile)
	old, err := os.ReadFile(progress)
	if err != nil || len(old) == 0 {
		t.Fatalf("first run wrote no progress: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644)

	if _, err := trainToy(t, cfg, toyOpts(dir)); !errors.Is(err, ErrRunExists) || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("second fresh run: %v; want ErrRunExists mentioning --force", err)
	}
	failing := toyOpts(dir)
	failing.Force = true
	failing.NewVec = func(int) (Vec, error) { return nil, errors.New("no trace") }
	if _, err := trainToy(t, cfg, failing); err == nil {
		t.Fatal("a run whose environments fail started")
	}
	if b, _ := os.ReadFile(progress); string(b) != string(old) {
		t.Fatal("a run that did not start changed progress.csv")
	}

	forced := toyOpts(dir)
	forced.Force = true
	if _, err := trainToy(t, cfg, forced); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Error("--force kept a file of the old run folder; want the folder replaced as a whole")
	}
	if _, err := os.Stat(filepath.Join(dir, LastCheckpoint)); err != nil {
		t.Errorf("forced run: %v", err)
	}
}

// TestTrainOutLocked: a second training into a folder being trained into
// fails naming the folder and the first one's pid (the old code let both
// write, interleaving and losing rows).
func TestTrainOutLocked(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	l, err := atomicdir.Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	_, err = trainToy(t, smallConfig(256), toyOpts(dir))
	if !errors.Is(err, atomicdir.ErrLocked) || !strings.Contains(err.Error(), strconv.Itoa(os.Getpid())) {
		t.Fatalf("second training: %v; want ErrLocked naming pid %d", err, os.Getpid())
	}
}

// TestResumeOtherHiddenFails: resuming a checkpoint under a config with
// another hidden size is an error (the old code took the checkpoint's and
// ignored the config without a word).
func TestResumeOtherHiddenFails(t *testing.T) {
	cfg := smallConfig(256)
	dir := t.TempDir()
	if _, err := trainToy(t, cfg, toyOpts(dir)); err != nil {
		t.Fatal(err)
	}
	other := cfg
	other.Hidden = cfg.Hidden * 2
	opts := toyOpts(dir)
	opts.Resume = filepath.Join(dir, LastCheckpoint)
	_, err := New(other, env.DefaultConfig(), nil, nil, opts)
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "hidden") {
		t.Fatalf("resume with hidden %d: %v; want an ErrConfig naming hidden", other.Hidden, err)
	}
}
