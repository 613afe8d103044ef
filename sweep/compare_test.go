package sweep

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// compareCSV has two cells (load 1.3 and 1.5 at 20 nodes), two seeds and
// two workloads, for ppo and holes.
const compareCSV = `trace.load_factor,nodes,seed,workload,scheduler,unschedulable
1.3,20,1,w1,ppo,4
1.3,20,1,w1,holes,3
1.3,20,1,w2,ppo,6
1.3,20,1,w2,holes,5
1.3,20,2,w1,ppo,2
1.3,20,2,w1,holes,3
1.3,20,2,w2,ppo,4
1.3,20,2,w2,holes,3
1.5,20,1,w1,ppo,10
1.5,20,1,w1,holes,7
1.5,20,1,w2,ppo,10
1.5,20,1,w2,holes,7
1.5,20,2,w1,ppo,8
1.5,20,2,w1,holes,6
1.5,20,2,w2,ppo,8
1.5,20,2,w2,holes,6
`

// TestCompareByHand: per-seed means over workloads, paired by seed, and a
// total summed over cells, against values computed by hand (t = 12.706 for
// one degree of freedom).
func TestCompareByHand(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, CellsCSV), []byte(compareCSV), 0o644); err != nil {
		t.Fatal(err)
	}
	a, b := Side{Path: dir, Scheduler: "ppo"}, Side{Path: dir, Scheduler: "holes"}
	// two grid points of one output: ppo at 1.5 against ppo at 1.3, per
	// seed 10-5 and 8-3
	rows, err := Compare(Side{dir, "ppo", "trace.load_factor=1.5"}, Side{dir, "ppo", "trace.load_factor=1.3"}, "unschedulable")
	if err != nil || len(rows) != 2 || rows[0].Cell != "nodes=20" || rows[0].D.Mean != 5 || rows[0].D.Half != 0 {
		t.Fatalf("where: %+v, %v; want one cell nodes=20 and a total, difference 5 ± 0", rows, err)
	}
	rows, err = Compare(a, b, "unschedulable")
	if err != nil {
		t.Fatal(err)
	}
	// cell 1.3: ppo per seed 5, 3; holes 4, 3; differences 1, 0.
	// cell 1.5: ppo 10, 8; holes 7, 6; differences 3, 2.
	// total: ppo 15, 11; holes 11, 9; differences 4, 2.
	checkCompareRows(t, rows, []wantCompareRow{
		{"trace.load_factor=1.3 nodes=20", 4, 3.5, 0.5, 12.706 * math.Sqrt(0.5) / math.Sqrt2},
		{"trace.load_factor=1.5 nodes=20", 9, 6.5, 2.5, 12.706 * math.Sqrt(0.5) / math.Sqrt2},
		{"total", 13, 10, 3, 12.706 * math.Sqrt(2) / math.Sqrt2},
	})
	var buf bytes.Buffer
	if err := WriteComparison(&buf, a, b, "unschedulable", rows, 1); err != nil {
		t.Fatal(err)
	}
	if out := buf.String(); !strings.Contains(out, "+3.0±12.7") || strings.Contains(out, "±12.7!") || strings.Contains(out, "±6.4!") {
		t.Errorf("table:\n%s", buf.String())
	}
	// for 2 comparisons with 2 seeds the total's interval widens by
	// t(0.9875, 1)/t(0.975, 1) = tan(0.4875 pi)/tan(0.475 pi) = 2.0062
	buf.Reset()
	if err := WriteComparison(&buf, a, b, "unschedulable", rows, 2); err != nil {
		t.Fatal(err)
	}
	if out := buf.String(); !strings.Contains(out, "+3.0±25.5") || !strings.Contains(out, "97.5% CI for A - B (Bonferroni over 2 comparisons") {
		t.Errorf("table for a family of 2:\n%s", out)
	}
}

// TestCompareErrors: a workload missing on one side, a missing metric
// column and a value that is not a number name what is wrong.
func TestCompareErrors(t *testing.T) {
	dir := t.TempDir()
	full := filepath.Join(dir, "full.csv")
	short := filepath.Join(dir, "short.csv")
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(full, []byte(compareCSV), 0o644)
	os.WriteFile(short, []byte(strings.Replace(compareCSV, "1.5,20,2,w2,ppo,8\n", "", 1)), 0o644)
	os.WriteFile(bad, []byte(strings.Replace(compareCSV, "1.5,20,2,w2,ppo,8\n", "1.5,20,2,w2,ppo,x\n", 1)), 0o644)
	for _, c := range []struct {
		a    Side
		b    Side
		col  string
		want string
	}{
		{Side{short, "ppo", ""}, Side{full, "ppo", ""}, "unschedulable", "trace.load_factor=1.5 nodes=20|2|w2"},
		{Side{full, "ppo", ""}, Side{short, "ppo", ""}, "unschedulable", "short.csv has no ppo row"},
		{Side{full, "ppo", ""}, Side{full, "holes", ""}, "frag", `no column "frag"`},
		{Side{bad, "ppo", ""}, Side{full, "ppo", ""}, "unschedulable", "line 16"},
		{Side{full, "tetris", ""}, Side{full, "ppo", ""}, "unschedulable", "no rows of tetris in"},
		{Side{full, "ppo", "nodes"}, Side{full, "ppo", ""}, "unschedulable", `where "nodes"`},
		{Side{full, "ppo", "seed=1"}, Side{full, "ppo", ""}, "unschedulable", `where "seed=1"`},
		{Side{full, "ppo", "nodes=20"}, Side{full, "ppo", ""}, "unschedulable", "has no ppo row"},
	} {
		_, err := Compare(c.a, c.b, c.col)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Compare(%v, %v, %s): %v; want an error with %q", c.a, c.b, c.col, err, c.want)
		}
	}
}

// wantCompareRow is a comparison row computed by hand.
type wantCompareRow struct {
	cell          string
	a, b, d, half float64
}

// checkCompareRows compares rows with want, to 1e-9.
func checkCompareRows(t *testing.T, rows []CompareRow, want []wantCompareRow) {
	t.Helper()
	if len(rows) != len(want) {
		t.Fatalf("%d rows; want %d: %+v", len(rows), len(want), rows)
	}
	for i, w := range want {
		r := rows[i]
		if r.Cell != w.cell || math.Abs(r.A.Mean-w.a) > 1e-9 || math.Abs(r.B.Mean-w.b) > 1e-9 ||
			math.Abs(r.D.Mean-w.d) > 1e-9 || math.Abs(r.D.Half-w.half) > 1e-9 {
			t.Errorf("row %d: %s A %v B %v D %v±%v; want %s %v %v %v±%v", i, r.Cell, r.A.Mean, r.B.Mean, r.D.Mean, r.D.Half, w.cell, w.a, w.b, w.d, w.half)
		}
	}
}
