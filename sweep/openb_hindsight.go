package sweep

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

// HindsightName is the row of the placement in hindsight in an openb
// experiment's outputs (OpenbSpec.Hindsight).
const HindsightName = "hindsight"

// hindsightBins are the arrived levels the hindsight row is computed at:
// those of the summary's tables.
var hindsightBins = []int{100, 130}

// hindsightRun is the hindsight row of one (pod list, seed) cell: its
// allocation curve is sched.GPUHindsightCurve on the cell's arrival order
// at hindsightBins (NaN elsewhere), a lower bound on the most any placement
// of the arrivals allocates.
func hindsightRun(w *sim.GPUWorkload, order []int32) (sim.GPUResult, error) {
	c, err := sched.GPUHindsightCurve(w, order, hindsightBins)
	if err != nil {
		return sim.GPUResult{}, err
	}
	last := 0.0 // the highest level's value (JSON has no NaN)
	for _, k := range hindsightBins {
		if !math.IsNaN(c[k]) {
			last = c[k]
		}
	}
	return curveRow(w, order, HindsightName, c, last), nil
}

// writeHindsight writes the table that brackets the best placement: per pod
// list and level, FGD, the placement in hindsight (a lower bound on the
// best placement of the same arrivals), the bound (an upper bound), the 20%
// target (100 - 0.8 x (100 - FGD)) and whether the hindsight placement
// reaches it. Nothing when the spec lacks the hindsight row, the bound or
// fgd.
func writeHindsight(b *strings.Builder, s *OpenbSpec, alloc map[[2]string][]sim.Curve) {
	if !s.Hindsight || !s.Bound || !slices.Contains(s.Schedulers, sched.NameFGD) {
		return
	}
	b.WriteString("\n## Headroom bracketed: the best placement lies between hindsight and the bound\n\n")
	b.WriteString("GPU allocation in % of the GPUs, mean over seeds. `hindsight`: a packing of the same arrivals found knowing them all " +
		"(sched.GPUHindsight: greedy packings in several orders, then a repair that moves or swaps shares), so some placement allocates " +
		"at least this much; `bound`: no placement allocates more (sim.GPUBoundCurve). The best placement lies in between: `width` is " +
		"the bracket. `20% target`: 100 - 0.8 x (100 - FGD); `in hindsight`: whether the hindsight packing reaches it. " +
		"An online scheduler sees the pods one at a time: reaching the target in hindsight does not say one can.\n\n")
	b.WriteString("| pod list | fgd @100% | hindsight @100% | bound @100% | width | 20% target | in hindsight | fgd @130% | hindsight @130% | bound @130% | width @130% | 20% target @130% | in hindsight @130% |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, p := range s.PodLists {
		fmt.Fprintf(b, "| %s |", p)
		for _, k := range hindsightBins {
			f := MeanCI(at(alloc[[2]string{p, sched.NameFGD}], k)).Mean
			h := MeanCI(at(alloc[[2]string{p, HindsightName}], k)).Mean
			u := MeanCI(at(alloc[[2]string{p, BoundName}], k)).Mean
			target := 100 - 0.8*(100-f)
			reached := "no"
			if h >= target {
				reached = "yes"
			}
			fmt.Fprintf(b, " %.2f | %.2f | %.2f | %.2f | %.2f | %s |", f, h, u, u-h, target, reached)
		}
		b.WriteString("\n")
	}
}
