package agent

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kubesim/kubesim/sim"
)

// WriteGPUDiags prints diagnoses of runs on the same workload and arrivals
// side by side: the decisions off the selection policy's node, then per
// GPU model its allocation and idle devices at 100% arrived, then the GPU
// pods failed before 100% by model constraint (groups in the order of the
// first diagnosis, then any others), in GPUs.
func WriteGPUDiags(w io.Writer, ds []GPUDiag) error {
	var b strings.Builder
	for _, d := range ds {
		fmt.Fprintf(&b, "%s: snapshot at %.2f%% arrived; %d of %d GPU-pod decisions off the selection policy's node, %d of them to a node of equal score\n", d.Scheduler, d.Arrived, d.OffSelect, d.Decisions, d.OffTied)
	}
	b.WriteString("\nat 100% arrived, by GPU model\n")
	fmt.Fprintf(&b, "%-10s %6s %6s", "model", "nodes", "GPUs")
	for _, d := range ds {
		fmt.Fprintf(&b, " %14s %10s", d.Scheduler+" alloc%", "idle")
	}
	b.WriteString("\n")
	if len(ds) > 0 {
		for k, m := range ds[0].Models {
			fmt.Fprintf(&b, "%-10s %6d %6d", m.Model, m.Nodes, m.GPUs)
			for _, d := range ds {
				if k < len(d.Models) {
					fmt.Fprintf(&b, " %14.2f %10d", d.Models[k].AllocPct(), d.Models[k].Idle)
				}
			}
			b.WriteString("\n")
		}
	}
	var groups []string
	for _, d := range ds {
		for _, g := range d.Failed {
			if !slices.Contains(groups, g.Allowed) {
				groups = append(groups, g.Allowed)
			}
		}
	}
	b.WriteString("\nGPU pods failed before 100% arrived, by the models they allow (pods, GPUs)\n")
	fmt.Fprintf(&b, "%-36s", "allowed")
	for _, d := range ds {
		fmt.Fprintf(&b, " %12s %10s", d.Scheduler+" pods", "GPUs")
	}
	b.WriteString("\n")
	for _, name := range groups {
		fmt.Fprintf(&b, "%-36s", name)
		for _, d := range ds {
			var g GPUFailGroup
			if k := slices.IndexFunc(d.Failed, func(g GPUFailGroup) bool { return g.Allowed == name }); k >= 0 {
				g = d.Failed[k]
			}
			fmt.Fprintf(&b, " %12d %10.1f", g.Pods, float64(g.Milli)/sim.GPUMilli)
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
