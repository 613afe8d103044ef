package sim

import (
	"fmt"
	"slices"
)

// AdmissionBound returns a lower bound on Result.Unschedulable, the
// measured pods still pending when a replay of w under cfg ends, that holds
// for every scheduler: no placement, deferral or preemption policy can
// leave fewer pods pending at the end. It is the headroom figure that the
// fluid relaxation (Fluid) is not: near saturation the fluid replay can
// leave more pods pending than a real scheduler, this bound never does.
//
// The argument. A pod is pending at the end unless it is bound then or has
// finished. Call a pod stuck if it certainly arrives, counts in the
// metrics, and cannot have finished by the end: it has no dependencies (so
// its arrival is its trace arrival, a warm pod's the start), it arrives at
// or after cfg.WarmUp and before w.End, and it runs until the end
// (Duration 0) or its arrival plus its duration passes w.End. Without an end
// (w.End zero, the run lasts until its last event) only long-running pods
// are stuck. A stuck pod that is not pending at the end is bound at the end,
// so the stuck pods bound at the end fit together in the cluster's capacity
// then. That capacity is at most the peak over the run of the summed
// allocatable CPU, memory and pod limit of the live nodes (Fluid's
// capacity). The most pods that fit under a budget in one dimension is a
// prefix of them sorted by their request in that dimension, so the stuck
// pods bound at the end are at most the smallest of those three prefix
// counts, and the rest are pending. A pod of any kind that arrives before
// the end but fits on no node that the run ever has (a request above every
// node's allocatable) is pending too and is counted apart.
//
// What it ignores, each of which only lowers the bound: the pods that could
// finish (they also hold capacity during the run), per-node packing (the
// budget is the pooled sum), taints and affinity, pods with dependencies,
// and the autoscaler: with cfg's autoscaler enabled there is no fixed
// capacity, and AdmissionBound returns ok false.
//
// w is validated and not modified.
func AdmissionBound(w *Workload, cfg Config) (bound int64, ok bool, err error) {
	if err := w.Validate(); err != nil {
		return 0, false, fmt.Errorf("admission bound: %w", err)
	}
	if cfg.Autoscaler.Enabled {
		return 0, false, nil
	}
	capacity, slots := fluidCapacity(w)
	largest := largestNode(w)
	var cpu, mem []int64
	var never int64
	for i := range w.Pods {
		p := &w.Pods[i]
		at := max(p.Arrival, 0)
		if len(p.After) > 0 || at < cfg.WarmUp || w.End > 0 && at >= w.End {
			continue
		}
		if p.Requests.CPU > largest.CPU || p.Requests.Mem > largest.Mem {
			never++
			continue
		}
		finite := p.Duration > 0 && (w.End == 0 || at+p.Duration <= w.End)
		if finite {
			continue
		}
		cpu = append(cpu, p.Requests.CPU)
		mem = append(mem, p.Requests.Mem)
	}
	kept := min(int64(len(cpu)), slots, prefixFit(cpu, capacity.CPU), prefixFit(mem, capacity.Mem))
	return never + int64(len(cpu)) - kept, true, nil
}

// prefixFit sorts xs and returns how many of the smallest fit together in
// budget: the most items of xs whose sum is at most budget.
func prefixFit(xs []int64, budget int64) int64 {
	slices.Sort(xs)
	var sum int64
	for i, x := range xs {
		sum += x
		if sum > budget {
			return int64(i)
		}
	}
	return int64(len(xs))
}

// largestNode returns, per dimension, the largest allocatable of any node
// that w ever has (its initial nodes and the nodes its machine events add).
func largestNode(w *Workload) Resources {
	var r Resources
	grow := func(n NodeSpec) {
		r.CPU = max(r.CPU, n.Allocatable.CPU)
		r.Mem = max(r.Mem, n.Allocatable.Mem)
	}
	for _, n := range w.Nodes {
		grow(n)
	}
	for _, ev := range w.Events {
		if ev.Kind == MachineAdd {
			grow(ev.Node)
		}
	}
	return r
}
