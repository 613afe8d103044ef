package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestInterruptStopsPromptly: SIGINT and SIGTERM cancel the context that
// main gives run (signal.NotifyContext); every long phase must then stop
// within about a second. Each command below runs for many seconds when left
// alone (replay ~25 s, synth ~15 s, experiment ~25 s on the project's 2-core
// VM); it is cancelled after 300 ms and must return an error within 2 s of
// the cancellation. The bound is generous for a loaded CI machine, and an
// order of magnitude below the uncancelled run times, so it tests
// cancellation, not speed.
func TestInterruptStopsPromptly(t *testing.T) {
	if testing.Short() {
		t.Skip("starts long jobs")
	}
	dir := t.TempDir()
	spec := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(spec, []byte("cluster:\n  workload:\n    pods_per_node: 300\neval:\n  nodes: [2000]\n  seeds: 1\n  schedulers: [kube-default]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
	}{
		{"replay", []string{"replay", "--nodes", "2000", "--pods", "600000", "--scheduler", "kube-default"}},
		{"synth", []string{"synth", "--machines", "4000", "--days", "4", "--out", filepath.Join(dir, "synth")}},
		{"sweep", []string{"sweep", spec, "--out", filepath.Join(dir, "sweep")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan int, 1)
			var out, errb bytes.Buffer
			go func() { done <- run(ctx, tc.args, &out, &errb) }()
			select {
			case code := <-done:
				t.Fatalf("finished before the interrupt (exit %d): the job is too short to test cancellation; %s", code, errb.String())
			case <-time.After(300 * time.Millisecond):
			}
			cancel()
			start := time.Now()
			select {
			case code := <-done:
				if code == 0 {
					t.Errorf("exit 0 after an interrupt; want a failure status")
				}
				t.Logf("stopped %v after the interrupt (exit %d)", time.Since(start).Round(time.Millisecond), code)
			case <-time.After(2 * time.Second):
				t.Fatalf("still running 2 s after the interrupt")
			}
		})
	}
}
