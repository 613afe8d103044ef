package sweep

import (
	"fmt"
	"strings"

	"github.com/kubesim/kubesim/sim"
)

// writeWaste writes where the unallocated GPUs are at 100% arrived
// (sim.GPUWaste), per pod list and scheduler, the mean over the seeds:
// the allocation, the failed GPU demand by pod shape and the free GPUs by
// cause. Rows whose runs predate the snapshot (cached results without it)
// are left out, and the whole table when no run has one.
func writeWaste(b *strings.Builder, s *OpenbSpec, runs []OpenbRun) {
	type key = [2]string
	sum := map[key]*sim.GPUWaste{}
	n := map[key]int{}
	for i := range runs {
		r := &runs[i]
		if r.Waste == nil {
			continue
		}
		k := key{r.PodList, r.Scheduler}
		if sum[k] == nil {
			sum[k] = &sim.GPUWaste{}
		}
		sum[k].Add(r.Waste)
		n[k]++
	}
	if len(sum) == 0 {
		return
	}
	b.WriteString("\n## Where the unallocated GPUs are at 100% arrived\n\n")
	b.WriteString("When a run's arrived GPU demand first reaches the capacity (sim.GPUWaste), in % of the GPUs, mean over seeds: " +
		"the GPU demand of the pods failed so far, by shape, and the free GPUs by why the pod list's typical pod types cannot use them " +
		"(idle and partial: some type fits the device, the node's GPUs, model and free CPU, on an idle device or the rest of a shared one; CPU: a type would fit but for the node's CPU; " +
		"shape: no type fits even with CPU to spare). Allocated plus the four free columns is 100.\n\n")
	b.WriteString("| pod list | scheduler | alloc | failed |")
	for _, sh := range sim.GPUShapeNames {
		fmt.Fprintf(b, " %s |", sh)
	}
	b.WriteString(" free: idle | partial | CPU | shape |\n|---|---|---|---|")
	b.WriteString(strings.Repeat("---|", len(sim.GPUShapeNames)+4) + "\n")
	for _, p := range s.PodLists {
		for _, name := range openbRows(s) {
			k := key{p, name}
			w := sum[k]
			if w == nil {
				continue
			}
			m := *w
			m.Scale(1 / float64(n[k]))
			fmt.Fprintf(b, "| %s | %s | %.2f | %.2f |", p, name, m.AllocPct, m.FailedPct())
			for _, v := range m.Failed {
				fmt.Fprintf(b, " %.2f |", v)
			}
			fmt.Fprintf(b, " %.2f | %.2f | %.2f | %.2f |\n", m.FreeIdle, m.FreePartial, m.FreeCPU, m.FreeShape)
		}
	}
}
