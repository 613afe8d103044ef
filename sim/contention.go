package sim

import (
	"cmp"
	"slices"
)

// cpuContention updates throttling on node id after its actual CPU use
// changed: while the summed use exceeds allocatable, every high-priority pod
// running there is in SLA violation. started, if not nil, is a pod that just
// started there.
func (e *Engine) cpuContention(id NodeID, started *Pod) {
	ns := e.nodes[id]
	n := &e.c.nodes[ns.slot]
	over := n.Used.CPU > n.Alloc.CPU
	if over == ns.cpuOver {
		if over && started != nil && started.Spec.Priority >= High {
			e.startViolation(started)
		}
		return
	}
	ns.cpuOver = over
	for _, q := range ns.pods {
		qp := &e.pods[q]
		if qp.State != Running || qp.Spec.Priority < High {
			continue
		}
		if over {
			e.startViolation(qp)
		} else {
			e.endViolation(qp)
		}
	}
}

// memoryPressure evicts running pods from node id, lowest priority first and
// then the largest use above request, until its actual memory fits (the
// kubelet's eviction order).
func (e *Engine) memoryPressure(id NodeID) {
	ns := e.nodes[id]
	n := &e.c.nodes[ns.slot]
	if n.Used.Mem <= n.Alloc.Mem {
		return
	}
	var victims []int32
	for _, q := range ns.pods {
		if e.pods[q].State == Running {
			victims = append(victims, q)
		}
	}
	slices.SortFunc(victims, func(a, b int32) int {
		pa, pb := &e.pods[a], &e.pods[b]
		if c := cmp.Compare(pa.Spec.Priority, pb.Spec.Priority); c != 0 {
			return c
		}
		oa, ob := pa.use.Mem-pa.Spec.Requests.Mem, pb.use.Mem-pb.Spec.Requests.Mem
		if c := cmp.Compare(ob, oa); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	for _, v := range victims {
		if n.Used.Mem <= n.Alloc.Mem {
			break
		}
		e.evict(&e.pods[v], &e.counters.Evictions)
	}
}

func (e *Engine) startViolation(p *Pod) {
	if p.violating {
		return
	}
	p.violating = true
	p.violatedAt = e.c.now
	e.markViolation(p)
}

func (e *Engine) endViolation(p *Pod) {
	if !p.violating {
		return
	}
	p.violating = false
	if e.measured(p) {
		e.m.violationMs += int64(e.c.now - p.violatedAt)
	}
}

// markViolation counts an SLA violation of a high-priority pod.
func (e *Engine) markViolation(p *Pod) {
	e.counters.Violations++
	if !p.everViolated {
		p.everViolated = true
		if e.measured(p) {
			e.m.violatedPods++
		}
	}
}
