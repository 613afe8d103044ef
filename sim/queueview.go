package sim

import "math"

// The pending queue as a scheduler sees it: which pods wait (in the active
// queue, in backoff or in the unschedulable list, the pod being decided
// included) with their requests, and how fast pods have been arriving. The
// engine keeps it on every change (a pod enters the queue on arrival or
// eviction, and leaves it when bound); schedulers read it through
// Cluster.PendingRequests, PendingTotal and ArrivalRate.

// ArrivalTau is the time constant of Cluster.ArrivalRate's exponential
// decay: an arrival counts e^(-age/ArrivalTau), its time rounded down to
// the second.
const ArrivalTau = 5 * Minute

// arrivalDecay[k] is e^(-k s/ArrivalTau), the decay over k seconds: an
// arrival in a new second costs a table look-up, not an exponential.
var arrivalDecay = func() []float64 {
	t := make([]float64, 2*ArrivalTau/Second)
	for k := range t {
		t[k] = math.Exp(-float64(Time(k)*Second) / float64(ArrivalTau))
	}
	return t
}()

// queueView is the cluster's record of the pending queue.
type queueView struct {
	// pos[id] is 1 + pod id's index in ids, 0 when it is not listed (ids
	// past the end too). A compact array rather than a field of Pod, so
	// that moving the last entry on removal touches 4 bytes, not a pod.
	pos   []int32
	ids   []int32     // pending pods, in no particular order
	req   []Resources // their requests, parallel to ids
	total Resources   // sum of req

	arrivals int64   // first arrivals so far
	decayed  float64 // sum over arrivals of e^(-(rateAt - at)/ArrivalTau)
	rateAt   Time    // the second (Time / Second) decayed was brought up to
}

// enqueue lists p as pending, unless it already is. The first time a pod
// that was never bound is listed is its arrival.
func (c *Cluster) enqueue(p *Pod) {
	if c.queue.listed(p.ID) {
		return
	}
	c.addPending(p, !p.everBound)
}

// listed reports whether pod id is in the list.
func (q *queueView) listed(id PodID) bool { return int(id) < len(q.pos) && q.pos[id] != 0 }

// addPending lists p (not listed) and counts an arrival when arrival is set.
func (c *Cluster) addPending(p *Pod, arrival bool) {
	q := &c.queue
	if int(p.ID) >= len(q.pos) { // grow by doubling: ids arrive roughly in order
		pos := make([]int32, max(int(p.ID)+1, 2*len(q.pos), 1024))
		copy(pos, q.pos)
		q.pos = pos
	}
	q.ids = append(q.ids, int32(p.ID))
	q.req = append(q.req, p.Spec.Requests)
	q.total = q.total.Add(p.Spec.Requests)
	q.pos[p.ID] = int32(len(q.ids))
	if arrival {
		c.noteService(p.Spec)
		q.arrivals++
		if sec := c.now / Second; sec != q.rateAt {
			if k := sec - q.rateAt; k < Time(len(arrivalDecay)) {
				q.decayed *= arrivalDecay[k]
			} else {
				q.decayed *= math.Exp(-float64(k*Second) / float64(ArrivalTau))
			}
			q.rateAt = sec
		}
		q.decayed++
	}
}

// dequeue removes p from the pending list, if listed.
func (c *Cluster) dequeue(p *Pod) {
	q := &c.queue
	if !q.listed(p.ID) {
		return
	}
	k := q.pos[p.ID] - 1
	q.total = q.total.Sub(q.req[k])
	last := int32(len(q.ids) - 1)
	if k != last {
		q.ids[k], q.req[k] = q.ids[last], q.req[last]
		q.pos[q.ids[k]] = k + 1
	}
	q.ids, q.req = q.ids[:last], q.req[:last]
	q.pos[p.ID] = 0
}

// NotePending lists p as pending (pending true; a pod not listed yet counts
// as an arrival) or removes it from the list (false). Pods are told apart by
// their ID. The engine keeps the list itself; this is for views built with
// NewCluster (tests, offline tools).
func (c *Cluster) NotePending(p *Pod, pending bool) {
	switch {
	case pending && !c.queue.listed(p.ID):
		c.addPending(p, true)
	case !pending:
		c.dequeue(p)
	}
}

// PendingRequests returns the requests of every pending pod, the pod being
// decided included, in no particular order. The slice is the cluster's own:
// read it, never write it, and do not keep it across decisions.
func (c *Cluster) PendingRequests() []Resources { return c.queue.req }

// Listed reports whether p is in the pending list (PendingRequests).
func (c *Cluster) Listed(p *Pod) bool { return c.queue.listed(p.ID) }

// PendingTotal returns the summed requests of the pending pods.
func (c *Cluster) PendingTotal() Resources { return c.queue.total }

// Arrivals returns the number of pod arrivals so far (first arrivals: not
// re-entries after eviction, not the warm start).
func (c *Cluster) Arrivals() int64 { return c.queue.arrivals }

// ArrivalRate returns the recent arrival rate in pods per minute at the
// current time: the sum over past arrivals of e^(-age/ArrivalTau) (arrival
// times rounded down to the second), divided
// by ArrivalTau in minutes (a steady rate of r pods per minute reads r once
// the run is a few ArrivalTau old).
func (c *Cluster) ArrivalRate() float64 {
	q := &c.queue
	d := q.decayed
	if dt := c.now - q.rateAt*Second; dt > 0 {
		d *= math.Exp(-float64(dt) / float64(ArrivalTau))
	}
	return d / (float64(ArrivalTau) / float64(Minute))
}
