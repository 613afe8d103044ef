package sweep

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/dataset"
	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/ppo"
	"github.com/kubesim/kubesim/sim"
)

// TestSuiteSplitDisjoint checks that a seed in two splits (or twice in one)
// is refused, naming the seed.
func TestSuiteSplitDisjoint(t *testing.T) {
	for _, c := range []struct {
		name, seeds, want string
	}{
		{"train and test", "train_seeds: [1, 2], validation_seeds: [3], test_seeds: [2]", "seed 2 is in train_seeds and test_seeds"},
		{"validation and test", "train_seeds: [1], validation_seeds: [3], test_seeds: [4, 3]", "seed 3 is in validation_seeds and test_seeds"},
		{"twice in train", "train_seeds: [1, 1], validation_seeds: [3], test_seeds: [4]", "seed 1 listed twice"},
		{"a split missing", "train_seeds: [1], validation_seeds: [3]", "give train_seeds, validation_seeds and test_seeds"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseSpec([]byte(fmt.Sprintf("suite: {dir: d, machines: [8], %s}\ntrace: {load_factor: 1}\n", c.seeds)))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v; want one saying %q", err, c.want)
			}
		})
	}
	// a trace dir or a windows section beside a suite is refused too
	for _, extra := range []string{"trace: {dir: x}", "trace: {load_factor: 1}\nwindows: {train: [0h-1h], validation: [1h-2h], test: [2h-3h]}"} {
		if _, err := ParseSpec([]byte("suite: {dir: d, machines: [8], train_seeds: [1], validation_seeds: [2], test_seeds: [3]}\n" + extra)); err == nil {
			t.Errorf("suite with %q: no error", extra)
		}
	}
}

// smallSuite is a suite spec of four small traces (8 machines, 6 hours,
// one-hour windows): train seeds 11 and 12, validation 21, test 31.
func smallSuite(t *testing.T, extra string) *Spec {
	t.Helper()
	spec, err := ParseSpec([]byte(fmt.Sprintf(`
suite: {dir: %s, days: 0.25, machines: [8], train_seeds: [11, 12], validation_seeds: [21], test_seeds: [31], window_ms: 3600000, day_windows: 2}
trace: {load_factor: 1}
cluster: {min_nodes: 3, max_nodes: 5, max_steps: 64}
eval: {nodes: [4, 100], seeds: 2}
%s`, t.TempDir(), extra)))
	if err != nil {
		t.Fatal(err)
	}
	if err := spec.EnsureData(context.Background()); err != nil {
		t.Fatal(err)
	}
	return spec
}

