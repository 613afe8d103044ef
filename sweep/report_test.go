package sweep

import (
	"math"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/sim"
)

// TestSummarise: two heuristics and the learned policy at one size, two
// seeds of two windows each, on one metric (unschedulable pods).
func TestSummarise(t *testing.T) {
	row := func(name string, seed uint64, win string, unsched int64) Row {
		return Row{Nodes: 20, Seed: seed, Workload: win, Result: &sim.Result{Scheduler: name, Unschedulable: unsched}}
	}
	rows := []Row{
		// seed 1: a = (10+12)/2 = 11, b = (20+22)/2 = 21, ppo = (8+8)/2 = 8
		row("a", 1, "w1", 10), row("b", 1, "w1", 20), row(Learned, 1, "w1", 8),
		row("a", 1, "w2", 12), row("b", 1, "w2", 22), row(Learned, 1, "w2", 8),
		// seed 2: a = 13, b = 15, ppo = 11
		row("a", 2, "w1", 13), row("b", 2, "w1", 15), row(Learned, 2, "w1", 11),
		row("a", 2, "w2", 13), row("b", 2, "w2", 15), row(Learned, 2, "w2", 11),
	}
	metrics := Focused[:1]
	tables := Summarise(rows, metrics)
	if len(tables) != 1 || tables[0].Seeds != 2 || tables[0].Windows != 2 || len(tables[0].Schedulers) != 3 {
		t.Fatalf("tables %+v", tables)
	}
	c := tables[0].Cells
	// a: seeds 11, 13 -> mean 12, sd sqrt(2), half = 12.706 * sqrt(2)/sqrt(2)
	// = 12.706; b: 21, 15 -> 18; ppo: 8, 11 -> 9.5
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if !near(c[0][0].Mean, 12) || !near(c[0][0].Half, 12.706) || !near(c[1][0].Mean, 18) || !near(c[2][0].Mean, 9.5) {
		t.Errorf("means %v %v %v; want 12 (+-12.706), 18, 9.5", c[0][0], c[1][0], c[2][0])
	}
	// a is the best heuristic; ppo has the best mean; ppo - a per seed:
	// -3, -2 -> mean -2.5, sd sqrt(0.5), half = 12.706 * sqrt(0.5)/sqrt(2)
	// = 6.353; b - a: 10, 2 -> mean 6
	if !c[0][0].BestHeuristic || c[1][0].BestHeuristic || !c[2][0].Best || c[0][0].Best {
		t.Errorf("best marks: a %+v, ppo %+v", c[0][0], c[2][0])
	}
	if !near(c[2][0].Diff.Mean, -2.5) || !near(c[2][0].Diff.Half, 6.353) || !near(c[1][0].Diff.Mean, 6) || c[0][0].Diff.N != 0 {
		t.Errorf("differences: ppo %+v, b %+v, a %+v", c[2][0].Diff, c[1][0].Diff, c[0][0].Diff)
	}
	var b strings.Builder
	if err := WriteSummary(&b, "x", tables, metrics, func(n int) bool { return n > 10 }); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"20 nodes, outside the training range: 2 seeds x 2 windows", "12.0±12.7", "9.5±19.1*", "-2.5±6.4", "="} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
}

// TestSummariseVariant: a size cap or an admission rule is never the
// heuristic the differences are taken against, even with the lowest mean:
// it is measured against the plain heuristics, as the learned policy is.
func TestSummariseVariant(t *testing.T) {
	row := func(name string, seed uint64, unsched int64) Row {
		return Row{Nodes: 20, Seed: seed, Workload: "w", Result: &sim.Result{Scheduler: name, Unschedulable: unsched}}
	}
	rows := []Row{
		row("holes", 1, 10), row("holes@adm:gib=40", 1, 7), row("best-fit@cap24", 1, 5),
		row("holes", 2, 12), row("holes@adm:gib=40", 2, 11), row("best-fit@cap24", 2, 9),
	}
	c := Summarise(rows, Focused[:1])[0].Cells
	// holes is the reference; the rule - holes per seed: -3, -1 -> mean -2;
	// the cap - holes: -5, -3 -> mean -4, and the cap has the best mean (7).
	if !c[0][0].BestHeuristic || c[1][0].BestHeuristic || c[2][0].BestHeuristic || !c[2][0].Best {
		t.Errorf("marks: holes %+v, rule %+v, cap %+v", c[0][0], c[1][0], c[2][0])
	}
	if c[1][0].Diff.Mean != -2 || c[2][0].Diff.Mean != -4 {
		t.Errorf("differences: rule %v, cap %v; want -2, -4", c[1][0].Diff.Mean, c[2][0].Diff.Mean)
	}
}

