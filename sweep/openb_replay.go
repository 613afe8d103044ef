package sweep

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

// ReplayGPU replays a GPU workload under each named GPU scheduler
// (sched.NewGPU) with one arrival order drawn from seed (sim.GPUArrivals
// with inflate), jobs at once; results come back in the order of names.
func ReplayGPU(ctx context.Context, w *sim.GPUWorkload, names []string, inflate float64, seed uint64, jobs int) ([]sim.GPUResult, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	order, rank := sim.GPUArrivals(w, inflate, seed)
	base := sim.NewGPUCluster(w, rank)
	out := make([]sim.GPUResult, len(names))
	err := parallel(ctx, max(jobs, 1), len(names), func(i int) error {
		s, err := sched.NewGPU(names[i], seed)
		if err != nil {
			return err
		}
		out[i], err = sim.RunGPUOrder(w, base, s, order)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// WriteGPUJSONLines writes one JSON object per result and line (the keys
// of sim.GPUResult: scheduler, pods, placed, failed, gpus, arrived_pct,
// alloc_pct, gpu_alloc_curve, gpu_frag_curve; curves of 131 numbers in
// percent at arrived 0..130%, null where a run has no sample).
func WriteGPUJSONLines(w io.Writer, results []sim.GPUResult) error {
	enc := json.NewEncoder(w)
	for i := range results {
		if err := enc.Encode(&results[i]); err != nil {
			return fmt.Errorf("encoding %s: %w", results[i].Scheduler, err)
		}
	}
	return nil
}

// WriteGPUTable writes one row per result: pods, placed, failed, and GPU
// allocation and fragmentation at 100% and 130% arrived.
func WriteGPUTable(w io.Writer, results []sim.GPUResult) error {
	f := func(v float64) string {
		if math.IsNaN(v) {
			return "n/a"
		}
		return fmt.Sprintf("%.2f", v)
	}
	if _, err := fmt.Fprintf(w, "%-15s %7s %7s %7s %11s %11s %10s %10s\n", "scheduler", "pods", "placed", "failed", "alloc@100%", "alloc@130%", "frag@100%", "frag@130%"); err != nil {
		return err
	}
	for _, r := range results {
		_, err := fmt.Fprintf(w, "%-15s %7d %7d %7d %11s %11s %10s %10s\n", r.Scheduler, r.Pods, r.Placed, r.Failed,
			f(r.AllocCurve[100]), f(r.AllocCurve[130]), f(r.FragCurve[100]), f(r.FragCurve[130]))
		if err != nil {
			return err
		}
	}
	return writeGPUWasteRows(w, results)
}

// writeGPUWasteRows prints each result's sim.GPUWaste (when it has one):
// the failed GPU demand by pod shape and the free GPUs by cause at 100%
// arrived, in % of the GPUs.
func writeGPUWasteRows(w io.Writer, results []sim.GPUResult) error {
	var b strings.Builder
	fmt.Fprintf(&b, "\nat 100%% arrived, %% of the GPUs: failed GPU demand by pod shape; free GPUs usable (idle devices, rest of shared ones), stranded by CPU, of no pod type's shape\n%-15s %7s", "scheduler", "failed")
	for _, sh := range sim.GPUShapeNames {
		fmt.Fprintf(&b, " %10s", sh)
	}
	fmt.Fprintf(&b, " %7s %7s %7s %7s\n", "idle", "partial", "CPU", "shape")
	found := false
	for _, r := range results {
		g := r.Waste
		if g == nil {
			continue
		}
		found = true
		fmt.Fprintf(&b, "%-15s %7.2f", r.Scheduler, g.FailedPct())
		for _, v := range g.Failed {
			fmt.Fprintf(&b, " %10.2f", v)
		}
		fmt.Fprintf(&b, " %7.2f %7.2f %7.2f %7.2f\n", g.FreeIdle, g.FreePartial, g.FreeCPU, g.FreeShape)
	}
	if !found {
		return nil
	}
	_, err := io.WriteString(w, b.String())
	return err
}
