package sim

import (
	"cmp"
	"slices"
)

// preempt tries to make room for p, which fits nowhere, by evicting pods of
// lower priority. It follows kube-scheduler's DefaultPreemption, simplified:
//
//  1. A node is a candidate when p passes its taint and affinity filters and
//     p fits once every lower-priority pod on it is removed.
//  2. On a candidate, victims are chosen by reprieve: the removed pods are
//     added back, most important first (higher priority, then earlier bind,
//     then lower id), whenever p still fits; those left out are the victims.
//  3. The node whose victims have the lowest highest priority wins, then the
//     one with the fewest victims, then the lowest index.
//
// Unlike kube-scheduler, which nominates the node and schedules the pod
// again, the engine binds p at once. PodDisruptionBudgets and graceful
// termination are not modelled. Victims re-enter the queue and count as
// preemptions (and as SLA violations when high priority).
func (e *Engine) preempt(p *Pod) bool {
	if p.Spec.Priority <= Low {
		return false // nothing ranks below the lowest class
	}
	best := -1
	var bestVictims []int32
	var bestTop Priority
	req := p.Spec.Requests
	for i := range e.c.nodes {
		n := &e.c.nodes[i]
		if !ToleratesTaints(n, p.Spec) || !MatchesAffinity(n, p.Spec) {
			continue
		}
		free, slots := n.Free(), n.MaxPods-n.Pods
		var cands []int32
		for _, q := range e.nodes[n.ID].pods {
			if e.pods[q].Spec.Priority < p.Spec.Priority {
				cands = append(cands, q)
				free = free.Add(e.pods[q].Spec.Requests)
				slots++
			}
		}
		if len(cands) == 0 || !req.Fits(free) || slots < 1 {
			continue
		}
		slices.SortFunc(cands, func(a, b int32) int {
			pa, pb := &e.pods[a], &e.pods[b]
			if c := cmp.Compare(pb.Spec.Priority, pa.Spec.Priority); c != 0 {
				return c
			}
			if c := cmp.Compare(pa.boundAt, pb.boundAt); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		free, slots = free.Sub(req), slots-1
		victims := cands[:0]
		var top Priority = -128
		for _, q := range cands {
			r := e.pods[q].Spec.Requests
			if r.Fits(free) && slots >= 1 {
				free, slots = free.Sub(r), slots-1
				continue
			}
			victims = append(victims, q)
			top = max(top, e.pods[q].Spec.Priority)
		}
		if best < 0 || top < bestTop || (top == bestTop && len(victims) < len(bestVictims)) {
			best, bestVictims, bestTop = i, victims, top
		}
	}
	if best < 0 {
		return false
	}
	id := e.c.nodes[best].ID
	for _, v := range bestVictims {
		e.evict(&e.pods[v], &e.counters.Preemptions)
	}
	e.bind(p, int(e.nodes[id].slot))
	return true
}
