package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/internal/memlimit"
)

// tinyTrace synthesises and converts a trace of 12 machines over one day
// and returns its Arrow folder.
func tinyTrace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	csv, arrow := filepath.Join(dir, "csv"), filepath.Join(dir, "arrow")
	if code, _, stderr := runCLI(t, "synth", "--machines", "12", "--days", "1", "--out", csv); code != 0 {
		t.Fatalf("synth: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "convert", "--in", csv, "--out", arrow); code != 0 {
		t.Fatalf("convert: exit %d: %s", code, stderr)
	}
	return arrow
}

// withMemory makes the size checks see a machine of the given memory.
func withMemory(t *testing.T, bytes uint64) {
	t.Helper()
	old := memoryLimit
	memoryLimit = func() memlimit.Limit { return memlimit.Limit{Bytes: bytes, Source: memlimit.SourceMeminfo} }
	t.Cleanup(func() { memoryLimit = old })
}

// TestModeFlags: a flag of the other mode is a usage error that names the
// flag and the mode it belongs to, in replay and in eval alike. No trace is
// read: the flags are checked first.
func TestModeFlags(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"pods with trace", []string{"--trace", "nowhere", "--pods", "10"}, "--pods applies to the synthetic workload only, not with --trace"},
		{"load with trace", []string{"--trace", "nowhere", "--load", "0.5"}, "--load applies to the synthetic workload only"},
		{"window without trace", []string{"--window", "all"}, "--window applies with --trace only"},
		{"load factor without trace", []string{"--load-factor", "2"}, "--load-factor applies with --trace only"},
		{"dag without trace", []string{"--dag"}, "--dag applies with --trace only"},
		{"machines without trace", []string{"--machines", "5"}, "--machines applies with --trace only"},
		{"max nodes without autoscale", []string{"--max-nodes", "80"}, "--max-nodes applies with --autoscale only"},
		{"machines and nodes disagree", []string{"--trace", "nowhere", "--machines", "5", "--nodes", "6"}, "--machines 5 and --nodes 6"},
		{"negative nodes with trace", []string{"--trace", "nowhere", "--nodes", "-1"}, "--nodes -1"},
		{"bad load factor", []string{"--trace", "nowhere", "--load-factor", "0"}, "--load-factor 0"},
		{"warm start without trace", []string{"--warm-start", "none"}, "--warm-start applies with --trace only"},
		{"unknown warm start", []string{"--trace", "nowhere", "--warm-start", "hot"}, `--warm-start "hot": want placement or none`},
		{"grace without trace", []string{"--grace", "30m"}, "--grace applies with --trace only"},
		{"negative grace", []string{"--trace", "nowhere", "--grace", "-1s"}, "--grace -1s: must not be negative"},
	}
	for _, tc := range cases {
		for _, cmd := range [][]string{{"replay"}, {"eval", "--checkpoint", "absent.ckpt"}} {
			args := append(append([]string{}, cmd...), tc.args...)
			code, _, stderr := runCLI(t, args...)
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Errorf("%s: %s: exit %d, stderr %q; want exit 2 mentioning %q", tc.name, cmd[0], code, stderr, tc.want)
			}
		}
	}
}

var workloadLine = regexp.MustCompile(`workload .*: (\d+) pods, (\d+) nodes`)

// TestTraceNodes: --nodes is the number of machines sampled from the trace;
// without it (or with 0) every machine; --machines is its deprecated alias.
func TestTraceNodes(t *testing.T) {
	trace := tinyTrace(t)
	replay := func(extra ...string) (pods, nodes, stderr string) {
		t.Helper()
		args := append([]string{"replay", "--trace", trace, "--window", "all", "--scheduler", "first-fit"}, extra...)
		code, stdout, stderr := runCLI(t, args...)
		m := workloadLine.FindStringSubmatch(stdout)
		if code != 0 || m == nil || strings.Contains(stdout, "deprecated") {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q", extra, code, stdout, stderr)
		}
		return m[1], m[2], stderr
	}
	allPods, all, _ := replay()
	if all != "12" {
		t.Errorf("without --nodes: %s nodes; want the trace's 12", all)
	}
	if p, n, _ := replay("--nodes", "0"); p != allPods || n != all {
		t.Errorf("--nodes 0: %s pods on %s nodes; want all: %s on %s", p, n, allPods, all)
	}
	pods5, n, _ := replay("--nodes", "5")
	if n != "5" || pods5 == allPods {
		t.Errorf("--nodes 5: %s pods on %s nodes; want 5 nodes and fewer than %s pods", pods5, n, allPods)
	}
	p, n, stderr := replay("--machines", "5")
	if p != pods5 || n != "5" {
		t.Errorf("--machines 5: %s pods on %s nodes; want --nodes 5's %s on 5", p, n, pods5)
	}
	if !strings.Contains(stderr, "--machines has been deprecated, use --nodes") {
		t.Errorf("--machines: no deprecation notice in %q", stderr)
	}
	if p, n, _ := replay("--machines", "5", "--nodes", "5"); p != pods5 || n != "5" {
		t.Errorf("--machines 5 --nodes 5: %s pods on %s nodes", p, n)
	}
}

// TestTooBig: a size beyond the memory fails at once with exit status 3 and
// a message naming the flags; the memory is injected, so the outcome does
// not depend on this machine.
func TestTooBig(t *testing.T) {
	withMemory(t, 1<<30)
	trace := tinyTrace(t)
	cases := []struct {
		name string
		args []string
		want string
	}{
		// 1e8 nodes * 2 KiB + 2.5e10 pods * 1.5 KiB = about 35 TiB.
		{"huge synthetic", []string{"replay", "--nodes", "100000000"}, "--nodes 100000000 (25000000000 pods) needs about 35 TiB of memory, this machine has 1 GiB"},
		// 4,000 nodes * 250 pods * 1.5 KiB = 1.4 GiB: fine on most machines, not on 1 GiB.
		{"too big for the injected memory", []string{"replay", "--nodes", "4000"}, "--nodes 4000 (1000000 pods) needs about 1.5 GiB"},
		{"explicit pods", []string{"replay", "--nodes", "10", "--pods", "1000000000"}, "--nodes 10 --pods 1000000000 (1000000000 pods) needs about 1.4 TiB"},
		// 40 nodes, but the autoscaler may grow to a billion.
		{"autoscaler bound", []string{"replay", "--autoscale", "--max-nodes", "1000000000"}, "--nodes 40 --max-nodes 1000000000 (1000000000 nodes, 10000 pods)"},
		// eval checks before it reads the checkpoint (absent here)
		{"eval", []string{"eval", "--checkpoint", "absent.ckpt", "--nodes", "100000000"}, "--nodes 100000000"},
		// the tiny trace has about 6,700 pods; a million times that is too many
		{"trace load factor", []string{"replay", "--trace", trace, "--window", "all", "--load-factor", "1000000"}, "--load-factor 1e+06"},
	}
	for _, tc := range cases {
		code, _, stderr := runCLI(t, tc.args...)
		if code != 3 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 3 mentioning %q", tc.name, code, stderr, tc.want)
		}
	}
	// Sizes that fit are not refused.
	if code, _, stderr := runCLI(t, "replay", "--nodes", "4", "--pods", "100", "--scheduler", "first-fit"); code != 0 {
		t.Errorf("small replay: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "replay", "--trace", trace, "--window", "all", "--nodes", "3", "--scheduler", "first-fit"); code != 0 {
		t.Errorf("small trace replay: exit %d: %s", code, stderr)
	}
}
