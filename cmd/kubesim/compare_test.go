package main

import (
	"strings"
	"testing"
)

// TestSweepCompareOpenb pairs two rows of the shipped round-13 evaluation
// (results/gpu-es-r13-eval/curves.csv) without --metric: the openb default,
// gpu_alloc at 100% arrived, gives the cpu250 row that the folder's
// summary.md prints for r13-s13 against fgd-guard (-0.25 ± 0.07, -3.9%),
// and a cells.csv metric is refused naming the form it wants.
func TestSweepCompareOpenb(t *testing.T) {
	dir := "../../results/gpu-es-r13-eval"
	code, out, stderr := runCLI(t, "sweep", "compare", dir, dir, "--scheduler", "r13-s13", "--against", "fgd-guard")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var row string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "pod_list=cpu250") {
			row = l
		}
	}
	if !strings.Contains(row, "-0.25±0.07!") || !strings.Contains(row, "-3.9%") || !strings.HasPrefix(strings.TrimSpace(out), "gpu_alloc@100") {
		t.Errorf("cpu250 row %q; want -0.25±0.07! and -3.9%%, under gpu_alloc@100:\n%s", row, out)
	}
	code, _, stderr = runCLI(t, "sweep", "compare", dir, dir, "--scheduler", "r13-s13", "--metric", "unschedulable")
	if code == 0 || !strings.Contains(stderr, "CURVE@LEVEL") {
		t.Errorf("a cells.csv metric on an openb output: exit %d, %q; want a failure naming CURVE@LEVEL", code, stderr)
	}
}
