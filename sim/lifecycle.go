package sim

import "math"

// place records p as bound to the node at slot i: the node's requests and
// pod list, the pod's state. The caller has checked feasibility; bind and
// warmStart add the rest.
func (e *Engine) place(p *Pod, i int) {
	n := &e.c.nodes[i]
	n.Requested = n.Requested.Add(p.Spec.Requests)
	n.Pods++
	if p.Group >= 0 {
		e.c.addGroupPods(int32(i), p.Group, 1)
	}
	ns := e.nodes[n.ID]
	p.nodePos = int32(len(ns.pods))
	ns.pods = append(ns.pods, int32(p.ID))
	p.State = Bound
	p.Node = n.ID
	p.unschedAt = -1
	p.backoff = e.cfg.BackoffInitial
	e.maxFreeDirty = true
}

// bind places a pending p on the node at slot i and schedules its start
// after the startup latency. The caller has checked feasibility.
func (e *Engine) bind(p *Pod, i int) {
	e.place(p, i)
	e.countPending(p, -1)
	e.c.dequeue(p)
	e.counters.Binds++
	if !p.everBound {
		p.everBound = true
		p.boundAt = e.c.now
		if e.measured(p) {
			e.m.addLatency(p.Spec.Priority, e.c.now-p.arrivedAt)
		}
	}
	lat := e.cfg.StartupBase
	if e.cfg.StartupNoise > 0 {
		lat += Time(math.Round(e.rng.NormFloat64() * float64(e.cfg.StartupNoise)))
	}
	p.epoch++
	e.push(event{at: e.c.now + max(lat, 0), kind: evStart, pod: int32(p.ID), epoch: p.epoch})
}

// warmStart applies Workload.Initial at time 0, before any arrival: each
// listed pod that passes the filters on its node (Feasible: requests, pod
// limit, NoSchedule/NoExecute taints, required affinity, against the
// placements applied before it) is bound there and started at once, with no
// startup latency and its usage profile from offset 0, since it was already
// running. It counts as arrived at 0 and bound at 0, with no pending-latency
// sample and no bind in Counters.Binds (no decision placed it). A pod that
// fails the filters is left to arrive at its Arrival like any other. Nodes
// are still in workload order here, so a placement's node index is its slot.
func (e *Engine) warmStart() {
	for _, pl := range e.w.Initial {
		p := &e.pods[pl.Pod]
		if !Feasible(&e.c.nodes[pl.Node], p.Spec) {
			e.m.warmRejected++
			continue
		}
		p.arrivedAt, p.QueuedAt = e.c.now, e.c.now
		p.everBound, p.boundAt = true, e.c.now
		p.warm = true
		e.counters.Arrived++
		e.m.warmPods++
		e.c.noteService(p.Spec)
		e.place(p, int(pl.Node))
		p.epoch++
		e.start(p)
	}
}

// effectiveUse is the pod's actual use at step k, capped by its limits (CPU
// is throttled at the limit by the CFS quota).
func effectiveUse(s *PodSpec, k int32) Resources {
	u := s.Requests
	if len(s.Usage) > 0 {
		u = s.Usage[k].Use
	}
	if s.Limits.CPU > 0 {
		u.CPU = min(u.CPU, s.Limits.CPU)
	}
	return u
}

func (e *Engine) start(p *Pod) {
	p.State = Running
	p.startedAt = e.c.now
	p.usageStep = 0
	// Steps whose offset is already due (offset 0 after the first) collapse.
	for int(p.usageStep)+1 < len(p.Spec.Usage) && p.Spec.Usage[p.usageStep+1].Offset <= 0 {
		p.usageStep++
	}
	p.use = effectiveUse(p.Spec, p.usageStep)
	slot := e.nodes[p.Node].slot
	n := &e.c.nodes[slot]
	n.Used = n.Used.Add(p.use)
	if p.Spec.Duration > 0 {
		e.push(event{at: e.c.now + p.Spec.Duration, kind: evFinish, pod: int32(p.ID), epoch: p.epoch})
	}
	e.scheduleUsage(p)
	e.cpuContention(p.Node, p)
	e.memoryPressure(p.Node)
}

func (e *Engine) scheduleUsage(p *Pod) {
	k := int(p.usageStep) + 1
	if k >= len(p.Spec.Usage) {
		return
	}
	at := p.startedAt + p.Spec.Usage[k].Offset
	if p.Spec.Duration > 0 && at >= p.startedAt+p.Spec.Duration {
		return
	}
	e.push(event{at: at, kind: evUsage, pod: int32(p.ID), epoch: p.epoch})
}

func (e *Engine) usageStep(p *Pod) {
	p.usageStep++
	u := effectiveUse(p.Spec, p.usageStep)
	n := &e.c.nodes[e.nodes[p.Node].slot]
	n.Used = n.Used.Sub(p.use).Add(u)
	p.use = u
	e.scheduleUsage(p)
	e.cpuContention(p.Node, nil)
	e.memoryPressure(p.Node)
}

// complete finishes a running pod and releases its dependents.
func (e *Engine) complete(p *Pod) {
	e.c.finished(e.pods, p)
	e.unbind(p)
	p.State = Finished
	e.counters.Finished++
	for _, d := range e.deps[e.depStart[p.ID]:e.depStart[p.ID+1]] {
		q := &e.pods[d]
		q.waitingDeps--
		if q.waitingDeps == 0 {
			e.push(event{at: max(q.Spec.Arrival, e.c.now), kind: evArrive, pod: d})
		}
	}
}

// unbind removes p from its node, ending any SLA violation in progress.
func (e *Engine) unbind(p *Pod) {
	ns := e.nodes[p.Node]
	n := &e.c.nodes[ns.slot]
	n.Requested = n.Requested.Sub(p.Spec.Requests)
	n.Pods--
	if p.Group >= 0 {
		e.c.addGroupPods(ns.slot, p.Group, -1)
	}
	if p.State == Running {
		n.Used = n.Used.Sub(p.use)
		p.use = Resources{}
	}
	last := int32(len(ns.pods) - 1)
	moved := ns.pods[last]
	ns.pods[p.nodePos] = moved
	e.pods[moved].nodePos = p.nodePos
	ns.pods = ns.pods[:last]
	e.endViolation(p)
	id := p.Node
	p.Node = -1
	p.epoch++
	e.capacityFreed(id)
	if p.State == Running {
		e.cpuContention(id, nil)
	}
}

// evict sends a bound pod back to the scheduling queue.
func (e *Engine) evict(p *Pod, counter *int64) {
	e.unbind(p)
	*counter++
	if p.Spec.Priority >= High {
		e.markViolation(p)
	}
	p.State = Pending
	p.QueuedAt = e.c.now
	p.backoff = e.cfg.BackoffInitial
	e.countPending(p, 1)
	e.activate(p)
}
