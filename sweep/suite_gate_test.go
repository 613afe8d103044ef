package sweep

import (
	"math"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/sim"
)

// TestGateWeightsByHand: the gate table weighs each replay's mean weights
// by its decisions. Burst window at 20 machines: replays of 100 decisions
// at (0.9, 0.1) and 300 at (0.5, 0.5): (90+150, 10+150)/400 = (0.6, 0.4).
// Calm window at 100 machines: one replay of 200 at (0.2, 0.8). Over all
// 600 decisions: tetris (90+150+40)/600, nospread (10+150+160)/600. Heuristics'
// rows and replays without a gate do not count.
func TestGateWeightsByHand(t *testing.T) {
	row := func(sched, regime string, nodes int, st map[string]float64) SuiteObs {
		return SuiteObs{Group: "trace.load_factor=1.3", Row: Row{Nodes: nodes, Workload: "s1/" + regime, Regime: regime,
			Result: &sim.Result{Scheduler: sched, SchedulerStats: st}}}
	}
	gate := func(n, a, b float64) map[string]float64 {
		return map[string]float64{"gate.decisions": n, "gate.tetris": a, "gate.kube-default-nospread": b}
	}
	obs := []SuiteObs{
		row(Learned, RegimeBurst, 20, gate(100, 0.9, 0.1)),
		row(Learned, RegimeBurst, 20, gate(300, 0.5, 0.5)),
		row(Learned, RegimeCalm, 100, gate(200, 0.2, 0.8)),
		row("tetris", RegimeCalm, 100, gate(1000, 1, 0)),
		row(Learned, RegimeCalm, 20, nil),
	}
	g := summariseGate(obs)
	if g == nil {
		t.Fatal("no gate table")
	}
	if strings.Join(g.Names, ",") != "kube-default-nospread,tetris" {
		t.Fatalf("names %v", g.Names)
	}
	type want struct {
		regime    string
		col       SuiteColumn
		decisions float64
		w         [2]float64 // nospread, tetris
	}
	b20 := SuiteColumn{"trace.load_factor=1.3", 20}
	c100 := SuiteColumn{"trace.load_factor=1.3", 100}
	wants := []want{
		{RegimeBurst, b20, 400, [2]float64{0.4, 0.6}},
		{RegimeBurst, SuiteColumn{}, 400, [2]float64{0.4, 0.6}},
		{RegimeCalm, c100, 200, [2]float64{0.8, 0.2}},
		{RegimeCalm, SuiteColumn{}, 200, [2]float64{0.8, 0.2}},
		{"", SuiteColumn{}, 600, [2]float64{320.0 / 600, 280.0 / 600}},
	}
	if len(g.Rows) != len(wants) {
		t.Fatalf("%d rows %+v; want %d", len(g.Rows), g.Rows, len(wants))
	}
	for i, w := range wants {
		r := g.Rows[i]
		if r.Regime != w.regime || r.Column != w.col || r.Decisions != w.decisions ||
			math.Abs(r.Weights[0]-w.w[0]) > 1e-12 || math.Abs(r.Weights[1]-w.w[1]) > 1e-12 {
			t.Errorf("row %d: %+v; want %+v", i, r, w)
		}
	}
	var b strings.Builder
	writeGate(&b, g)
	if !strings.Contains(b.String(), "| burst | load 1.3 n=20 | 400 | 0.400 | 0.600 |") {
		t.Errorf("table:\n%s", b.String())
	}
	if summariseGate(obs[3:]) != nil {
		t.Error("a table from replays without a gate")
	}
}
