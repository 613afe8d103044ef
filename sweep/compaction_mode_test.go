package sweep

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/sim"
)

const compactionSweep = `name: c
mode: compaction
compaction:
  threshold: 0.01
  min_factor: 0.5
  max_factor: 3
cluster:
  min_nodes: 3
  max_nodes: 5
  workload:
    pods_per_node: 30
  sim:
    autoscaler:
      enabled: false
eval:
  nodes: [6]
  schedulers: [first-fit, kube-default]
  seeds: 2
  train: false
`

// TestCompactionSweep: every row's answer lies in the search range, the
// replay at the answer is within the threshold and, where the size below
// was probed, that size failed; the summary holds the compaction table.
func TestCompactionSweep(t *testing.T) {
	out := t.TempDir()
	s := mustSpec(t, compactionSweep)
	o, err := Sweep(context.Background(), s, SweepOptions{Out: out, Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if o.Evaluated != 2 {
		t.Fatalf("%d cells evaluated; want 2 (2 seeds)", o.Evaluated)
	}
	for _, c := range o.Plan.Eval {
		var rows []Row
		if err := readJSON(cellPath(out, c.Hash), &rows); err != nil {
			t.Fatal(err)
		}
		if len(rows) != 2 {
			t.Fatalf("%d rows; want one per scheduler", len(rows))
		}
		for _, r := range rows {
			if r.Needed < 3 || r.Needed > 18 || r.Search == nil || r.Search.Nodes != r.Needed {
				t.Errorf("%s: needed %d (search %+v); want in [3, 18] and equal to the search's answer", r.Result.Scheduler, r.Needed, r.Search)
			}
			if !Within(r.Result, 0.01) {
				t.Errorf("%s at %d nodes: %d of %d pods unschedulable, beyond 1%%", r.Result.Scheduler, r.Needed, r.Result.Unschedulable, r.Result.Pods)
			}
			for _, p := range r.Search.Probes {
				if p.Nodes == r.Needed-1 && p.OK {
					t.Errorf("%s: %d nodes passed but the answer is %d", r.Result.Scheduler, p.Nodes, r.Needed)
				}
			}
		}
	}
	md := readFile(t, filepath.Join(out, SummaryFile))
	for _, want := range []string{"workloads of 6 machines, 2 seeds x 1 windows", "nodes needed", "saving vs kube-default"} {
		if !strings.Contains(md, want) {
			t.Errorf("summary lacks %q:\n%s", want, md)
		}
	}
	if csv := readFile(t, filepath.Join(out, CellsCSV)); !strings.Contains(strings.SplitN(csv, "\n", 2)[0], "nodes_needed") {
		t.Error("cells.csv has no nodes_needed column")
	}
}

// TestSummariseCompaction: hand-computed means and paired savings.
func TestSummariseCompaction(t *testing.T) {
	row := func(name string, seed uint64, needed int) Row {
		return Row{Nodes: 50, Seed: seed, Workload: "w", Result: &sim.Result{Scheduler: name}, Needed: needed}
	}
	rows := []Row{
		row("kube-default", 1, 40), row("tetris", 1, 38),
		row("kube-default", 2, 44), row("tetris", 2, 41),
	}
	got := SummariseCompaction(rows)
	if len(got) != 1 || got[0].Seeds != 2 || got[0].Windows != 1 {
		t.Fatalf("summary %+v; want one size, 2 seeds, 1 window", got)
	}
	s := got[0]
	// kube-default: mean 42, sd 2.828, half = 12.706*2.828/sqrt 2 = 25.412
	if kd := s.Needed[0]; kd.Mean != 42 || math.Abs(kd.Half-25.412) > 1e-3 {
		t.Errorf("kube-default %+v; want 42 ± 25.412", kd)
	}
	// savings 2 and 3: mean 2.5, sd 0.7071, half = 12.706*0.7071/sqrt 2 = 6.353
	if sv := s.Saving[1]; sv.Mean != 2.5 || math.Abs(sv.Half-6.353) > 1e-3 {
		t.Errorf("tetris saving %+v; want 2.5 ± 6.353", sv)
	}
	if s.Min[1] != 38 || s.Max[1] != 41 {
		t.Errorf("tetris range %d-%d; want 38-41", s.Min[1], s.Max[1])
	}
	var b strings.Builder
	if err := WriteCompaction(&b, "t", got, 0.001); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "+6.0%") || !strings.Contains(b.String(), "39.5±19.1*") {
		t.Errorf("table:\n%s\nwant tetris saving +6.0%% of 42 and 39.5±19.1 marked fewest", b.String())
	}
}

// TestCompactionSpecErrors: bad compaction settings name their key.
func TestCompactionSpecErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"mode: compact\n", `mode = "compact"`},
		{"compaction:\n  threshold: 1.5\n", "compaction.threshold"},
		{"compaction:\n  min_factor: 0\n", "compaction.min_factor"},
		{"compaction:\n  max_factor: 0.1\n", "compaction.max_factor"},
		{"mode: compaction\ncluster:\n  sim:\n    autoscaler:\n      enabled: true\n", "fixed cluster"},
	} {
		if _, err := ParseSpec([]byte(tc.yaml)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v; want one naming %q", tc.yaml, err, tc.want)
		}
	}
}
