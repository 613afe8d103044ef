package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/yaml"
)

const sweepSpec = `name: shards
cluster:
  min_nodes: 3
  max_nodes: 5
  workload:
    pods_per_node: 10
eval:
  schedulers: [first-fit, kube-default]
  seeds: 2
  train: false
grid:
  eval.nodes: [3, 9]
  cluster.workload.load: [1, 1.4]
`

// sweepChildArgs, when set in the environment, makes
// TestSweepShardChild run the command line it holds (arguments separated
// by newlines) and exit with its status: the shard processes of
// TestSweepShardsMerge.
const sweepChildArgs = "KUBESIM_SWEEP_CHILD_ARGS"

func TestSweepShardChild(t *testing.T) {
	args := os.Getenv(sweepChildArgs)
	if args == "" {
		t.Skip("runs only as a child of TestSweepShardsMerge")
	}
	os.Exit(run(context.Background(), strings.Split(args, "\n"), os.Stdout, os.Stderr))
}

// TestSweepShardsMerge: two shards run as separate processes into one
// shared folder (as the pods of a Kubernetes job would), merged, give the
// cells.csv and summary of an unsharded run; a second unsharded run does
// no work.
func TestSweepShardsMerge(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "sweep.yaml")
	os.WriteFile(spec, []byte(sweepSpec), 0o644)
	whole, shared := filepath.Join(dir, "whole"), filepath.Join(dir, "shared")
	code, stdout, stderr := runCLI(t, "sweep", spec, "--out", whole, "--jobs", "2")
	if code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "shards cluster.workload.load=1.4: 9 nodes, outside the training range") ||
		!strings.Contains(stderr, "0 training and 8 evaluation cells run, 0 cached") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	if _, _, stderr := runCLI(t, "sweep", spec, "--out", whole); !strings.Contains(stderr, "0 training and 0 evaluation cells run, 8 cached") {
		t.Errorf("re-run: %s", stderr)
	}
	var procs []*exec.Cmd
	var logs []*bytes.Buffer
	for _, sh := range []string{"0/2", "1/2"} {
		c := exec.Command(os.Args[0], "-test.run=^TestSweepShardChild$")
		c.Env = append(os.Environ(), sweepChildArgs+"="+strings.Join([]string{"sweep", spec, "--out", shared, "--shard", sh, "--jobs", "1"}, "\n"))
		var log bytes.Buffer
		c.Stdout, c.Stderr = &log, &log
		logs = append(logs, &log)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, c)
	}
	for i, c := range procs {
		if err := c.Wait(); err != nil {
			t.Fatalf("shard %d: %v: %s", i, err, logs[i])
		}
	}
	if _, err := os.Stat(filepath.Join(shared, "cells.csv")); err == nil {
		t.Error("a shard wrote cells.csv")
	}
	if code, _, stderr := runCLI(t, "sweep", "merge", shared); code != 0 {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	for _, f := range []string{"cells.csv", "summary.md"} {
		a, _ := os.ReadFile(filepath.Join(whole, f))
		b, err := os.ReadFile(filepath.Join(shared, f))
		if err != nil || string(a) != string(b) || len(a) == 0 {
			t.Errorf("merged %s differs from the unsharded one (%v)", f, err)
		}
	}
}

func TestSweepUsageErrors(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "sweep.yaml")
	os.WriteFile(spec, []byte(sweepSpec), 0o644)
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte(strings.Replace(sweepSpec, "eval.nodes:", "eval.nodez:", 1)), 0o644)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no file", []string{"sweep"}, "give at least one FILE.yaml"},
		{"bad shard", []string{"sweep", spec, "--shard", "2/2"}, `--shard "2/2"`},
		{"shard not a fraction", []string{"sweep", spec, "--shard", "1"}, `--shard "1"`},
		{"out with two files", []string{"sweep", spec, spec, "--out", dir}, "--out applies to one file"},
		{"grid key that names nothing", []string{"sweep", bad}, `line 12: grid key "eval.nodez" names nothing`},
		{"merge without folders", []string{"sweep", "merge"}, "give at least one DIR"},
		{"zero jobs", []string{"sweep", spec, "--jobs", "0"}, "--jobs 0"},
		{"reuse-cells on a general sweep", []string{"sweep", spec, "--reuse-cells", "abc"}, "--reuse-cells applies to mode: openb files only"},
	}
	for _, tc := range cases {
		code, _, stderr := runCLI(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 mentioning %q", tc.name, code, stderr, tc.want)
		}
	}
}

// TestSweepEmitK8sJob: --emit-k8s-job prints an Indexed Job (decoded
// strictly with batch/v1's types) whose pods run the shards; nothing runs.
func TestSweepEmitK8sJob(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "sweep.yaml")
	os.WriteFile(spec, []byte(sweepSpec), 0o644)
	t.Chdir(dir) // the pods run in the volume's root, where the paths are relative
	spec = "sweep.yaml"
	code, stdout, stderr := runCLI(t, "sweep", spec, "--emit-k8s-job", "--k8s-shards", "3", "--out", "results/shards")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var job batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(stdout), &job); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	args := strings.Join(job.Spec.Template.Spec.Containers[0].Args, " ")
	if job.Name != "sweep-shards" || *job.Spec.Completions != 3 || !strings.HasSuffix(args, "--out results/shards --shard $(JOB_COMPLETION_INDEX)/3") {
		t.Errorf("job %s, %d completions, args %q", job.Name, *job.Spec.Completions, args)
	}
	if _, err := os.Stat(filepath.Join(dir, "results")); err == nil {
		t.Error("emitting the job ran the sweep")
	}
	if code, _, stderr := runCLI(t, "sweep", spec, "--emit-k8s-job", "--out", "/abs"); code != 2 || !strings.Contains(stderr, "relative to the shared volume") {
		t.Errorf("absolute --out: exit %d, %s", code, stderr)
	}
}
