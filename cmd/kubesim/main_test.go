package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/sched"
)

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestUsageErrorsExit2(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown scheduler", []string{"replay", "--scheduler", "nope"}, `unknown scheduler "nope"`},
		{"negative nodes", []string{"replay", "--nodes", "-3"}, "--nodes -3"},
		{"zero nodes", []string{"replay", "--nodes", "0"}, "--nodes 0"},
		{"bad flag value", []string{"replay", "--nodes", "many"}, "invalid argument"},
		{"unknown flag", []string{"replay", "--nodez", "3"}, "unknown flag"},
		{"unknown command", []string{"replayy"}, "unknown command"},
		{"impossible load", []string{"replay", "--load", "-1"}, "load"},
		{"eval without checkpoint", []string{"eval"}, "--checkpoint"},
		{"train without config", []string{"train"}, "--config"},
	}
	for _, tc := range cases {
		code, _, stderr := runCLI(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 mentioning %q", tc.name, code, stderr, tc.want)
		}
	}
}

// TestReplayJSON: one object per scheduler with the promised keys; the same
// seed gives byte-identical output, a different seed different output.
func TestReplayJSON(t *testing.T) {
	args := []string{"replay", "--nodes", "6", "--pods", "600", "--json", "--seed"}
	code, a, stderr := runCLI(t, append(args, "3")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	_, b, _ := runCLI(t, append(args, "3")...)
	_, c, _ := runCLI(t, append(args, "4")...)
	if a != b {
		t.Error("same seed, different output")
	}
	if a == c {
		t.Error("seeds 3 and 4 gave identical output")
	}
	lines := strings.Split(strings.TrimSpace(a), "\n")
	if len(lines) != len(sched.Names()) {
		t.Fatalf("%d JSON lines; want one per scheduler (%d)", len(lines), len(sched.Names()))
	}
	keys := []string{"scheduler", "pods", "unschedulable", "fragmentation_mean", "fragmentation_at_peak",
		"stranded_cpu", "stranded_mem", "node_cpu_var_mean", "node_cpu_std_mean", "pending_latency_mean_ms",
		"pending_latency_p95_ms", "pending_latency_p99_ms", "high_prio_pending_p95_ms", "sla_violations_per_1k",
		"evictions", "preemptions", "node_hours", "mean_cpu_util"}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("bad JSON line %q: %v", l, err)
		}
		for _, k := range keys {
			if _, ok := m[k]; !ok {
				t.Errorf("line for %v lacks %q", m["scheduler"], k)
			}
		}
		if m["pods"].(float64) != 600 {
			t.Errorf("%v replayed %v pods; want 600", m["scheduler"], m["pods"])
		}
	}
}

func TestReplayTable(t *testing.T) {
	code, out, stderr := runCLI(t, "replay", "--nodes", "4", "--pods", "200", "--scheduler", "kube-default")
	if code != 0 || !strings.Contains(out, "kube-default") || !strings.Contains(out, "frag cpu%") {
		t.Errorf("exit %d, output %q, stderr %q", code, out, stderr)
	}
}

// TestTrainEvalEndToEnd trains for one tiny rollout on the synthetic
// environment, then evaluates the checkpoint beside a heuristic.
func TestTrainEvalEndToEnd(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "train.yaml")
	spec := tinySpec
	if err := os.WriteFile(cfg, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	if code, _, stderr := runCLI(t, "train", "--config", cfg, "--out", out); code != 0 {
		t.Fatalf("train: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := runCLI(t, "eval", "--checkpoint", filepath.Join(out, "best.ckpt"),
		"--nodes", "4", "--pods", "200", "--scheduler", "first-fit", "--json")
	if code != 0 {
		t.Fatalf("eval: exit %d: %s", code, stderr)
	}
	if n := strings.Count(stdout, "\n"); n != 2 || !strings.Contains(stdout, `"scheduler":"ppo"`) {
		t.Errorf("eval output %q; want first-fit and ppo rows", stdout)
	}
	// --samples writes the policy's time series beside the heuristic's
	samples := filepath.Join(dir, "samples.csv")
	if code, _, stderr := runCLI(t, "eval", "--checkpoint", filepath.Join(out, "best.ckpt"),
		"--nodes", "4", "--pods", "200", "--scheduler", "first-fit", "--samples", samples); code != 0 {
		t.Fatalf("eval --samples: exit %d: %s", code, stderr)
	}
	if data, err := os.ReadFile(samples); err != nil || !strings.Contains(string(data), "\nfirst-fit,") || !strings.Contains(string(data), "\nppo,") {
		t.Errorf("eval --samples: %v, CSV %.200q; want first-fit and ppo rows", err, data)
	}
	// A config with an unknown key is refused, naming it.
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("ppo:\n  n_stepz: 3\n"), 0o644)
	if code, _, stderr := runCLI(t, "train", "--config", bad, "--out", out); code != 2 || !strings.Contains(stderr, "n_stepz") {
		t.Errorf("bad config: exit %d, %q", code, stderr)
	}
}

// TestSweepWithoutGrid: a synthetic spec without a grid, at a size inside
// and a size outside the training range, prints a table per size and writes
// one CSV row per size, seed and scheduler.
func TestSweepWithoutGrid(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "exp.yaml")
	os.WriteFile(cfg, []byte(`name: exp
cluster:
  min_nodes: 3
  max_nodes: 5
  workload:
    pods_per_node: 15
eval:
  nodes: [4, 9]
  schedulers: [first-fit, kube-default]
  seeds: 2
  train: false
`), 0o644)
	out := filepath.Join(dir, "res")
	code, stdout, stderr := runCLI(t, "sweep", cfg, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"exp: 4 nodes: 2 seeds x 1 windows", "exp: 9 nodes, outside the training range: 2 seeds x 1 windows", "kube-default", "first-fit"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	lines, err := os.ReadFile(filepath.Join(out, "cells.csv"))
	if err != nil {
		t.Fatal(err)
	}
	// a header, then 2 sizes x 2 seeds x (2 schedulers + the fluid relaxation)
	if n := strings.Count(string(lines), "\n"); n != 13 {
		t.Errorf("%d CSV lines; want 13", n)
	}
	if md, err := os.ReadFile(filepath.Join(out, "summary.md")); err != nil || string(md) != stdout {
		t.Errorf("summary.md differs from the printed tables (%v)", err)
	}
}

func TestReplaySamples(t *testing.T) {
	p := filepath.Join(t.TempDir(), "samples.csv")
	code, _, stderr := runCLI(t, "replay", "--nodes", "4", "--pods", "300", "--scheduler", "first-fit", "--samples", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "scheduler,at_s,nodes,pending") || !strings.HasPrefix(lines[1], "first-fit,60,4,") {
		t.Errorf("samples CSV starts %q", lines[:min(3, len(lines))])
	}
}
