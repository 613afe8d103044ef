package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Tests of issue 16 at the command line: each defect, its exit status and
// the flag its message names.

const tinySpec = `name: tiny
cluster:
  min_nodes: 3
  max_nodes: 5
  max_steps: 64
  workload:
    pods_per_node: 20
ppo:
  n_envs: 2
  n_steps: 32
  batch_size: 32
  n_epochs: 1
  total_timesteps: 64
  eval_freq: 64
  eval_episodes: 1
  hidden: 8
`

func TestBadInputIsAnError(t *testing.T) {
	trace := tinyTrace(t)
	dir := t.TempDir()
	noManifest := filepath.Join(dir, "half")
	os.Mkdir(noManifest, 0o755)
	b, _ := os.ReadFile(filepath.Join(trace, "machine_meta.arrow"))
	os.WriteFile(filepath.Join(noManifest, "machine_meta.arrow"), b, 0o644)
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(s), 0o644)
		return p
	}
	good := write("good.yaml", tinySpec)
	empty := write("empty.yaml", "")
	badSched := write("sched.yaml", tinySpec+"eval:\n  schedulers: [first-fit, nope]\n")
	replay := []string{"replay", "--trace", trace, "--nodes", "3", "--scheduler", "first-fit"}
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"empty window 0h-0h", append(replay, "--window", "0h-0h"), 2, "--window 0h-0h"},
		{"inverted window", append(replay, "--window", "5h-2h"), 2, "--window 5h-2h"},
		{"window after the trace", append(replay, "--window", "100h-110h"), 2, "starts after the trace"},
		{"window past the trace", append(replay, "--window", "0h-100000h"), 2, "ends after the trace"},
		{"day beyond the trace", append(replay, "--window", "day2"), 2, "--window day2"},
		{"trace without manifest", []string{"replay", "--trace", noManifest, "--window", "all"}, 1, "not a converted trace"},
		{"samples is a folder", append(replay, "--window", "0h-2h", "--samples", dir), 2, "--samples " + dir},
		{"steps 0", []string{"train", "--config", good, "--out", filepath.Join(dir, "r0"), "--steps", "0"}, 2, "--steps 0"},
		{"steps negative", []string{"train", "--config", good, "--out", filepath.Join(dir, "r1"), "--steps", "-10"}, 2, "--steps -10"},
		{"empty config", []string{"train", "--config", empty, "--out", filepath.Join(dir, "r2")}, 2, "empty spec"},
		{"train checks eval.schedulers", []string{"train", "--config", badSched, "--out", filepath.Join(dir, "r3")}, 2, `unknown scheduler "nope"`},
		{"force with resume", []string{"train", "--config", good, "--out", filepath.Join(dir, "r4"), "--force", "--resume", "x.ckpt"}, 2, "--force and --resume"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d mentioning %q", code, stderr, tc.code, tc.want)
			}
			if stdout != "" {
				t.Errorf("printed %q before failing", stdout)
			}
		})
	}
	for _, name := range []string{"r0", "r1", "r2", "r3", "r4"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("a refused training created its run folder %s", name)
		}
	}
}

// TestTrainOutHistoryNeedsForce: training again into a run folder with
// history is refused (exit 1, naming --resume and --force) and leaves
// progress.csv as it was; --force replaces the run.
func TestTrainOutHistoryNeedsForce(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "train.yaml")
	os.WriteFile(cfg, []byte(tinySpec), 0o644)
	out := filepath.Join(dir, "run")
	if code, _, stderr := runCLI(t, "train", "--config", cfg, "--out", out); code != 0 {
		t.Fatalf("train: exit %d: %s", code, stderr)
	}
	progress := filepath.Join(out, "progress.csv")
	old, _ := os.ReadFile(progress)
	code, _, stderr := runCLI(t, "train", "--config", cfg, "--out", out)
	if code != 1 || !strings.Contains(stderr, "--resume") || !strings.Contains(stderr, "--force") {
		t.Errorf("second train: exit %d, %q; want exit 1 naming --resume and --force", code, stderr)
	}
	if b, _ := os.ReadFile(progress); len(old) == 0 || string(b) != string(old) {
		t.Error("the refused run changed progress.csv")
	}
	if code, _, stderr := runCLI(t, "train", "--config", cfg, "--out", out, "--force"); code != 0 {
		t.Errorf("train --force: exit %d: %s", code, stderr)
	}
}

