package sim

// The waiting integral: Counters.PendingMs and Counters.PendingHighMs
// accumulate, whenever the clock advances, the number of pending pods (all
// of them, and the high-priority ones) times the time that passed. Between
// two readings of the counters their difference is the exact time integral
// of Pending() (and PendingHigh()) over that span, however many events
// changed the count in between: an RL environment reads them before a
// decision and at the next one for a waiting cost. They count from time 0,
// warm-up included, and stop when the run ends.

// PendingHigh returns the number of high-priority pods (Priority >= High)
// waiting to be scheduled, a part of Pending().
func (e *Engine) PendingHigh() int { return e.pendingHigh }

// accruePending adds dt of the current pending counts to the waiting
// integrals. advance calls it before moving the clock by dt.
func (e *Engine) accruePending(dt Time) {
	e.counters.PendingMs += int64(e.pending) * int64(dt)
	e.counters.PendingHighMs += int64(e.pendingHigh) * int64(dt)
}

// countPending adds d (+1 or -1) to the pending counts for p entering or
// leaving the pending state.
func (e *Engine) countPending(p *Pod, d int) {
	e.pending += d
	if p.Spec.Priority >= High {
		e.pendingHigh += d
	}
}
