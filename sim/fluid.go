package sim

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// FluidNode is the name of the one node of a fluid relaxation.
const FluidNode = "fluid"

// Fluid returns the fluid relaxation of w (issue 14): the same pods, in the
// same arrival order, on one node that pools the cluster's capacity, so
// that no pod is ever refused for want of a node that has room for it
// whole. Replaying it with any scheduler (on one node they all make the
// same decisions) estimates the limit that placement policies approach:
// the unschedulable pods and pending latency that remain when fragmentation
// across nodes costs nothing.
//
// Capacity. The node's allocatable CPU, allocatable memory and pod limit
// (a node's MaxPods, 0 counting as DefaultMaxPods) are each the peak over
// the run of that resource summed over the live nodes: w's initial nodes,
// then w's machine events applied in the engine's order (by time, then by
// index; an add of a live name or a removal of an absent one changes
// nothing, as in the engine). The events themselves are dropped: the fluid
// node is there from time 0 to the end. The peak is the smallest constant
// capacity that is at least the cluster's at every instant, so the fluid
// cluster never has less room than the real one; the sum over the initial
// nodes alone would have less than the real cluster after machines join,
// and a sum over every node ever seen would count a machine that leaves
// and comes back (the usual pattern of trace machine events) twice. A
// machine that is down for part of the window is therefore counted as up
// for all of it, which errs on the side of the relaxation. Each resource's
// peak is taken separately (CPU and memory may peak at different times).
// The pod limit is capped at math.MaxInt32.
//
// The node has no taints and no labels. Pods are w's with their node
// affinity (required and preferred) removed, because one node cannot
// express it; kubesim has no inter-pod (anti-)affinity, and the default
// topology spreading of pods of a Group is a soft score, which decides
// nothing on one node, so Group is kept. Tolerations are kept: there is no
// taint for them to matter. The warm start (w.Initial) puts every
// placement, in w's order, on the fluid node; the engine still applies its
// filters, and a warm set that fitted its nodes fits their sum.
//
// What the relaxation is, and is not. It is an estimate of a lower bound,
// not a bound. Pooled capacity removes fragmentation but keeps the online
// order, and greedy online placement with more room can do worse: on two
// 4-CPU nodes, pods of 3, 3, 2, 1 and 1 CPU arriving in that order leave
// the 2-CPU pod pending, while one 8-CPU node takes 3, 3 and 2 and leaves
// both 1-CPU pods pending (2 unschedulable against 1). This is not a
// corner case: on a saturated cluster (the default experiment's load) the
// pooled node admits the large long-running pods that fragmentation keeps
// out of the real cluster, they hold memory to the end of the window, and
// the stream of short batch tasks queues behind them, so the fluid replay
// can leave many times more pods unschedulable than a real scheduler, and
// more requested memory pending at the end, though its mean memory
// allocation is as high as the best packers'. Near saturation admission,
// not packing, decides who waits, and the fluid replay is no lower bound
// for unschedulable pods or pending latency. Preemption and evictions
// differ too: a
// high-priority pod preempts only when it fits nowhere, which on the
// pooled node happens later and evicts other victims;
// memory pressure evicts when the summed use exceeds the summed
// allocatable, so one node's overuse is absorbed by another's slack (fewer
// evictions) and the kubelet's eviction order picks victims cluster-wide;
// CPU throttling likewise happens only when the whole cluster is
// overcommitted, and then throttles every high-priority pod at once. Read
// only unschedulable pods and pending latency from a fluid replay: its
// fragmentation, stranded resources and node variance are those of one
// node and say nothing about placement.
//
// Replay it under FluidConfig: the autoscaler must be off, or it would add
// nodes beside the pooled one. Resize then Fluid gives the relaxation of a
// resized cluster.
//
// w is validated and not modified. The result has its own Nodes, Pods,
// Initial and (empty) Events slices; each pod's Tolerations, Usage and
// After slices are shared with w, read-only like w itself.
func Fluid(w *Workload) (*Workload, error) {
	if err := w.Validate(); err != nil {
		return nil, fmt.Errorf("fluid relaxation: %w", err)
	}
	capacity, pods := fluidCapacity(w)
	if capacity.CPU <= 0 || capacity.Mem <= 0 {
		return nil, fmt.Errorf("fluid relaxation of workload %q: it never has a node", w.Name)
	}
	out := &Workload{
		Name: w.Name + "@fluid",
		Nodes: []NodeSpec{{
			Name:        FluidNode,
			Allocatable: capacity,
			MaxPods:     int32(min(pods, math.MaxInt32)),
		}},
		Pods: slices.Clone(w.Pods),
		End:  w.End,
	}
	for i := range out.Pods {
		out.Pods[i].Affinity = nil
	}
	if len(w.Initial) > 0 {
		out.Initial = make([]Placement, len(w.Initial))
		for i, pl := range w.Initial {
			out.Initial[i] = Placement{Pod: pl.Pod, Node: 0}
		}
	}
	return out, nil
}

// FluidConfig returns cfg for replaying a fluid relaxation: the autoscaler
// off, everything else unchanged.
func FluidConfig(cfg Config) Config {
	cfg.Autoscaler.Enabled = false
	return cfg
}

// fluidCapacity returns the peaks of the allocatable resources and of the
// pod limit summed over w's live nodes (see Fluid).
func fluidCapacity(w *Workload) (peak Resources, peakPods int64) {
	live := make(map[string]NodeSpec, len(w.Nodes))
	var cur Resources
	var pods int64
	add := func(n NodeSpec) {
		if _, ok := live[n.Name]; ok {
			return
		}
		live[n.Name] = n
		cur = cur.Add(n.Allocatable)
		pods += int64(effectiveMaxPods(n))
	}
	for _, n := range w.Nodes {
		add(n)
	}
	peak, peakPods = cur, pods
	order := make([]int, len(w.Events))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(w.Events[a].At, w.Events[b].At) })
	for _, i := range order {
		ev := &w.Events[i]
		switch ev.Kind {
		case MachineAdd:
			add(ev.Node)
		case MachineRemove:
			if n, ok := live[ev.Node.Name]; ok {
				delete(live, ev.Node.Name)
				cur = cur.Sub(n.Allocatable)
				pods -= int64(effectiveMaxPods(n))
			}
		}
		peak.CPU = max(peak.CPU, cur.CPU)
		peak.Mem = max(peak.Mem, cur.Mem)
		peakPods = max(peakPods, pods)
	}
	return peak, peakPods
}

// effectiveMaxPods is n's effective pod limit.
func effectiveMaxPods(n NodeSpec) int32 {
	if n.MaxPods == 0 {
		return DefaultMaxPods
	}
	return n.MaxPods
}
