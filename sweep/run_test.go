package sweep

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/internal/memlimit"
	"github.com/kubesim/kubesim/sim"
)

// TestCasesAndReplay: synthetic cases at two sizes replayed by two
// schedulers give one row per (case, scheduler), deterministically.
func TestCasesAndReplay(t *testing.T) {
	s, err := ParseSpec([]byte("cluster:\n  workload:\n    pods_per_node: 10\neval:\n  nodes: [3, 7]\n  seeds: 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	cases, err := Cases(s, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 4 {
		t.Fatalf("%d cases; want 2 sizes x 2 seeds", len(cases))
	}
	ff := Scheduler{Name: "ff", New: func(uint64) (sim.Scheduler, error) { return firstFit{}, nil }}
	rows, err := Replay(context.Background(), cases, []Scheduler{ff, {Name: "ff2", New: ff.New}})
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Replay(context.Background(), cases, []Scheduler{ff, {Name: "ff2", New: ff.New}})
	if len(rows) != 8 || rows[0].Nodes != 3 || rows[7].Nodes != 7 || rows[1].Result.Scheduler != "ff2" ||
		rows[0].Seed != 1 || rows[2].Seed != 2 || rows[0].Workload == rows[2].Workload {
		t.Fatalf("rows %+v", rows)
	}
	for i := range rows {
		if rows[i].Result.FragmentationMean != again[i].Result.FragmentationMean || rows[i].Result.Pods != again[i].Result.Pods {
			t.Errorf("row %d differs between runs", i)
		}
	}
}

type firstFit struct{}

func (firstFit) Name() string { return "ff" }
func (firstFit) Schedule(c *sim.Cluster, p *sim.Pod) int {
	for i := range c.Nodes() {
		if sim.Feasible(&c.Nodes()[i], p.Spec) {
			return i
		}
	}
	return sim.PendingDecision
}

// TestSweepRefusesOversizedCluster: an eval size far beyond memory fails
// before any workload is built, with an error naming the key.
func TestSweepRefusesOversizedCluster(t *testing.T) {
	s, err := ParseSpec([]byte("eval:\n  nodes: [3, 100000000]\n  seeds: 1\n  schedulers: [first-fit]\n"))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	_, err = Sweep(context.Background(), s, SweepOptions{Out: out})
	if !errors.Is(err, memlimit.ErrTooBig) || !strings.Contains(err.Error(), "eval.nodes 100000000") {
		t.Errorf("Sweep = %v; want memlimit.ErrTooBig naming eval.nodes 100000000", err)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("the refused sweep wrote %d entries into its folder", len(entries))
	}
}
