package sweep

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenbBoundRow runs the default pod list under fgd and best-fit with
// the bound on one seed: the bound row lies at or above both curves at
// every arrived level, has no fragmentation row in curves.csv, and the
// summary has a row for it and the Headroom table.
func TestOpenbBoundRow(t *testing.T) {
	out := t.TempDir()
	spec := "name: bound-test\nmode: openb\ndir: " + openbTestdata + "\npod_lists: [default]\nseeds: [42]\n" +
		"schedulers: [best-fit, fgd]\nbound: true\n"
	s, err := ParseOpenbSpec([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	res, err := RunOpenb(context.Background(), s, OpenbOptions{Out: out, Jobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 3 || res.Runs[2].Scheduler != BoundName {
		t.Fatalf("runs %d, the last %q; want 3, the bound last", len(res.Runs), res.Runs[len(res.Runs)-1].Scheduler)
	}
	bound := res.Runs[2].AllocCurve
	for _, r := range res.Runs[:2] {
		for k, a := range r.AllocCurve {
			if math.IsNaN(a) != math.IsNaN(bound[k]) || a > bound[k]+1e-9 {
				t.Fatalf("%s at %d%%: allocation %.4f, bound %.4f", r.Scheduler, k, a, bound[k])
			}
		}
	}
	// at 100% arrived the bound is below 100% (the 810-milli shares) and
	// above FGD
	if b, f := bound[100], res.Runs[1].AllocCurve[100]; b >= 99.9 || b <= f {
		t.Errorf("at 100%%: bound %.2f, fgd %.2f; want fgd < bound < 99.9", b, f)
	}
	checkBoundOutputs(t, out, BoundName, "## Headroom: FGD against the bound")
}

// checkBoundOutputs checks the outputs of a run of the default list at
// seed 42 with a bound-like row: curves.csv has the row's allocation and
// no fragmentation, and summary.md has the row and the section.
func checkBoundOutputs(t *testing.T, out, row, section string) {
	t.Helper()
	csv, err := os.ReadFile(filepath.Join(out, "curves.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(csv), "\ndefault,"+row+",42,gpu_alloc,") || strings.Contains(string(csv), "\ndefault,"+row+",42,gpu_frag,") {
		t.Errorf("curves.csv: want the %s row's gpu_alloc and no gpu_frag", row)
	}
	sum, err := os.ReadFile(filepath.Join(out, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\n| " + row + " | ", section, "\n| default | "} {
		if !strings.Contains(string(sum), want) {
			t.Errorf("summary.md lacks %q:\n%s", want, sum)
		}
	}
}
