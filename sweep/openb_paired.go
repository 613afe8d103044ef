package sweep

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

// pairedRow is a row of a paired table: its name and what it is.
type pairedRow struct{ name, what string }

// writePolicyTable writes the paired tables: the spec's paired heuristics
// and policies against the reference heuristic (Reference), and, when the
// reference is not FGD but FGD ran, the policies against FGD too: issue
// 27's bar is stated against FGD.
func writePolicyTable(b *strings.Builder, s *OpenbSpec, alloc map[[2]string][]sim.Curve) {
	var heur, pols []pairedRow
	for _, n := range s.Paired {
		heur = append(heur, pairedRow{n, "heuristic"})
	}
	for _, p := range s.Policies {
		what := "`" + p.Checkpoint + "`"
		if l := p.Lookahead; l != nil {
			what = fmt.Sprintf("lookahead: horizon %d, %d candidates, %d samples", l.Horizon, l.Candidates, l.Samples)
			if l.Refuse {
				what += ", may refuse"
			}
		}
		pols = append(pols, pairedRow{p.Name, what})
	}
	writePaired(b, s, alloc, s.Reference, append(heur, pols...))
	if s.Reference != sched.NameFGD && slices.Contains(s.Schedulers, sched.NameFGD) {
		writePaired(b, s, alloc, sched.NameFGD, pols)
	}
}

// writePaired writes, for each row, its GPU allocation against the
// reference heuristic ref's at 100% and 130% arrived, paired by seed (the
// same arrivals), per pod list: the means, the difference with a 95%
// interval, and the change in unallocated GPUs ("x% fewer": the mean
// difference over the reference's unallocated share, as issue 27 counts
// it); then how many lists it is worse or better on with an interval that
// excludes zero, and on how many it leaves at least 20% fewer unallocated
// GPUs with such an interval (issue 27's bar, against FGD).
func writePaired(b *strings.Builder, s *OpenbSpec, alloc map[[2]string][]sim.Curve, ref string, rows []pairedRow) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "\n## Policies against %s, paired by seed\n\n", ref)
	fmt.Fprintf(b, "GPU allocation in %% of the GPUs; Δ = policy - %s on the same arrivals, mean and 95%% interval over the seeds "+
		"(bold where it excludes 0); unallocated: the mean Δ over %s's unallocated share, in %% fewer unallocated GPUs.\n", ref, ref)
	for _, p := range rows {
		fmt.Fprintf(b, "\n### %s (%s)\n\n", p.name, p.what)
		fmt.Fprintf(b, "| pod list | seeds | %s @100%% | %s @100%% | Δ @100%% | unallocated @100%% | %s @130%% | %s @130%% | Δ @130%% |\n",
			ref, p.name, ref, p.name)
		b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
		worse, better, bar := 0, 0, 0
		for _, l := range s.PodLists {
			var d [2]Interval
			var rm, pm [2]float64
			n := 0
			for i, k := range []int{100, 130} {
				rc, pc := alloc[[2]string{l, ref}], alloc[[2]string{l, p.name}]
				r, q := at(rc, k), at(pc, k)
				n = min(len(r), len(q))
				d[i] = PairedCI(q[:n], r[:n])
				rm[i], pm[i] = MeanCI(r[:n]).Mean, MeanCI(q[:n]).Mean
			}
			if d[0].Excludes0() {
				if d[0].Mean < 0 {
					worse++
				} else {
					better++
					if rm[0] < 100 && d[0].Mean >= 0.2*(100-rm[0]) {
						bar++
					}
				}
			}
			fmt.Fprintf(b, "| %s | %d | %.2f | %.2f | %s | %s | %.2f | %.2f | %s |\n", l, n, rm[0], pm[0], gpuDiff(d[0]),
				fewer(d[0].Mean, rm[0]), rm[1], pm[1], gpuDiff(d[1]))
		}
		fmt.Fprintf(b, "\n%s: %d pod lists; below %s with an interval below zero on %d, above with an interval above zero on %d, "+
			"of which %d with at least 20%% fewer unallocated GPUs.\n", p.name, len(s.PodLists), ref, worse, better, bar)
	}
}