// TestConvertStrictNegativeResource: a negative machine size is a bad row
// that fails convert --strict, naming file and line (the old code passed
// it).
func TestConvertStrictNegativeResource(t *testing.T) {
	in := t.TempDir()
	os.WriteFile(filepath.Join(in, "machine_meta.csv"), []byte("m_1,0,1,a,96,100,USING\nm_2,0,1,a,-4,100,USING\n"), 0o644)
	code, _, stderr := runCLI(t, "convert", "--in", in, "--out", filepath.Join(t.TempDir(), "out"), "--strict")
	if code != 1 || !strings.Contains(stderr, "machine_meta.csv:2") || !strings.Contains(stderr, "non-positive resource") {
		t.Errorf("exit %d, %q; want exit 1 naming machine_meta.csv:2 and the reason", code, stderr)
	}
}

// TestDataRegeneratesCorruptTrace: `data --out` on a default trace whose
// file was corrupted in place (same size) makes it again instead of saying
// "ready" (the old code checked sizes only). It generates the default
// trace twice (a few seconds).
func TestDataRegeneratesCorruptTrace(t *testing.T) {
	if testing.Short() {
		t.Skip("generates the default trace")
	}
	out := filepath.Join(t.TempDir(), "default")
	if code, _, stderr := runCLI(t, "data", "--out", out); code != 0 {
		t.Fatalf("data: exit %d: %s", code, stderr)
	}
	p := filepath.Join(out, "machine_meta.arrow")
	b, _ := os.ReadFile(p)
	good := string(b)
	b[len(b)/2] ^= 0xff
	os.WriteFile(p, b, 0o644)
	code, stdout, stderr := runCLI(t, "data", "--out", out)
	if code != 0 || !strings.Contains(stderr, "corrupt") || !strings.Contains(stdout, "ready") {
		t.Fatalf("data on a corrupt trace: exit %d, %q, %q; want it made again", code, stdout, stderr)
	}
	if b, _ := os.ReadFile(p); string(b) != good {
		t.Error("machine_meta.arrow is still corrupt")
	}
}

// TestTrainEvalFreqZeroSaysNoBest: eval_freq: 0 trains without validation;
// the summary says that there is no best.ckpt instead of logging a NaN best
// reward (the old code printed "best eval reward NaN").
func TestTrainEvalFreqZeroSaysNoBest(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "train.yaml")
	if err := os.WriteFile(cfg, []byte(strings.Replace(tinySpec, "eval_freq: 64", "eval_freq: 0", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	code, stdout, stderr := runCLI(t, "train", "--config", cfg, "--out", out)
	if code != 0 {
		t.Fatalf("train: exit %d: %s", code, stderr)
	}
	if strings.Contains(stdout+stderr, "NaN") || !strings.Contains(stdout, "no best.ckpt") {
		t.Errorf("output %q / %q; want no NaN and a word that there is no best.ckpt", stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "best.ckpt")); err == nil {
		t.Error("best.ckpt written although no evaluation ran")
	}
}

// TestMissingTraceReportedOnce: training on a trace folder that does not
// exist fails with one error naming the folder, not one line per
// environment (the old code printed it 8 times).
func TestMissingTraceReportedOnce(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "no-such-trace")
	spec := "trace:\n  dir: " + missing + "\nwindows:\n  train: [0h-1h]\n  validation: [1h-2h]\n  test: [2h-3h]\n" +
		tinySpec[strings.Index(tinySpec, "cluster:"):]
	cfg := filepath.Join(dir, "train.yaml")
	if err := os.WriteFile(cfg, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "train", "--config", cfg, "--out", filepath.Join(dir, "run"))
	if code == 0 {
		t.Fatal("training on a missing trace succeeded")
	}
	if n := strings.Count(stdout+stderr, missing); n != 1 {
		t.Errorf("the missing folder is named %d times; want once:\n%s%s", n, stdout, stderr)
	}
}

// TestTrainRefusesGrid: a spec with a grid is a sweep; train does not
// silently train the spec without its grid.
func TestTrainRefusesGrid(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "grid.yaml")
	if err := os.WriteFile(cfg, []byte(tinySpec+"grid:\n  ppo.seed: [1, 2]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "train", "--config", cfg, "--out", filepath.Join(dir, "run"))
	if code != 2 || !strings.Contains(stderr, "kubesim sweep") {
		t.Errorf("exit %d, %q; want a usage error pointing to kubesim sweep", code, stderr)
	}
}
