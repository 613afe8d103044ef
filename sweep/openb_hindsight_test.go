package sweep

import (
	"context"
	"math"
	"testing"
)

// TestOpenbHindsightRow runs a small cluster with the bound and the
// hindsight row: the hindsight row comes last, has values at 100% and
// 130% arrived only (130% where the run has records near it, as the
// bound), each at or below the bound's (a lower and an upper
// bound on the same quantity); curves.csv has its allocation row only, the
// summary its bracket table, and a second run reads the cell from the cache
// with the same values.
func TestOpenbHindsightRow(t *testing.T) {
	dir := smallOpenbDir(t, 40)
	out := t.TempDir()
	spec := "name: hindsight-test\nmode: openb\ndir: " + dir + "\npod_lists: [default]\nseeds: [42]\n" +
		"schedulers: [fgd]\nbound: true\nhindsight: true\n"
	s, err := ParseOpenbSpec([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	res, err := RunOpenb(context.Background(), s, OpenbOptions{Out: out, Jobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 3 || res.Runs[2].Scheduler != HindsightName || res.Runs[1].Scheduler != BoundName {
		t.Fatalf("runs %d: want fgd, bound, hindsight", len(res.Runs))
	}
	h, bound := res.Runs[2].AllocCurve, res.Runs[1].AllocCurve
	for k, v := range h {
		switch {
		case k == 100 || k == 130:
			// both have a value where the run has records near k
			if math.IsNaN(v) != math.IsNaN(bound[k]) || math.IsNaN(v) && k == 100 || v > bound[k]+1e-9 || v <= 0 {
				t.Errorf("at %d%%: hindsight %.3f, bound %.3f: want 0 < hindsight <= bound", k, v, bound[k])
			}
		case !math.IsNaN(v):
			t.Errorf("at %d%%: hindsight %.3f, want NaN (not computed)", k, v)
		}
	}
	checkBoundOutputs(t, out, HindsightName, "## Headroom bracketed")
	again, err := RunOpenb(context.Background(), s, OpenbOptions{Out: out, Jobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	same := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
	if again.Cached != 1 || !same(again.Runs[2].AllocCurve[100], h[100]) || !same(again.Runs[2].AllocCurve[130], h[130]) {
		t.Errorf("second run: cached %d, hindsight %v %v; want 1 and the first run's values", again.Cached, again.Runs[2].AllocCurve[100], again.Runs[2].AllocCurve[130])
	}
}