// TestSummaryWidth: the focused table fits 120 characters with the longest
// scheduler name and three-digit values in every column.
func TestSummaryWidth(t *testing.T) {
	var rows []Row
	for seed := uint64(1); seed <= 5; seed++ {
		for _, name := range []string{"kube-default-nospread", "kube-default", Learned} {
			rows = append(rows, Row{Nodes: 200, Seed: seed, Workload: "w", Result: &sim.Result{
				Scheduler: name, Unschedulable: int64(190 * seed), HighPrioPendingMeanMs: 190e3 * float64(seed),
				HighPrioPendingP95CensoredMs: 7.2e6 / float64(seed+1), SLAAnyPer1k: 190 * float64(seed),
				FragExpCPU: 0.95 / float64(seed), FragExpMem: 0.19 * float64(seed), NodeCPUVarMean: 0.019 * float64(seed),
				HotNodeShare: sim.Stat(0.19 * float64(seed)), NodeHours: 190 * float64(seed)}})
		}
	}
	var b strings.Builder
	if err := WriteSummary(&b, "default", Summarise(rows, Focused), Focused, nil); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(b.String(), "\n") {
		if n := len([]rune(line)); n > 120 {
			t.Errorf("line of %d characters:\n%s", n, line)
		}
	}
}

func TestShownZero(t *testing.T) {
	for s, want := range map[string]bool{"+0.0±0.0": true, "-0.00±0.01": true, "+0": true, "+0.1±0.0": false, "-10±3": false, "+100": false} {
		if got := shownZero(s); got != want {
			t.Errorf("shownZero(%q) = %v; want %v", s, got, want)
		}
	}
}

// TestSummariseFluid: the fluid relaxation and the admission bound are
// never the best of a column nor the best heuristic, even with the lowest
// value; their difference against the best heuristic is reported; metrics
// without Bound (fluid) or Lower (admission) read n/a.
func TestSummariseFluid(t *testing.T) {
	row := func(name string, seed uint64, unsched int64, varMean float64) Row {
		return Row{Nodes: 20, Seed: seed, Workload: "w", Result: &sim.Result{Scheduler: name, Unschedulable: unsched, NodeCPUVarMean: varMean}}
	}
	rows := []Row{
		row("a", 1, 10, 1e-4), row(FluidBound, 1, 2, 0), row(AdmissionBound, 1, 7, 0),
		row("a", 2, 12, 2e-4), row(FluidBound, 2, 4, 0), row(AdmissionBound, 2, 8, 0),
	}
	var metrics []Metric
	for _, m := range Focused {
		if m.Key == "unschedulable" || m.Key == "node_cpu_var_mean" {
			metrics = append(metrics, m)
		}
	}
	c := Summarise(rows, metrics)[0].Cells
	if !c[0][0].Best || !c[0][0].BestHeuristic || c[1][0].Best || c[1][0].BestHeuristic {
		t.Errorf("marks: a %+v, fluid %+v; want a best and best heuristic, fluid neither", c[0][0], c[1][0])
	}
	// fluid - a per seed: -8, -8
	if c[1][0].Diff.Mean != -8 {
		t.Errorf("fluid difference %+v; want -8", c[1][0].Diff)
	}
	if !math.IsNaN(c[1][1].Mean) || c[1][1].Best {
		t.Errorf("fluid variance %+v; want n/a (one node's variance means nothing)", c[1][1])
	}
	// admission - a per seed: -3, -4
	if c[2][0].Mean != 7.5 || c[2][0].Diff.Mean != -3.5 || c[2][0].Best || c[2][0].BestHeuristic {
		t.Errorf("admission bound %+v; want mean 7.5, difference -3.5, neither best", c[2][0])
	}
	if !math.IsNaN(c[2][1].Mean) {
		t.Errorf("admission bound's variance %+v; want n/a (it bounds unschedulable pods only)", c[2][1])
	}
}

// TestSummaryCensoredNote: the table says under it when more than 5% of
// the high-priority pods of some scheduler were never bound (there the
// censored p95 orders schedulers by arrival times), and only then.
func TestSummaryCensoredNote(t *testing.T) {
	rows := func(neverA, neverB int) []Row {
		var rs []Row
		for seed := uint64(1); seed <= 2; seed++ {
			for name, never := range map[string]int{"kube-default-nospread": neverA, "tetris": neverB} {
				r := &sim.Result{Scheduler: name, Unschedulable: int64(never)}
				r.HighPrioCensored = sim.Latency{Count: 100, Censored: never}
				rs = append(rs, Row{Nodes: 20, Seed: seed, Workload: "w", Result: r})
			}
		}
		return rs
	}
	// 12 of 200 pods (6%) for kube-default-nospread, 8 of 200 for tetris
	tab := Summarise(rows(6, 4), Focused)
	if got := tab[0].HiUnbound; math.Abs(got-0.06) > 1e-12 || tab[0].HiUnboundBy != "kube-default-nospread" {
		t.Errorf("hi unbound %v by %q; want 0.06 by kube-default-nospread", got, tab[0].HiUnboundBy)
	}
	var b strings.Builder
	if err := WriteSummary(&b, "x", tab, Focused, nil); err != nil {
		t.Fatal(err)
	}
	if want := "note: 6% of high-priority pods never bound (kube-default-nospread)"; !strings.Contains(b.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, b.String())
	}
	for _, line := range strings.Split(b.String(), "\n") {
		if n := len([]rune(line)); n > 120 {
			t.Errorf("line of %d characters:\n%s", n, line)
		}
	}
	// 5% exactly: the p95 is still a bound pod's wait or the first
	// censored one; no note
	b.Reset()
	if err := WriteSummary(&b, "x", Summarise(rows(5, 4), Focused), Focused, nil); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "note:") {
		t.Errorf("a note at 5%%:\n%s", b.String())
	}
}
