package sweep

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// openbCompareCSV is a small curves.csv: pod lists a and b, seeds 1 and 2,
// schedulers x and y, levels 99-101, and gpu_frag rows that a gpu_alloc
// metric must skip.
const openbCompareCSV = `pod_list,scheduler,seed,curve,99,100,101
a,x,1,gpu_alloc,88,90,92
a,x,2,gpu_alloc,92,92,92
a,y,1,gpu_alloc,89,89,89
a,y,2,gpu_alloc,90,90,90
a,x,1,gpu_frag,1,1,1
a,y,1,gpu_frag,7,7,7
b,x,1,gpu_alloc,80,80,80
b,x,2,gpu_alloc,80,80,80
b,y,1,gpu_alloc,80,80,80
b,y,2,gpu_alloc,78,78,78
`

func writeOpenbCurves(t *testing.T, text string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, OpenbCurvesCSV), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestCompareOpenbByHand: pairs by pod list and seed, a level and a range
// of levels, and a last row that is the mean over lists, against values
// computed by hand (t = 12.706 for one degree of freedom).
func TestCompareOpenbByHand(t *testing.T) {
	dir := writeOpenbCurves(t, openbCompareCSV)
	rows, err := Compare(Side{Path: dir, Scheduler: "x"}, Side{Path: dir, Scheduler: "y"}, "gpu_alloc@100")
	if err != nil {
		t.Fatal(err)
	}
	// a: x 90, 92; y 89, 90; differences 1, 2.
	// b: x 80, 80; y 80, 78; differences 0, 2.
	// mean over lists: x 85, 86; y 84.5, 84; differences 0.5, 2.
	checkCompareRows(t, rows, []wantCompareRow{
		{"pod_list=a", 91, 89.5, 1.5, 12.706 * math.Sqrt(0.5) / math.Sqrt2},
		{"pod_list=b", 80, 79, 1, 12.706 * math.Sqrt(2) / math.Sqrt2},
		{"mean", 85.5, 84.25, 1.25, 12.706 * math.Sqrt(1.125) / math.Sqrt2},
	})
	// over 99-101 list a's x seed 1 is (88+90+92)/3 = 90, as at 100: the
	// same rows; x seed 2 and every other row are flat
	over, err := Compare(Side{Path: dir, Scheduler: "x"}, Side{Path: dir, Scheduler: "y"}, "gpu_alloc@99-101")
	if err != nil {
		t.Fatal(err)
	}
	for i := range over {
		if math.Abs(over[i].D.Mean-rows[i].D.Mean) > 1e-9 {
			t.Errorf("range 99-101, %s: %v; want the 100 point's %v", over[i].Cell, over[i].D.Mean, rows[i].D.Mean)
		}
	}
	at99, err := Compare(Side{Path: dir, Scheduler: "x"}, Side{Path: dir, Scheduler: "y"}, "gpu_alloc@99")
	if err != nil || math.Abs(at99[0].D.Mean-0.5) > 1e-9 {
		t.Fatalf("at 99, list a: %+v, %v; want differences -1 and 2, mean 0.5", at99, err)
	}
	frag, err := Compare(Side{Path: dir, Scheduler: "x"}, Side{Path: filepath.Join(dir, OpenbCurvesCSV), Scheduler: "y"}, "gpu_frag@100")
	if err != nil || len(frag) != 2 || frag[0].D.Mean != -6 || frag[0].D.N != 1 {
		t.Fatalf("gpu_frag at 100, given as the file: %+v, %v; want list a only, one seed, -6", frag, err)
	}
	var out bytes.Buffer
	if err := WriteComparison(&out, Side{Path: dir, Scheduler: "x"}, Side{Path: dir, Scheduler: "y"}, "gpu_alloc@100", rows, 1); err != nil {
		t.Fatal(err)
	}
	// list a: 1.5 points of y's 10.5 unallocated
	for _, s := range []string{"of B's unallocated", "91.00±", "+1.50±", "+14.3%", "100% arrived, per pod list"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, out.String())
		}
	}
}

// TestCompareOpenbErrors: a metric without a level, a level the file does
// not hold, a grid point, a missing value and a mix of output kinds are
// errors that name what is wrong.
func TestCompareOpenbErrors(t *testing.T) {
	dir := writeOpenbCurves(t, openbCompareCSV)
	x, y := Side{Path: dir, Scheduler: "x"}, Side{Path: dir, Scheduler: "y"}
	cells := t.TempDir()
	if err := os.WriteFile(filepath.Join(cells, CellsCSV), []byte(compareCSV), 0o644); err != nil {
		t.Fatal(err)
	}
	// a cells.csv whose column happens to be named as the openb metric
	odd := t.TempDir()
	if err := os.WriteFile(filepath.Join(odd, CellsCSV), []byte("nodes,seed,workload,scheduler,gpu_alloc@100\n20,1,w1,ppo,90\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	twice := writeOpenbCurves(t, openbCompareCSV+"a,x,1,gpu_alloc,88,90,92\n")
	bad := writeOpenbCurves(t, strings.Replace(openbCompareCSV, "b,y,2,gpu_alloc,78,78,78", "b,y,2,gpu_alloc,78,,78", 1))
	for _, c := range []struct {
		a, b   Side
		metric string
		want   string
	}{
		{x, y, "unschedulable", "CURVE@LEVEL"},
		{x, y, "gpu_alloc@", "not an arrived"},
		{x, y, "gpu_alloc@101-99", "not an arrived"},
		{x, y, "gpu_alloc@130", "no column for 130%"},
		{x, y, "gpu_util@100", "no gpu_util rows"},
		{Side{Path: dir, Scheduler: "x", Where: "nodes=20"}, y, "gpu_alloc@100", "no grid points"},
		{Side{Path: bad, Scheduler: "x"}, Side{Path: bad, Scheduler: "y"}, "gpu_alloc@100", "line 11"},
		{Side{Path: twice, Scheduler: "x"}, y, "gpu_alloc@100", "line 12: a second x row for pod_list=a seed 1"},
		{Side{Path: cells, Scheduler: "ppo"}, y, "gpu_alloc@100", "no column"},
		{x, Side{Path: cells, Scheduler: "ppo"}, "unschedulable", "CURVE@LEVEL"},
		{x, Side{Path: odd, Scheduler: "ppo"}, "gpu_alloc@100", "one is an openb output"},
	} {
		_, err := Compare(c.a, c.b, c.metric)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s against %s, %s: %v; want an error with %q", c.a, c.b, c.metric, err, c.want)
		}
	}
}
