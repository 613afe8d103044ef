package sim

import (
	"fmt"
	"math"
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
	return admissionBound(w, cfg), true, nil
}

// admissionBound is AdmissionBound of a validated workload with a fixed
// capacity (no autoscaler).
func admissionBound(w *Workload, cfg Config) int64 {
	capacity, slots := fluidCapacity(w)
	largest := largestNode(w)
	var cpu, mem []int64
	var never int64
	for i := range w.Pods {
		p := &w.Pods[i]
		switch {
		case !measured(w, cfg, p):
		case !p.Requests.Fits(largest):
			never++
		case stuck(w, cfg, p):
			cpu = append(cpu, p.Requests.CPU)
			mem = append(mem, p.Requests.Mem)
		}
	}
	kept := min(int64(len(cpu)), slots, prefixFit(cpu, capacity.CPU), prefixFit(mem, capacity.Mem))
	return never + int64(len(cpu)) - kept
}

// measured reports whether pod p certainly arrives and counts in the
// metrics: no dependencies (its arrival is its trace arrival, a warm pod's
// the start), at or after cfg.WarmUp and before w.End.
func measured(w *Workload, cfg Config, p *PodSpec) bool {
	at := max(p.Arrival, 0)
	return len(p.After) == 0 && at >= cfg.WarmUp && (w.End == 0 || at < w.End)
}

// stuck reports whether p is measured and cannot have finished by the end:
// it runs until the end (Duration 0), or its arrival plus its duration
// passes w.End; without an end, only long-running pods.
func stuck(w *Workload, cfg Config, p *PodSpec) bool {
	at := max(p.Arrival, 0)
	return measured(w, cfg, p) && !(p.Duration > 0 && (w.End == 0 || at+p.Duration <= w.End))
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

// PackingBound is AdmissionBound with the cluster's nodes kept apart: a
// lower bound on Result.Unschedulable for every scheduler in every run in
// which no warm-started high-priority pod is evicted (Result.Evictions
// counts evictions; preemption never takes a high-priority pod, and
// machine removals are handled below).
//
// The argument. As in AdmissionBound, every stuck pod that is not pending
// at the end is bound then. A warm-started high-priority pod that is stuck
// (runs past the end) stays on its node for the whole run, so its node
// offers the rest only its residual: allocatable minus those pods. Every
// other stuck pod, an item, must fit into the residuals of the nodes live
// at the end, which are at most the nodes the run ever has (warm pods on a
// node that a machine event removes count as items). The most items that
// fit are, by exchange, the k smallest for some k; in each of CPU and
// memory the k smallest sizes s_1 <= ... <= s_k must satisfy two necessary
// conditions: their sum is at most the summed residual, and for every i
// the k-i+1 items of size at least s_i fit in the sum over nodes of
// floor(residual / s_i), the most such items a node can take. The pod
// slots bound k too. The largest k meeting every condition bounds the items
// bound at the end; the rest, plus the pods that fit no node, are pending.
//
// It returns the larger of that count and AdmissionBound's, so it is never
// below the pooled bound; it is tighter when free memory is held in pieces
// smaller than the pods (the warm start's services split the cluster into
// residual holes).
func PackingBound(w *Workload, cfg Config) (bound int64, ok bool, err error) {
	if cfg.Autoscaler.Enabled {
		return 0, false, nil
	}
	e, err := New(w, cfg)
	if err != nil {
		return 0, false, fmt.Errorf("packing bound: %w", err)
	}
	removed := map[string]bool{}
	for _, ev := range w.Events {
		if ev.Kind == MachineRemove {
			removed[ev.Node.Name] = true
		}
	}
	// the residuals of the nodes after the warm start (node slots are
	// still in workload order), with every warm pod that is not fixed
	// taken off again
	var res []Resources
	var slots []int64
	for _, n := range e.c.nodes {
		res = append(res, n.Alloc.Sub(n.Requested))
		slots = append(slots, int64(n.MaxPods-n.Pods))
	}
	largest := largestNode(w)
	var cpu, mem []int64
	var never int64
	for i := range e.pods {
		p := &e.pods[i]
		if p.warm {
			j := e.nodes[p.Node].slot
			if p.Spec.Priority == High && stuck(w, cfg, p.Spec) && !removed[e.c.nodes[j].Spec.Name] {
				continue // fixed: it holds its node's capacity to the end
			}
			res[j] = res[j].Add(p.Spec.Requests)
			slots[j]++
		}
		switch {
		case !measured(w, cfg, p.Spec):
		case !p.Spec.Requests.Fits(largest):
			never++
		case stuck(w, cfg, p.Spec):
			cpu = append(cpu, p.Spec.Requests.CPU)
			mem = append(mem, p.Spec.Requests.Mem)
		}
	}
	for _, ev := range w.Events {
		if ev.Kind == MachineAdd {
			res = append(res, ev.Node.Allocatable)
			slots = append(slots, int64(effectiveMaxPods(ev.Node)))
		}
	}
	var totalSlots int64
	resCPU, resMem := make([]int64, len(res)), make([]int64, len(res))
	for j := range res {
		totalSlots += slots[j]
		resCPU[j], resMem[j] = res[j].CPU, res[j].Mem
	}
	kept := min(int64(len(cpu)), totalSlots, packFit(cpu, resCPU), packFit(mem, resMem))
	// New validated w, and the autoscaler is off: the pooled bound needs
	// neither check again
	pooled := admissionBound(w, cfg)
	return max(pooled, never+int64(len(cpu))-kept), true, nil
}

// packFit sorts xs and returns the largest k such that the k smallest
// items meet both conditions of PackingBound in one dimension against the
// residuals bins: their sum is at most the bins' sum, and for each i < k
// the k-i items of size at least xs[i] are at most the sum over bins of
// floor(bin / xs[i]).
func packFit(xs []int64, bins []int64) int64 {
	slices.Sort(xs)
	var budget int64
	for _, b := range bins {
		budget += max(b, 0)
	}
	// k is feasible while k <= min over i < k of cap(xs[i]) + i, with
	// cap(t) the items of size t the bins take; zero-size items always fit
	limit := int64(math.MaxInt64)
	var sum int64
	for i, x := range xs {
		sum += x
		if sum > budget {
			return int64(i)
		}
		if x > 0 {
			var c int64
			for _, b := range bins {
				if b >= x {
					c += b / x
				}
			}
			limit = min(limit, c+int64(i))
		}
		if int64(i)+1 > limit {
			return int64(i)
		}
	}
	return int64(len(xs))
}
