package sim

// evKind is the type of a simulator event.
type evKind uint8

const (
	evArrive      evKind = iota + 1 // pod arrives (or its dependencies are done)
	evStart                         // a bound pod starts after its startup latency
	evUsage                         // a running pod's usage moves to its next step
	evFinish                        // a running pod completes
	evRetry                         // a waiting pod's backoff expires
	evFlush                         // an unschedulable pod's periodic retry
	evSample                        // periodic metrics sample
	evMachineAdd                    // trace machine joins (arg = index into Workload.Events)
	evMachineDel                    // trace machine leaves (arg = index into Workload.Events)
	evProvisioned                   // an autoscaler node becomes ready (arg = provisioning slot)
	evScan                          // autoscaler scan
	evEnd                           // end of the replay window
)

// essential reports whether an event of kind k keeps a run without an End
// going: once none is queued, nothing can change any more.
func (k evKind) essential() bool {
	switch k {
	case evArrive, evStart, evFinish, evRetry, evMachineAdd, evMachineDel, evProvisioned:
		return true
	}
	return false
}

// event is one entry of the event queue. pod doubles as the argument of
// node-level events; epoch invalidates pod events queued before an eviction.
type event struct {
	at    Time
	seq   uint64
	pod   int32
	epoch int32
	kind  evKind
}

// minHeap is a binary min-heap under less. It is written out by hand rather
// than through container/heap so that pushes do not box their elements.
type minHeap[T any] struct {
	h    []T
	less func(a, b *T) bool
}

func (q *minHeap[T]) len() int { return len(q.h) }

// top returns the smallest element; the heap must not be empty.
func (q *minHeap[T]) top() *T { return &q.h[0] }

func (q *minHeap[T]) push(x T) {
	q.h = append(q.h, x)
	i := len(q.h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !q.less(&q.h[i], &q.h[p]) {
			break
		}
		q.h[i], q.h[p] = q.h[p], q.h[i]
		i = p
	}
}

func (q *minHeap[T]) pop() T {
	top := q.h[0]
	last := len(q.h) - 1
	q.h[0] = q.h[last]
	q.h = q.h[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= last {
			break
		}
		m := l
		if r := l + 1; r < last && q.less(&q.h[r], &q.h[l]) {
			m = r
		}
		if !q.less(&q.h[m], &q.h[i]) {
			break
		}
		q.h[i], q.h[m] = q.h[m], q.h[i]
		i = m
	}
	return top
}

// eventBefore orders events by time, then by sequence number, so that ties
// are resolved in the order the events were scheduled.
func eventBefore(a, b *event) bool {
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}

// eventQueue is the engine's event queue: a 4-ary min-heap under
// eventBefore. It is a separate type from minHeap because the queue is the
// engine's hottest structure: here the comparison is inlined instead of
// called through a function value, and four children per node halve the
// depth (a replay holds thousands of queued events, more than L1 cache), so
// a pop touches half as many cache lines. Sequence numbers are unique, so
// the order, and therefore every run, does not depend on the heap's shape.
type eventQueue struct {
	h []event
}

func (q *eventQueue) len() int { return len(q.h) }

// top returns the earliest event; the queue must not be empty.
func (q *eventQueue) top() *event { return &q.h[0] }

func (q *eventQueue) push(x event) {
	q.h = append(q.h, x)
	h := q.h
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 4
		if !eventBefore(&x, &h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = x
}

// pop removes and returns the earliest event; the queue must not be empty.
func (q *eventQueue) pop() event {
	h := q.h
	top := h[0]
	last := len(h) - 1
	x := h[last]
	h = h[:last]
	q.h = h
	if last == 0 {
		return top
	}
	i := 0
	for {
		c := 4*i + 1
		if c >= last {
			break
		}
		m := c // the earliest of up to four children
		for k := c + 1; k < min(c+4, last); k++ {
			if eventBefore(&h[k], &h[m]) {
				m = k
			}
		}
		if !eventBefore(&h[m], &x) {
			break
		}
		h[i] = h[m]
		i = m
	}
	h[i] = x
	return top
}

// podBefore orders the active queue like kube-scheduler's PrioritySort:
// higher priority first, then earlier QueuedAt, then lower id.
func podBefore(pods []Pod) func(a, b *int32) bool {
	return func(a, b *int32) bool {
		x, y := &pods[*a], &pods[*b]
		if x.Spec.Priority != y.Spec.Priority {
			return x.Spec.Priority > y.Spec.Priority
		}
		if x.QueuedAt != y.QueuedAt {
			return x.QueuedAt < y.QueuedAt
		}
		return x.ID < y.ID
	}
}
