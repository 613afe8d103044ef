package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplayOpenb converts the openb default trace kept in testdata and
// replays it under fgd: one JSON line with both curves of 131 numbers;
// the same seed gives the same bytes.
func TestReplayOpenb(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "openb")
	if code, _, stderr := runCLI(t, "convert", "--in", "../../dataset/testdata/openb/default", "--out", trace); code != 0 {
		t.Fatalf("convert: exit %d: %s", code, stderr)
	}
	args := []string{"replay", "--trace", trace, "--scheduler", "fgd", "--inflate", "1.3", "--seed", "42", "--json"}
	code, out, stderr := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("replay: exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 1 {
		t.Fatalf("%d lines; want 1", len(lines))
	}
	var row struct {
		Scheduler string     `json:"scheduler"`
		Alloc     []*float64 `json:"gpu_alloc_curve"`
		Frag      []*float64 `json:"gpu_frag_curve"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &row); err != nil {
		t.Fatal(err)
	}
	if row.Scheduler != "fgd" || len(row.Alloc) != 131 || len(row.Frag) != 131 {
		t.Fatalf("scheduler %q, %d and %d points; want fgd, 131 and 131", row.Scheduler, len(row.Alloc), len(row.Frag))
	}
	if row.Alloc[100] == nil || *row.Alloc[100] < 90 || *row.Alloc[100] > 100 {
		t.Errorf("allocation at 100%% arrived = %v; want FGD's mid-90s", row.Alloc[100])
	}
	if _, again, _ := runCLI(t, args...); again != out {
		t.Error("same seed, different output")
	}
	for _, bad := range [][]string{
		{"replay", "--trace", trace, "--window", "day1"},
		{"replay", "--trace", trace, "--scheduler", "tetris"},
		{"replay", "--trace", trace, "--inflate", "-1"},
		{"replay", "--inflate", "1.3"},
	} {
		if code, _, _ := runCLI(t, bad...); code != 2 {
			t.Errorf("%v: exit %d; want 2", bad, code)
		}
	}
}
