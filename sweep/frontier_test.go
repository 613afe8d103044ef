package sweep

import (
	"context"
	"strings"
	"testing"
)

// TestFrontier: a sweep of first-fit, best-fit and a size cap on a small
// trace, then the frontier of its cells. The reference is the heuristic
// with the fewest pods summed over the cell (never the cap); its own
// pending set is one the oracle may choose on each workload, so the oracle
// at its memory is at most its count, and asking for less memory, or for
// the least any scheduler left, gives no more pods.
func TestFrontier(t *testing.T) {
	s, out := smallTraceSpec(t, `name: f
trace:
  dir: TRACE
  load_factor: 2.6
windows:
  train: [0h-1h]
  validation: [2h-3h]
  test: [4h-5h]
cluster:
  min_nodes: 3
  max_nodes: 5
  sim:
    grace_ms: 1800000
eval:
  schedulers: [first-fit, best-fit, first-fit@cap1]
  seeds: 2
  train: false
grid:
  eval.nodes: [3]
`)
	if _, err := Sweep(context.Background(), s, SweepOptions{Out: out, Jobs: 1}); err != nil {
		t.Fatal(err)
	}
	rows, err := Frontier(context.Background(), s, out)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Cell != "eval.nodes=3 nodes=3" || rows[0].Workloads != 2 {
		t.Fatalf("rows %+v; want one cell of 2 workloads", rows)
	}
	r := rows[0]
	sum := map[string]float64{}
	for _, name := range []string{"first-fit", "best-fit"} {
		v, err := readSide(Side{Path: out, Scheduler: name}, colUnsched)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range v.vals {
			sum[name] += x
		}
	}
	want := "first-fit"
	if sum["best-fit"] < sum["first-fit"] {
		want = "best-fit"
	}
	if r.Reference != want || r.Count != sum[want] || r.Count == 0 {
		t.Fatalf("reference %s with %v pods; want %s with %v (and some pods)", r.Reference, r.Count, want, sum[want])
	}
	if r.AtMem < 0 || float64(r.AtMem) > r.Count || r.AtMem90 > r.AtMem || r.AtMinMem > r.AtMem || r.BreakEven < 0.5 || r.BreakEven > 1.2 {
		t.Errorf("frontier %+v: want 0 <= at 0.9 M, at min M <= at M <= count, f in [0.5, 1.2]", r)
	}
	var b strings.Builder
	if err := WriteFrontier(&b, rows); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| eval.nodes=3 nodes=3 | "+want+" |") {
		t.Errorf("table:\n%s", b.String())
	}
}
