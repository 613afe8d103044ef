package sim

// graceState is what the engine keeps from the window's end when
// Config.Grace is positive: the result measured there, and the pods it
// counts as unschedulable.
type graceState struct {
	window  Result
	pending []int32 // measured pods pending at the window's end
}

// closeWindow ends the measured window and starts the grace period: the
// window's result is taken exactly as finish would take it (violations in
// progress accrued to now, a final sample), and the run goes on without
// arrivals until Config.Grace has passed.
func (e *Engine) closeWindow() {
	e.settle()
	g := &graceState{window: *e.Result()}
	for i := range e.pods {
		if p := &e.pods[i]; p.State == Pending && e.measured(p) {
			g.pending = append(g.pending, int32(i))
		}
	}
	e.grace = g
}

// afterGrace returns the window's result with the grace period's figures:
// of the pods pending at the window's end, those still pending now.
func (e *Engine) afterGrace() *Result {
	r := e.grace.window
	r.UnschedulableAfterGrace, r.UnschedulableAfterGraceMemGiB = 0, 0
	for _, id := range e.grace.pending {
		if p := &e.pods[id]; p.State == Pending {
			r.UnschedulableAfterGrace++
			r.UnschedulableAfterGraceMemGiB += float64(p.Spec.Requests.Mem) / 1024
		}
	}
	return &r
}
