package sweep

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

// BoundName is the row of the upper bound on GPU allocation in an openb
// experiment's outputs (OpenbSpec.Bound).
const BoundName = "bound"

// boundRun is the bound's row of one (pod list, seed) cell: its allocation
// curve is sim.GPUBoundCurve on the cell's arrival order.
func boundRun(w *sim.GPUWorkload, order []int32) (sim.GPUResult, error) {
	c, err := sim.GPUBoundCurve(w, order, sim.GPUBoundOptions{})
	if err != nil {
		return sim.GPUResult{}, err
	}
	return curveRow(w, order, BoundName, c, c[sim.CurvePoints-1]), nil
}

// curveRow is a row of an allocation curve that no scheduler ran (a bound):
// no fragmentation curve (NaN), the counts of the arrivals, and allocPct as
// its final allocation.
func curveRow(w *sim.GPUWorkload, order []int32, name string, alloc sim.Curve, allocPct float64) sim.GPUResult {
	frag := make(sim.Curve, sim.CurvePoints)
	for k := range frag {
		frag[k] = math.NaN()
	}
	var arrived int64
	for _, k := range order {
		arrived += w.Pods[k].GPU.Total()
	}
	capMilli := w.GPUCapacity() * sim.GPUMilli
	return sim.GPUResult{Scheduler: name, Pods: len(order), GPUs: w.GPUCapacity(),
		ArrivedPct: float64(arrived) * 100 / float64(capMilli), AllocPct: allocPct,
		AllocCurve: alloc, FragCurve: frag}
}

// openbRows is the rows of the summary's tables: the spec's schedulers,
// then the policies, then the bound and the hindsight row when the spec
// asks for them.
func openbRows(s *OpenbSpec) []string {
	rows := slices.Clone(s.Schedulers)
	for _, p := range s.Policies {
		rows = append(rows, p.Name)
	}
	if s.Bound {
		rows = append(rows, BoundName)
	}
	if s.Hindsight {
		rows = append(rows, HindsightName)
	}
	return rows
}

// writeHeadroom writes the Headroom table: per pod list, FGD's GPU
// allocation and the bound's at 100% and 130% arrived (means over seeds),
// the distance between them, the allocation that leaves 20% fewer GPUs
// unallocated than FGD (100 - 0.8 x (100 - FGD)) and whether the bound
// allows it, and the allocation that closes half of FGD's distance to the
// bound. Nothing when the spec has no bound or no fgd.
func writeHeadroom(b *strings.Builder, s *OpenbSpec, alloc map[[2]string][]sim.Curve) {
	if !s.Bound || !slices.Contains(s.Schedulers, sched.NameFGD) {
		return
	}
	b.WriteString("\n## Headroom: FGD against the bound\n\n")
	b.WriteString("GPU allocation in % of the GPUs, mean over seeds. `bound`: no placement of the same arrivals allocates more " +
		"(sim.GPUBoundCurve); `gap`: bound minus FGD; `20% target`: the allocation that leaves 20% fewer GPUs unallocated " +
		"than FGD, 100 - 0.8 x (100 - FGD), `possible` whether the bound allows it (the bound may be loose: `yes` does not say a placement reaches it), " +
		"`needs` the share of the gap it takes; `half gap`: FGD plus half its gap.\n\n")
	b.WriteString("| pod list | fgd @100% | bound @100% | gap | 20% target | possible | needs | half gap | fgd @130% | bound @130% | gap @130% | 20% target @130% | possible @130% | needs @130% |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, p := range s.PodLists {
		fmt.Fprintf(b, "| %s |", p)
		for i, k := range []int{100, 130} {
			f := MeanCI(at(alloc[[2]string{p, sched.NameFGD}], k)).Mean
			u := MeanCI(at(alloc[[2]string{p, BoundName}], k)).Mean
			target := 100 - 0.8*(100-f)
			possible := "no"
			if u >= target {
				possible = "yes"
			}
			needs := "n/a" // FGD at the bound: nothing to close
			if u > f {
				needs = fmt.Sprintf("%.0f%%", 100*(target-f)/(u-f))
			}
			fmt.Fprintf(b, " %.2f | %.2f | %.2f | %.2f | %s | %s |", f, u, u-f, target, possible, needs)
			if i == 0 {
				fmt.Fprintf(b, " %.2f |", f+(u-f)/2)
			}
		}
		b.WriteString("\n")
	}
}