// TestNoTestSeedInSuiteTraining trains briefly on a suite, with validation
// on, and checks every workload that reached the trainer or its evaluator:
// none holds a pod of the test seed's trace (its batch pods, told apart by
// name, arrival and request), training's come from the train seeds'
// traces and validation's from the validation seed's. The evaluation cells
// replay the test trace only.
func TestNoTestSeedInSuiteTraining(t *testing.T) {
	spec := smallSuite(t, `ppo: {n_envs: 2, n_steps: 32, batch_size: 32, n_epochs: 1, hidden: 16, total_timesteps: 256, eval_freq: 64, eval_episodes: 2}`)
	train, val, err := spec.Sources()
	if err != nil {
		t.Fatal(err)
	}
	dirsOf := func(src env.Source) []string {
		var ds []string
		for _, tr := range src.(env.Traces) {
			ds = append(ds, filepath.Base(tr.Dir))
		}
		return ds
	}
	if got := fmt.Sprint(dirsOf(train)); got != "[seed-11-m8-d0.25 seed-12-m8-d0.25]" {
		t.Fatalf("training traces %s; want seeds 11 and 12", got)
	}
	if got := fmt.Sprint(dirsOf(val)); got != "[seed-21-m8-d0.25]" {
		t.Fatalf("validation traces %s; want seed 21", got)
	}
	rt, rv := &recorder{src: train}, &recorder{src: val}
	tr, err := ppo.New(spec.PPO, spec.EnvConfig(), rt, rv, ppo.Options{Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(rt.seen) == 0 || len(rv.seen) == 0 {
		t.Fatalf("%d training and %d validation workloads; want both used", len(rt.seen), len(rv.seen))
	}
	key := func(p sim.PodSpec) string { return fmt.Sprint(p.Name, p.Arrival, p.Requests) }
	testPods := map[string]bool{}
	w, err := dataset.Load(spec.Suite.TraceDir(31), dataset.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range w.Pods {
		if p.Priority == sim.Low {
			testPods[key(p)] = true
		}
	}
	if len(testPods) == 0 {
		t.Fatal("the test trace holds no batch pod; the check would be empty")
	}
	for _, r := range []*recorder{rt, rv} {
		for _, w := range r.seen {
			for _, p := range w.Pods {
				if p.Priority == sim.Low && testPods[key(p)] {
					t.Fatalf("workload %q holds test pod %s", w.Name, p.Name)
				}
			}
		}
	}
	plan, err := NewPlan(spec, Build{Code: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Eval) == 0 {
		t.Fatal("no evaluation cells")
	}
	for _, c := range plan.Eval {
		if filepath.Base(c.Case.dir) != "seed-31-m8-d0.25" || !strings.HasPrefix(c.Case.Workload, "s31/") {
			t.Fatalf("evaluation cell %s replays %s; want the test trace only", c.Case.Workload, c.Case.dir)
		}
	}
}

// TestSuiteWindows checks the windows of an evaluated trace: day_windows
// grid windows spread over the day, then the heaviest window, each with a
// regime that follows its arrivals, and every training trace's heaviest
// window listed heavy_weight times.
func TestSuiteWindows(t *testing.T) {
	spec := smallSuite(t, "")
	u := spec.Suite
	ws, err := u.EvalWindows(SplitTest)
	if err != nil {
		t.Fatal(err)
	}
	// 6 one-hour slots; the first (k = 0) test trace takes slots 0 and 3
	if len(ws) != 3 || ws[0].Window.From != 0 || ws[1].Window.From != 3*sim.Hour || !ws[2].Heaviest {
		t.Fatalf("windows %+v; want slots 0h and 3h, then the heaviest", ws)
	}
	all, err := u.traceWindows(31)
	if err != nil {
		t.Fatal(err)
	}
	var arr []int64
	for _, w := range all[:len(all)-1] {
		arr = append(arr, w.Arrivals)
	}
	med := median(arr)
	for _, w := range all {
		want := RegimeCalm
		if float64(w.Arrivals) >= u.BurstRatio*med {
			want = RegimeBurst
		}
		if w.Regime != want {
			t.Errorf("%s: %d arrivals, median %v: regime %s; want %s", w.Window, w.Arrivals, med, w.Regime, want)
		}
		if w.Heaviest && slicesMax(arr) > w.Arrivals {
			t.Errorf("heaviest window %s has %d arrivals, a grid window %d", w.Window, w.Arrivals, slicesMax(arr))
		}
	}
	// a day window that is the heaviest window is listed once: force the
	// heaviest onto slot 0 (the first day window) and ask again
	ws0, _ := u.traceWindows(31)
	heavy := &u.windows[31][len(ws0)-1]
	saved := heavy.Window
	heavy.Window = dataset.Window{Name: dataset.HeaviestName, From: 0, To: sim.Hour}
	again, err := u.EvalWindows(SplitTest)
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != 2 || again[0].Window.From != 3*sim.Hour || !again[1].Heaviest {
		t.Fatalf("windows %+v with the heaviest on slot 0; want slot 3h, then the heaviest (slot 0 not twice)", again)
	}
	heavy.Window = saved
	train, err := u.Source(SplitTrain, spec.Trace)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range train.(env.Traces) {
		// 6 grid windows and the heaviest 4 times (the default heavy_weight)
		if len(tr.Windows) != 10 || tr.Windows[6] != tr.Windows[9] {
			t.Errorf("%s: %d training windows %v; want the 6 grid windows and the heaviest 4 times", tr.Dir, len(tr.Windows), tr.Windows)
		}
	}
}

func slicesMax(xs []int64) int64 {
	m := int64(math.MinInt64)
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// TestHindsightGateByHand checks the suite report on a hand-computed case:
// two heuristics and a policy over two windows (one burst, one calm) at
// one size, two seeds each.
func TestHindsightGateByHand(t *testing.T) {
	var obs []SuiteObs
	add := func(sched, wl, regime string, seed uint64, unsched int) {
		obs = append(obs, SuiteObs{Group: "trace.load_factor=1.3", Row: Row{Nodes: 20, Seed: seed, Workload: wl, Regime: regime,
			Result: &sim.Result{Scheduler: sched, Unschedulable: int64(unsched), HighPrioPendingP95CensoredMs: float64(1000 * unsched)}}})
	}
	// burst window b: kube-default 10 and 20 (mean 15), tetris 2 and 4 (3), ppo 40 and 40
	add("kube-default", "s1/b", RegimeBurst, 1, 10)
	add("kube-default", "s1/b", RegimeBurst, 2, 20)
	add("tetris", "s1/b", RegimeBurst, 1, 2)
	add("tetris", "s1/b", RegimeBurst, 2, 4)
	add(Learned, "s1/b", RegimeBurst, 1, 40)
	add(Learned, "s1/b", RegimeBurst, 2, 40)
	// calm window c: kube-default 1 and 3 (2), tetris 30 and 30 (30), ppo 1 and 1
	add("kube-default", "s1/c", RegimeCalm, 1, 1)
	add("kube-default", "s1/c", RegimeCalm, 2, 3)
	add("tetris", "s1/c", RegimeCalm, 1, 30)
	add("tetris", "s1/c", RegimeCalm, 2, 30)
	add(Learned, "s1/c", RegimeCalm, 1, 1)
	add(Learned, "s1/c", RegimeCalm, 2, 1)
	rep := SummariseSuite(obs)
	// totals (sums of per-cell means): kube-default 15 + 2 = 17, tetris 3 + 30 = 33
	if rep.BestSingle != "kube-default" {
		t.Fatalf("best single %q; want kube-default (17 pods against tetris's 33)", rep.BestSingle)
	}
	line := func(tab SuiteTable, name string) SuiteLine {
		for _, l := range tab.Lines {
			if l.Scheduler == name {
				return l
			}
		}
		t.Fatalf("no line %s in the %q table", name, tab.Regime)
		return SuiteLine{}
	}
	if len(rep.Tables) != 3 || rep.Tables[0].Regime != RegimeBurst || rep.Tables[1].Regime != RegimeCalm || rep.Tables[2].Regime != "" {
		t.Fatalf("tables %v; want burst, calm, all", rep.Tables)
	}
	all := rep.Tables[2]
	// the gate takes tetris in b (3 < 15) and kube-default in c (2 < 30): 3 + 2 = 5
	if g := line(all, HindsightGate); g.Total != 5 || math.Abs(g.Ratio-5.0/17) > 1e-12 {
		t.Errorf("gate total %v ratio %v; want 5 and 5/17", g.Total, g.Ratio)
	}
	// ppo: 40 + 1 = 41 = 2.41x; paired differences per (window, seed) against
	// kube-default: 30, 20, 0, -2: mean 12 over 4 pairs, times 2 cells: +24 = 41 - 17
	p := line(all, Learned)
	if p.Total != 41 || math.Abs(p.Diff.Mean-24) > 1e-9 || p.Diff.N != 4 {
		t.Errorf("ppo total %v diff %+v; want 41 and +24 over 4 pairs", p.Total, p.Diff)
	}
	// collapse: b has 40 > 1.25*15 + 5 = 23.75; c has 1 <= 1.25*2 + 5
	if p.Collapses != 1 {
		t.Errorf("ppo collapses in %d cells; want 1", p.Collapses)
	}
	// high-priority p95 (here unsched seconds): ppo mean (40+40+1+1)/4 = 20.5;
	// against kube-default pairs 30, 20, 0, -2: mean 12
	if math.Abs(p.P95-20.5) > 1e-9 || math.Abs(p.P95Diff.Mean-12) > 1e-9 {
		t.Errorf("ppo p95 %v diff %v; want 20.5 and +12", p.P95, p.P95Diff.Mean)
	}
	burst := rep.Tables[0]
	// in the burst table, the gate is tetris: 3, and tetris is 3/15 = 0.2x
	if g, tt := line(burst, HindsightGate), line(burst, "tetris"); g.Total != 3 || tt.Ratio != 0.2 {
		t.Errorf("burst: gate %v, tetris ratio %v; want 3 and 0.2", g.Total, tt.Ratio)
	}
	// A variant (here ties to the lowest index) with 0 pods everywhere is a
	// row judged against the registered heuristics: neither the best single
	// heuristic nor a choice of the gate.
	for _, seed := range []uint64{1, 2} {
		add("tetris@lowest", "s1/b", RegimeBurst, seed, 0)
		add("tetris@lowest", "s1/c", RegimeCalm, seed, 0)
	}
	rep = SummariseSuite(obs)
	all = rep.Tables[2]
	if v, g := line(all, "tetris@lowest"), line(all, HindsightGate); rep.BestSingle != "kube-default" || v.Total != 0 || g.Total != 5 {
		t.Errorf("with a variant: best single %q, variant total %v, gate %v; want kube-default, 0, 5", rep.BestSingle, v.Total, g.Total)
	}
	var b strings.Builder
	if err := WriteSuite(&b, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Best single heuristic over the whole suite (every regime, load and size): **kube-default**",
		"### burst windows (1 windows, 1 cells)", "| hindsight-gate | 5.0 | 5.0 | 0.294 |", "load 1.3 n=20"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}

// TestSuiteSweep runs a small suite sweep of two heuristics and checks that
// its summary has the suite section, with a table per regime present, and
// that cells.csv has the regime column.
func TestSuiteSweep(t *testing.T) {
	spec := smallSuite(t, "")
	spec.Eval.Schedulers, spec.Eval.Nodes, spec.Eval.Train = []string{"kube-default", "tetris"}, []int{4}, false
	out := t.TempDir()
	if _, err := Sweep(context.Background(), spec, SweepOptions{Out: out, Jobs: 2}); err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(out, SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Suite: unschedulable pods by regime", "### all windows (3 windows, 3 cells)", "| hindsight-gate |", "| tetris |", "plots/suite-regimes.png"} {
		if !strings.Contains(string(sum), want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
	if _, err := os.Stat(filepath.Join(out, PlotsDir, SuitePlot)); err != nil {
		t.Errorf("no suite plot: %v", err)
	}
	cells, err := os.ReadFile(filepath.Join(out, CellsCSV))
	if err != nil {
		t.Fatal(err)
	}
	if head, _, _ := strings.Cut(string(cells), "\n"); !strings.HasPrefix(head, "nodes,seed,workload,scheduler,regime,") {
		t.Errorf("cells.csv header %q; want the regime column after scheduler", head)
	}
}

// TestHindsightCrossByHand: one cell, two heuristics over two seeds, a
// with 0 and 10 pods and b with 6 and 6. The plain gate picks a (mean 5 <
// 6): 5. The cross-fitted gate picks, for seed 1, the best on seed 2 (b:
// 6) and scores b's 6; for seed 2 the best on seed 1 (a: 0) and scores
// a's 10: a mean of 8. a against itself (0 against 10) exceeds the
// collapse margin: the seed noise counts 1 cell.
func TestHindsightCrossByHand(t *testing.T) {
	var obs []SuiteObs
	add := func(sched string, seed uint64, unsched int) {
		obs = append(obs, SuiteObs{Group: "trace.load_factor=1.3", Row: Row{Nodes: 20, Seed: seed, Workload: "s1/w", Regime: RegimeCalm,
			Result: &sim.Result{Scheduler: sched, Unschedulable: int64(unsched)}}})
	}
	add("kube-default", 1, 0)
	add("kube-default", 2, 10)
	add("tetris", 1, 6)
	add("tetris", 2, 6)
	rep := SummariseSuite(obs)
	all := rep.Tables[len(rep.Tables)-1]
	got := map[string]float64{}
	for _, l := range all.Lines {
		got[l.Scheduler] = l.Total
	}
	if got[HindsightGate] != 5 || got[HindsightCross] != 8 {
		t.Errorf("gate %v, cross-fitted gate %v; want 5 and 8", got[HindsightGate], got[HindsightCross])
	}
	if all.SelfCollapses != 1 {
		t.Errorf("seed noise %d cells; want 1", all.SelfCollapses)
	}
	// Against kube-default (the best single, 0 and 10): tetris's mean 6 is
	// within 1.25*5 + 5, no collapse. best-fit's 30 and 31 collapse (30.5 >
	// 11.25), but the excess paired by seed, 30-5 = 25 and 31-17.5 = 13.5,
	// has a 95% interval of 19.25 ± 73.1 (t = 12.71 over 2 seeds): not
	// significant. random's 40 and 52 give 35 and 34.5, 34.75 ± 3.2:
	// significant.
	add("best-fit", 1, 30)
	add("best-fit", 2, 31)
	add("random", 1, 40)
	add("random", 2, 52)
	rep = SummariseSuite(obs)
	for _, l := range rep.Tables[len(rep.Tables)-1].Lines {
		switch l.Scheduler {
		case "tetris":
			if l.Collapses != 0 || l.SigCollapses != 0 {
				t.Errorf("tetris collapses %d (%d); want 0 (0)", l.Collapses, l.SigCollapses)
			}
		case "best-fit":
			if l.Collapses != 1 || l.SigCollapses != 0 {
				t.Errorf("best-fit collapses %d (%d); want 1 (0)", l.Collapses, l.SigCollapses)
			}
		case "random":
			if l.Collapses != 1 || l.SigCollapses != 1 {
				t.Errorf("random collapses %d (%d); want 1 (1)", l.Collapses, l.SigCollapses)
			}
		}
	}
	// one seed per cell: no cross-fitted row, no noise count
	rep = SummariseSuite(append(obs[:1:1], obs[2]))
	for _, l := range rep.Tables[len(rep.Tables)-1].Lines {
		if l.Scheduler == HindsightCross {
			t.Error("a cross-fitted row with one seed per cell")
		}
	}
	if n := rep.Tables[len(rep.Tables)-1].SelfCollapses; n != -1 {
		t.Errorf("seed noise %d with one seed; want -1", n)
	}
}

// TestSuiteHighPriorityWaits checks the high-priority columns on a
// hand-computed cell where the censored p95 and the count past the SLA
// deadline disagree: tetris leaves fewer high-priority pods waiting and
// unbound, but its unbound ones arrived earlier, so its censored p95 is
// the larger.
func TestSuiteHighPriorityWaits(t *testing.T) {
	var obs []SuiteObs
	add := func(sched string, seed uint64, wait, never int64, p95s float64) {
		r := &sim.Result{Scheduler: sched, Unschedulable: never, SLAWaitViolations: wait, HighPrioPendingP95CensoredMs: 1000 * p95s}
		r.HighPrioCensored = sim.Latency{Count: 100, Censored: int(never)}
		obs = append(obs, SuiteObs{Group: "trace.load_factor=1.3", Row: Row{Nodes: 20, Seed: seed, Workload: "s1/w", Regime: RegimeBurst, Result: r}})
	}
	add("kube-default", 1, 10, 8, 100)
	add("kube-default", 2, 14, 10, 120)
	add("tetris", 1, 6, 5, 3000)
	add("tetris", 2, 8, 6, 3100)
	rep := SummariseSuite(obs)
	all := rep.Tables[len(rep.Tables)-1]
	lines := map[string]SuiteLine{}
	for _, l := range all.Lines {
		lines[l.Scheduler] = l
	}
	kd, tt := lines["kube-default"], lines["tetris"]
	// tetris: mean wait (6+8)/2 = 7; pairs 6-10 and 8-14: mean -5, one cell;
	// half-width t(1) = 12.71 times the pairs' standard error, 1
	if tt.HiWait != 7 || kd.HiWait != 12 || math.Abs(tt.HiWaitDiff.Mean+5) > 1e-12 || tt.HiWaitDiff.N != 2 {
		t.Errorf("hi > SLA: tetris %v (diff %+v), kube-default %v; want 7 (-5 over 2 pairs) and 12", tt.HiWait, tt.HiWaitDiff, kd.HiWait)
	}
	// never bound: 11 of 200 and 18 of 200
	if math.Abs(tt.HiNever-0.055) > 1e-12 || math.Abs(kd.HiNever-0.09) > 1e-12 {
		t.Errorf("hi never: tetris %v, kube-default %v; want 0.055 and 0.09", tt.HiNever, kd.HiNever)
	}
	// the censored p95 ranks them the other way: +2940 s
	if math.Abs(tt.P95Diff.Mean-2940) > 1e-9 {
		t.Errorf("p95 diff %v; want +2940", tt.P95Diff.Mean)
	}
	var b strings.Builder
	if err := WriteSuite(&b, rep); err != nil {
		t.Fatal(err)
	}
	if want := "| 7.0 | -5.0 ± 12.7 | 5.5% | 3050 |"; !strings.Contains(b.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, b.String())
	}
}
