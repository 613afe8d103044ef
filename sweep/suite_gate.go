package sweep

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// gatePrefix marks a learned gate's weights among a replay's
// Result.SchedulerStats (agent.Scheduler.Stats): "gate.<heuristic>" is the
// mean weight of that prior over the replay's decisions, gateDecisions
// their number.
const (
	gatePrefix    = "gate."
	gateDecisions = "gate.decisions"
)

// GateRow is the learned gate's mean weights over some of a suite's
// replays: each prior's weight averaged over every decision of those
// replays (each replay's mean weighted by its decisions).
type GateRow struct {
	// Regime is RegimeBurst, RegimeCalm or "" (every window); Column the
	// (group, size) or, for a regime's total, the zero SuiteColumn.
	Regime    string
	Column    SuiteColumn
	Decisions float64
	Weights   []float64 // in GateWeights.Names' order
}

// GateWeights is what a gated policy's gate did over a suite: per regime
// and column, then per regime, then over everything.
type GateWeights struct {
	Names []string // the gate's heuristics, sorted
	Rows  []GateRow
}

// summariseGate reads the learned policy's gate weights from the replays;
// nil when no replay of Learned reports a gate.
func summariseGate(obs []SuiteObs) *GateWeights {
	type key struct {
		regime string
		col    SuiteColumn
	}
	names := map[string]bool{}
	sum := map[key]map[string]float64{}
	dec := map[key]float64{}
	for _, o := range obs {
		st := o.Row.Result.SchedulerStats
		n := st[gateDecisions]
		if o.Row.Result.Scheduler != Learned || n <= 0 {
			continue
		}
		col := SuiteColumn{o.Group, o.Row.Nodes}
		for _, k := range []key{{o.Row.Regime, col}, {o.Row.Regime, SuiteColumn{}}, {"", SuiteColumn{}}} {
			if sum[k] == nil {
				sum[k] = map[string]float64{}
			}
			dec[k] += n
			for s, w := range st {
				if h, ok := strings.CutPrefix(s, gatePrefix); ok && s != gateDecisions {
					names[h] = true
					sum[k][h] += w * n
				}
			}
		}
	}
	if len(dec) == 0 {
		return nil
	}
	g := &GateWeights{}
	for h := range names {
		g.Names = append(g.Names, h)
	}
	slices.Sort(g.Names)
	var keys []key
	for k := range dec {
		keys = append(keys, k)
	}
	// burst before calm before every window; a regime's columns before its total
	rank := func(r string) int { return map[string]int{RegimeBurst: 0, RegimeCalm: 1, "": 2}[r] }
	total := func(c SuiteColumn) int {
		if c == (SuiteColumn{}) {
			return 1
		}
		return 0
	}
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(rank(a.regime), rank(b.regime)), cmp.Compare(total(a.col), total(b.col)),
			cmp.Compare(a.col.Group, b.col.Group), cmp.Compare(a.col.Nodes, b.col.Nodes))
	})
	for _, k := range keys {
		r := GateRow{Regime: k.regime, Column: k.col, Decisions: dec[k]}
		for _, h := range g.Names {
			r.Weights = append(r.Weights, sum[k][h]/dec[k])
		}
		g.Rows = append(g.Rows, r)
	}
	return g
}

// writeGate prints the gate's weights as a markdown table.
func writeGate(b *strings.Builder, g *GateWeights) {
	fmt.Fprintf(b, "\n### The learned gate's weights (mean over decisions)\n\n")
	b.WriteString("The weight the policy's gate gave each heuristic's prior, averaged over every decision of the replays (a fresh gate gives each 1/K).\n\n")
	b.WriteString("| windows | cells | decisions |")
	for _, h := range g.Names {
		fmt.Fprintf(b, " %s |", h)
	}
	b.WriteString("\n|---|---|---|")
	for range g.Names {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, r := range g.Rows {
		regime := r.Regime
		if regime == "" {
			regime = "all"
		}
		cells := "all"
		if r.Column != (SuiteColumn{}) {
			cells = strings.TrimSpace(fmt.Sprintf("%s n=%d", shortGroup(r.Column.Group), r.Column.Nodes))
		}
		fmt.Fprintf(b, "| %s | %s | %.0f |", regime, cells, r.Decisions)
		for _, w := range r.Weights {
			fmt.Fprintf(b, " %.3f |", w)
		}
		b.WriteString("\n")
	}
}
