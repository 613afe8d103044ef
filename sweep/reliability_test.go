package sweep

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Tests of issue 28, one per defect, named after it.

// TestCellFileOfAnotherCellRunsAgain (issue 28, defect 7): a cell file
// stored under another cell's hash was taken as that cell's result, so
// cells.csv lost one cell's rows and doubled another's. Each row now names
// its cell; a file that is not the cell's is run again.
func TestCellFileOfAnotherCellRunsAgain(t *testing.T) {
	out := t.TempDir()
	s := mustSpec(t, heuristicSweep)
	o, err := Sweep(context.Background(), s, SweepOptions{Out: out, Jobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	csv := readFile(t, filepath.Join(out, CellsCSV))
	a, b := cellPath(out, o.Plan.Eval[0].Hash), cellPath(out, o.Plan.Eval[1].Hash)
	if err := os.WriteFile(a, []byte(readFile(t, b)), 0o644); err != nil {
		t.Fatal(err)
	}
	o, err = Sweep(context.Background(), s, SweepOptions{Out: out, Jobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	// the copied-over cell runs again, the other three are cached
	if o.Evaluated != 1 || o.Cached != 3 {
		t.Errorf("%d evaluated, %d cached; want 1 and 3", o.Evaluated, o.Cached)
	}
	if again := readFile(t, filepath.Join(out, CellsCSV)); again != csv {
		t.Error("cells.csv changed: a cell's rows were taken from another cell")
	}

	// cells of one case that differ only in a setting (here the
	// workload's pod count) are told apart by the hash in each row
	rows := []Row{{Nodes: 3, Seed: 1, Workload: "synthetic-1", Cell: "other", Result: nil}}
	if err := checkCellRows(rows, "mine", 3, 1, "synthetic-1"); err == nil {
		t.Error("a row of cell \"other\" accepted for cell \"mine\"")
	}
}

// TestYAMLNumbersNotTruncated (issue 28, defect 8): eval.seeds: 2.5 was
// truncated to 2, and trace.load_factor: .nan failed late as "hashing cell:
// json: unsupported value: NaN", naming no key. Both are now errors naming
// the key and its line, in the spec and in a grid. Each spec starts with
// "name: n" on line 1.
func TestYAMLNumbersNotTruncated(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"real seeds", "eval:\n  seeds: 2.5\n", "line 3: eval.seeds = 2.5: want a whole number"},
		{"real in a list of ints", "eval:\n  nodes: [3, 4.5]\n", "line 3: eval.nodes[1] = 4.5: want a whole number"},
		{"NaN load factor", "trace:\n  dir: t\n  load_factor: .nan\n", "line 4: trace.load_factor = .nan: want a finite number"},
		{"infinite reward weight", "reward:\n  balance: .inf\n", "line 3: reward.balance = .inf: want a finite number"},
		{"grid of real seeds", "grid:\n  eval.seeds: [1, 2.5]\n", "line 3: grid key eval.seeds = 2.5: want a whole number"},
		{"grid of NaN load factors", "trace:\n  dir: t\ngrid:\n  trace.load_factor: [1, .NaN]\n", "grid key trace.load_factor = .NaN: want a finite number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSpec([]byte("name: n\n" + tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v; want one containing %q", err, tc.want)
			}
		})
	}
	// whole numbers written as such still parse
	if _, err := ParseSpec([]byte("name: n\neval:\n  seeds: 2\n  nodes: [3, 4]\n")); err != nil {
		t.Errorf("whole numbers: %v", err)
	}
}

// TestTooManyCellsRefusedBeforePlan (issue 28, defect 10): a grid of
// 65,536 points with eval.seeds: 1000 was accepted and the plan grew at
// 100 MB/s until killed. NewPlan now counts cells as it expands points and
// stops at maxCells, after a few hundred points.
func TestTooManyCellsRefusedBeforePlan(t *testing.T) {
	var nodes []string
	for i := range 65_536 {
		nodes = append(nodes, fmt.Sprint(3+i%7))
	}
	y := strings.Replace(heuristicSweep, "seeds: 2", "seeds: 1000", 1)
	y = strings.Replace(y, "eval.nodes: [3, 9]", "eval.nodes: ["+strings.Join(nodes, ", ")+"]", 1)
	s := mustSpec(t, y)
	_, err := NewPlan(s, CurrentBuild())
	if !errors.Is(err, ErrTooManyCells) {
		t.Fatalf("NewPlan: %v; want ErrTooManyCells", err)
	}
	// each point adds 1,000 cells (one size, 1,000 seeds, one synthetic
	// workload): the count stops at the first point past 100,000
	if !strings.Contains(err.Error(), "101000 so far") {
		t.Errorf("error %q; want it to stop at 101000 cells", err)
	}
}
