package sim

// where a pending pod waits.
const (
	waitNone    uint8 = iota
	waitActive        // in the active queue
	waitBackoff       // an evRetry is queued
	waitUnsched       // in the unschedulable list, retried when capacity frees
)

// Like kube-scheduler's flushUnschedulablePodsLeftover, every flushPeriod
// the pods that have waited in the unschedulable list for longer than
// unschedulableFlush (podMaxInUnschedulablePodsDuration) are retried even if
// no capacity freed.
const (
	flushPeriod        = 30 * Second
	unschedulableFlush = 5 * Minute
)

// arrive puts a pod in the scheduling queue for the first time.
func (e *Engine) arrive(p *Pod) {
	if e.windowEnd > 0 && e.c.now >= e.windowEnd {
		return // the window is over (or in its grace period): nothing arrives
	}
	p.State = Pending
	p.arrivedAt = e.c.now
	p.QueuedAt = e.c.now
	p.backoff = e.cfg.BackoffInitial
	e.countPending(p, 1)
	e.counters.Arrived++
	e.activate(p)
}

func (e *Engine) activate(p *Pod) {
	p.wait = waitActive
	e.c.enqueue(p)
	e.active.push(int32(p.ID))
}

// mightFit is a cheap necessary condition for some node to fit s by
// resources: s fits the largest free CPU and the largest free memory.
func (e *Engine) mightFit(s *PodSpec) bool {
	if e.maxFreeDirty {
		var mf Resources
		for i := range e.c.nodes {
			n := &e.c.nodes[i]
			if n.Pods >= n.MaxPods {
				continue
			}
			mf.CPU = max(mf.CPU, n.Alloc.CPU-n.Requested.CPU)
			mf.Mem = max(mf.Mem, n.Alloc.Mem-n.Requested.Mem)
		}
		e.maxFree = mf
		if len(e.c.nodes) == 0 {
			e.maxFree = Resources{CPU: -1, Mem: -1}
		}
		e.maxFreeDirty = false
	}
	return s.Requests.Fits(e.maxFree)
}

// backoffWait sends p to wait for its backoff, then back to the active queue.
func (e *Engine) backoffWait(p *Pod) {
	p.epoch++
	p.wait = waitBackoff
	e.push(event{at: e.c.now + p.backoff, kind: evRetry, pod: int32(p.ID), epoch: p.epoch})
	p.retryAt = e.c.now + p.backoff
	p.backoff = min(2*p.backoff, e.cfg.BackoffMax)
}

// unschedulable handles a pod that fits nowhere: preemption if allowed and
// possible, otherwise the unschedulable list.
func (e *Engine) unschedulable(p *Pod) Outcome {
	if p.unschedAt < 0 {
		p.unschedAt = e.c.now
	}
	if e.cfg.Preemption && e.preempt(p) {
		return OutcomePreempted
	}
	p.epoch++
	p.retryAt = e.c.now + p.backoff
	p.backoff = min(2*p.backoff, e.cfg.BackoffMax)
	p.wait = waitUnsched
	p.listedAt = e.c.now
	p.unschedPos = int32(len(e.unsched))
	e.unsched = append(e.unsched, int32(p.ID))
	return OutcomeUnschedulable
}

// flushUnschedulable retries the pods that have waited in the unschedulable
// list for longer than unschedulableFlush.
func (e *Engine) flushUnschedulable() {
	kept := e.unsched[:0]
	for _, id := range e.unsched {
		p := &e.pods[id]
		if e.c.now-p.listedAt < unschedulableFlush {
			p.unschedPos = int32(len(kept))
			kept = append(kept, id)
			continue
		}
		e.requeue(p)
	}
	e.unsched = kept
}

// requeue sends a pod leaving the unschedulable list to the active queue,
// or to wait for the rest of its backoff.
func (e *Engine) requeue(p *Pod) {
	if p.retryAt <= e.c.now {
		e.activate(p)
		return
	}
	p.epoch++
	p.wait = waitBackoff
	e.push(event{at: p.retryAt, kind: evRetry, pod: int32(p.ID), epoch: p.epoch})
}

// releaseUnschedulable moves unschedulable pods that may now fit back to the
// active queue: at once when their backoff has expired, otherwise when it
// does (kube-scheduler's MoveAllToActiveOrBackoffQueue). Like the queueing
// hints of kube-scheduler's NodeResourcesFit, only pods whose requests fit
// the free resources of a node that gained capacity are moved; the rest keep
// waiting (or for the periodic flush).
func (e *Engine) releaseUnschedulable() {
	e.freed = false
	freed := e.freedNodes
	e.freedNodes = e.freedNodes[:0]
	free := e.freedFree[:0]
	for _, id := range freed {
		ns := e.nodes[id]
		ns.freedMark = false
		if ns.slot < 0 {
			continue
		}
		n := &e.c.nodes[ns.slot]
		if n.Pods < n.MaxPods {
			free = append(free, n.Free())
		}
	}
	e.freedFree = free
	if len(free) == 0 || len(e.unsched) == 0 {
		return
	}
	kept := e.unsched[:0]
	for _, id := range e.unsched {
		p := &e.pods[id]
		fits := false
		for _, f := range free {
			if p.Spec.Requests.Fits(f) {
				fits = true
				break
			}
		}
		if !fits {
			p.unschedPos = int32(len(kept))
			kept = append(kept, id)
			continue
		}
		e.requeue(p)
	}
	e.unsched = kept
}

// capacityFreed notes that requests left node id or the node joined.
func (e *Engine) capacityFreed(id NodeID) {
	e.freed = true
	e.maxFreeDirty = true
	if ns := e.nodes[id]; !ns.freedMark {
		ns.freedMark = true
		e.freedNodes = append(e.freedNodes, id)
	}
}
