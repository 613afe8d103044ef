package sweep

import (
	"context"
	"testing"

	"github.com/kubesim/kubesim/sim"
)

func TestMean(t *testing.T) {
	a := &sim.Result{Scheduler: "x", Pods: 10, FragmentationMean: 0.2, Evictions: 3}
	b := &sim.Result{Scheduler: "x", Pods: 21, FragmentationMean: 0.4, Evictions: 4}
	m := Mean([]*sim.Result{a, b})
	// Floats average exactly; integer counts average with truncation: (10+21)/2 = 15, (3+4)/2 = 3.
	if m.Scheduler != "x" || m.Pods != 15 || m.Evictions != 3 || m.FragmentationMean < 0.3-1e-12 || m.FragmentationMean > 0.3+1e-12 {
		t.Errorf("mean %+v", m)
	}
}

func TestBySize(t *testing.T) {
	r := func(n int, name string, frag float64) Row {
		return Row{Nodes: n, Result: &sim.Result{Scheduler: name, FragmentationMean: frag}}
	}
	rows := []Row{r(20, "a", 0.1), r(20, "b", 0.5), r(20, "a", 0.3), r(20, "b", 0.7), r(5, "b", 1)}
	sizes, tables := BySize(rows)
	if len(sizes) != 2 || sizes[0] != 20 || sizes[1] != 5 {
		t.Fatalf("sizes %v; want [20 5]", sizes)
	}
	got := tables[20]
	if len(got) != 2 || got[0].Scheduler != "a" || got[1].Scheduler != "b" ||
		got[0].FragmentationMean != 0.2 || got[1].FragmentationMean != 0.6 {
		t.Errorf("size 20: %+v %+v; want a 0.2, b 0.6", got[0], got[1])
	}
	if len(tables[5]) != 1 || tables[5][0].FragmentationMean != 1 {
		t.Errorf("size 5: %+v", tables[5])
	}
}

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
	ff := Scheduler{"ff", func() (sim.Scheduler, error) { return firstFit{}, nil }}
	rows, err := Replay(context.Background(), cases, []Scheduler{ff, {"ff2", ff.New}})
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Replay(context.Background(), cases, []Scheduler{ff, {"ff2", ff.New}})
	if len(rows) != 8 || rows[0].Nodes != 3 || rows[7].Nodes != 7 || rows[1].Result.Scheduler != "ff2" {
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
