package sim

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Outcome is what the engine did with a decision.
type Outcome uint8

// Decision outcomes.
const (
	// OutcomeBound: the pod was bound to the chosen node.
	OutcomeBound Outcome = iota + 1
	// OutcomeDeferred: the policy chose Pending although some node was
	// feasible; the pod waits for its backoff.
	OutcomeDeferred
	// OutcomeUnschedulable: no node passed the filters; the pod waits until
	// capacity frees (and its backoff has expired).
	OutcomeUnschedulable
	// OutcomePreempted: no node passed the filters, so lower-priority pods
	// were evicted and the pod was bound in their place.
	OutcomePreempted
	// OutcomeInvalid: the chosen index was out of range or the node failed
	// the filters; counted as a scheduling failure, the pod waits its backoff.
	OutcomeInvalid
	// OutcomeNoPod: Decide was called with no pod awaiting a decision.
	OutcomeNoPod
)

// String names the outcome.
func (o Outcome) String() string {
	switch o {
	case OutcomeBound:
		return "bound"
	case OutcomeDeferred:
		return "deferred"
	case OutcomeUnschedulable:
		return "unschedulable"
	case OutcomePreempted:
		return "preempted"
	case OutcomeInvalid:
		return "invalid"
	case OutcomeNoPod:
		return "no-pod"
	}
	return fmt.Sprintf("Outcome(%d)", uint8(o))
}

// Counters are cumulative event counts of a run. An RL environment reads
// them before and after a decision to compute reward terms.
type Counters struct {
	Arrived       int64 // pod arrivals (first arrivals only)
	Decisions     int64 // calls to Decide with a pod
	Binds         int64 // binds, including re-binds after eviction
	Deferred      int64 // Pending chosen while a node was feasible
	Invalid       int64 // decisions naming a missing or infeasible node
	Unschedulable int64 // attempts where no node passed the filters
	Evictions     int64 // pods evicted by memory pressure or machine removal
	Preemptions   int64 // pods evicted to make room for a higher-priority pod
	Drained       int64 // pods moved off nodes removed by scale-down
	Violations    int64 // times a high-priority pod started an SLA violation (throttled or evicted)
	Finished      int64 // pods that completed
	ScaleUps      int64 // nodes requested by the autoscaler
	ScaleDowns    int64 // nodes removed by the autoscaler
}

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

// nodeState is the engine's bookkeeping for a node, indexed by NodeID.
type nodeState struct {
	spec       NodeSpec
	slot       int32   // index in Cluster.nodes; -1 once removed
	pods       []int32 // pods bound to the node (Bound or Running)
	cpuOver    bool    // summed actual CPU exceeds allocatable
	underSince Time    // since when requested utilisation is below the scale-down threshold; -1 if not
	freedMark  bool    // listed in Engine.freedNodes
}

// Engine runs one simulation. It is not safe for concurrent use.
type Engine struct {
	cfg  Config
	w    *Workload
	rng  *rand.Rand
	c    Cluster
	pods []Pod

	events     eventQueue
	seq        uint64
	arrivals   []int32 // pods without dependencies, sorted by (Arrival, index)
	nextArr    int
	active     minHeap[int32]
	unsched    []int32     // pods waiting for capacity (waitUnsched)
	freed      bool        // capacity freed since the unschedulable list was last looked at
	freedNodes []NodeID    // nodes that gained capacity since then
	freedFree  []Resources // scratch: their free resources
	cur        int32       // pod awaiting a decision, or -1

	essential int // essential events queued (see evKind.essential)
	end       Time
	done      bool

	nodes      []*nodeState // by NodeID
	nodeByName map[string]NodeID
	depStart   []int32 // CSR of dependents: pods depStart[i]..depStart[i+1] wait on pod i
	deps       []int32

	provisioning int  // autoscaler nodes not ready yet
	scaledUp     bool // a scale-up happened (for ScaleDownDelayAfterAdd)
	lastScaleUp  Time
	asSerial     int

	maxFree      Resources // largest free CPU and memory over nodes (each separately)
	maxFreeDirty bool

	typical  Resources
	pending  int
	counters Counters
	m        metrics

	afterEvent func() // test hook, called after every processed event
}

// New prepares a run of w under cfg. The workload is validated and not
// modified; it must not change while the engine uses it.
func New(w *Workload, cfg Config) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := w.Validate(); err != nil {
		return nil, err
	}
	e := &Engine{
		cfg:        cfg,
		w:          w,
		rng:        rand.New(rand.NewPCG(cfg.Seed, 0x6b756265)),
		pods:       make([]Pod, len(w.Pods)),
		cur:        -1,
		end:        w.End,
		nodeByName: make(map[string]NodeID, len(w.Nodes)),
	}
	e.c.domains = [2]map[string]int32{{}, {}}
	e.active.less = podBefore(e.pods)
	e.m.init(len(w.Pods))

	waiting := make([]int32, len(w.Pods))
	e.depStart = make([]int32, len(w.Pods)+1)
	for i := range w.Pods {
		for _, d := range w.Pods[i].After {
			e.depStart[d+1]++
		}
		waiting[i] = int32(len(w.Pods[i].After))
	}
	for i := 1; i < len(e.depStart); i++ {
		e.depStart[i] += e.depStart[i-1]
	}
	e.deps = make([]int32, e.depStart[len(w.Pods)])
	fill := slices.Clone(e.depStart[:len(w.Pods)])
	for i := range w.Pods {
		for _, d := range w.Pods[i].After {
			e.deps[fill[d]] = int32(i)
			fill[d]++
		}
	}
	for i := range w.Pods {
		e.pods[i] = Pod{Spec: &w.Pods[i], ID: PodID(i), Node: -1, unschedAt: -1, waitingDeps: waiting[i]}
		if waiting[i] == 0 {
			e.arrivals = append(e.arrivals, int32(i))
		}
	}
	slices.SortStableFunc(e.arrivals, func(a, b int32) int {
		return cmp.Compare(w.Pods[a].Arrival, w.Pods[b].Arrival)
	})
	e.typical = typicalPod(w.Pods, cfg.StrandedQuantile)

	for i := range w.Nodes {
		e.addNode(w.Nodes[i])
	}
	for i := range w.Events {
		ev := &w.Events[i]
		k := evMachineAdd
		if ev.Kind == MachineRemove {
			k = evMachineDel
		}
		e.push(event{at: ev.At, kind: k, pod: int32(i)})
	}
	e.push(event{at: cfg.SampleInterval, kind: evSample})
	e.push(event{at: flushPeriod, kind: evFlush})
	if cfg.Autoscaler.Enabled {
		e.push(event{at: cfg.Autoscaler.ScanInterval, kind: evScan})
	}
	if e.end > 0 {
		e.push(event{at: e.end, kind: evEnd})
	}
	e.maxFreeDirty = true
	return e, nil
}

// typicalPod returns the q-quantile of CPU requests and of memory requests
// (nearest rank, as Percentile), found by selection in linear time.
func typicalPod(pods []PodSpec, q float64) Resources {
	if len(pods) == 0 {
		return Resources{}
	}
	k := max(0, min(int(math.Ceil(q*float64(len(pods))))-1, len(pods)-1))
	v := make([]int64, len(pods))
	for i := range pods {
		v[i] = pods[i].Requests.CPU
	}
	cpu := selectKth(v, k)
	for i := range pods {
		v[i] = pods[i].Requests.Mem
	}
	return Resources{CPU: cpu, Mem: selectKth(v, k)}
}

// selectKth returns the k-th smallest value of v (0-based), reordering v:
// quickselect with a median-of-three pivot and three-way partitioning, so
// runs of equal values (common in request sizes) cost nothing extra.
func selectKth(v []int64, k int) int64 {
	lo, hi := 0, len(v)-1
	for lo < hi {
		a, b, c := v[lo], v[(lo+hi)/2], v[hi]
		p := max(min(a, b), min(max(a, b), c))
		lt, i, gt := lo, lo, hi
		for i <= gt {
			switch {
			case v[i] < p:
				v[lt], v[i] = v[i], v[lt]
				lt++
				i++
			case v[i] > p:
				v[i], v[gt] = v[gt], v[i]
				gt--
			default:
				i++
			}
		}
		switch {
		case k < lt:
			hi = lt - 1
		case k > gt:
			lo = gt + 1
		default:
			return p
		}
	}
	return v[k]
}

// Cluster returns the scheduler's view of the cluster.
func (e *Engine) Cluster() *Cluster { return &e.c }

// Now returns the current simulated time.
func (e *Engine) Now() Time { return e.c.now }

// Pod returns the state of pod id.
func (e *Engine) Pod(id PodID) *Pod { return &e.pods[id] }

// Counters returns the cumulative counters of the run so far.
func (e *Engine) Counters() Counters { return e.counters }

// Typical returns the typical pod size used for stranded resources.
func (e *Engine) Typical() Resources { return e.typical }

// Pending returns the number of pods waiting to be scheduled.
func (e *Engine) Pending() int { return e.pending }

// Done reports whether the run is over.
func (e *Engine) Done() bool { return e.done }

func (e *Engine) push(ev event) {
	ev.seq = e.seq
	e.seq++
	if ev.kind.essential() {
		e.essential++
	}
	e.events.push(ev)
}

// Next advances the simulation to the next pod that needs a scheduling
// decision and returns it. It returns false when the run is over. The pod
// stays current until Decide is called; calling Next again returns it again.
func (e *Engine) Next() (*Pod, bool) {
	if e.cur >= 0 {
		return &e.pods[e.cur], true
	}
	for !e.done {
		e.drainNow()
		if e.done {
			break
		}
		if e.freed {
			e.releaseUnschedulable()
		}
		if e.active.len() > 0 {
			id := *e.active.top()
			p := &e.pods[id]
			if p.Attempts > 0 && !e.mightFit(p.Spec) {
				// A retry that cannot fit by resources alone: no policy could
				// place it, so it goes back without a decision.
				e.active.pop()
				p.wait = waitNone
				e.counters.Unschedulable++
				e.unschedulable(p)
				continue
			}
			e.cur = id
			return p, true
		}
		next, ok := e.nextTime()
		if !ok || (e.end == 0 && e.essential == 0 && e.nextArr >= len(e.arrivals)) {
			e.finish()
			break
		}
		e.advance(next)
	}
	return nil, false
}

// nextTime returns the time of the next arrival or event.
func (e *Engine) nextTime() (Time, bool) {
	t, ok := Time(math.MaxInt64), false
	if e.nextArr < len(e.arrivals) {
		t, ok = e.w.Pods[e.arrivals[e.nextArr]].Arrival, true
	}
	if e.events.len() > 0 && e.events.top().at < t {
		t, ok = e.events.top().at, true
	}
	return t, ok
}

// drainNow processes every arrival and event due at or before now. Arrivals
// from the workload come before queued events of the same time.
func (e *Engine) drainNow() {
	for !e.done {
		if e.nextArr < len(e.arrivals) && e.w.Pods[e.arrivals[e.nextArr]].Arrival <= e.c.now {
			id := e.arrivals[e.nextArr]
			e.nextArr++
			e.arrive(&e.pods[id])
		} else if e.events.len() > 0 && e.events.top().at <= e.c.now {
			ev := e.events.pop()
			if ev.kind.essential() {
				e.essential--
			}
			e.handle(ev)
		} else {
			return
		}
		if e.afterEvent != nil {
			e.afterEvent()
		}
	}
}

func (e *Engine) advance(t Time) {
	if t > e.c.now {
		e.m.nodeMs += int64(len(e.c.nodes)) * int64(t-e.c.now)
		e.c.now = t
	}
}

func (e *Engine) handle(ev event) {
	switch ev.kind {
	case evArrive:
		e.arrive(&e.pods[ev.pod])
	case evStart, evUsage, evFinish:
		p := &e.pods[ev.pod]
		if p.epoch != ev.epoch {
			return // stale: the pod was evicted since
		}
		switch ev.kind {
		case evStart:
			e.start(p)
		case evUsage:
			e.usageStep(p)
		case evFinish:
			e.complete(p)
		}
	case evRetry:
		p := &e.pods[ev.pod]
		if p.epoch != ev.epoch || p.State != Pending || p.wait != waitBackoff {
			return
		}
		e.activate(p)
	case evFlush:
		e.flushUnschedulable()
		if next := e.c.now + flushPeriod; e.end == 0 || next < e.end {
			e.push(event{at: next, kind: evFlush})
		}
	case evSample:
		e.sample()
		if next := e.c.now + e.cfg.SampleInterval; e.end == 0 || next < e.end {
			e.push(event{at: next, kind: evSample})
		}
	case evMachineAdd:
		e.addNode(e.w.Events[ev.pod].Node)
	case evMachineDel:
		if id, ok := e.nodeByName[e.w.Events[ev.pod].Node.Name]; ok && e.nodes[id].slot >= 0 {
			e.removeNode(id, false)
		} else {
			e.m.ignoredEvents++
		}
	case evProvisioned:
		e.provisioning--
		e.asSerial++
		spec := cloneSpec(e.cfg.Autoscaler.Template)
		spec.Name = fmt.Sprintf("%s-%d", e.cfg.Autoscaler.Template.Name, e.asSerial)
		e.addNode(spec)
	case evScan:
		if e.freed {
			// Pods waiting for capacity get their chance before the
			// autoscaler counts them (a node may have just become ready).
			e.releaseUnschedulable()
		}
		e.scaleUp()
		e.scaleDown()
		if next := e.c.now + e.cfg.Autoscaler.ScanInterval; e.end == 0 || next < e.end {
			e.push(event{at: next, kind: evScan})
		}
	case evEnd:
		e.finish()
	}
}

// arrive puts a pod in the scheduling queue for the first time.
func (e *Engine) arrive(p *Pod) {
	if e.end > 0 && e.c.now >= e.end {
		return
	}
	p.State = Pending
	p.arrivedAt = e.c.now
	p.QueuedAt = e.c.now
	p.backoff = e.cfg.BackoffInitial
	e.pending++
	e.counters.Arrived++
	e.activate(p)
}

func (e *Engine) activate(p *Pod) {
	p.wait = waitActive
	e.active.push(int32(p.ID))
}

// Decide applies a decision for the pod returned by Next: an index into
// Cluster().Nodes(), or PendingDecision. Any integer is accepted: an index
// out of range or naming a node that fails the filters is OutcomeInvalid.
func (e *Engine) Decide(node int) Outcome {
	if e.cur < 0 {
		return OutcomeNoPod
	}
	id := e.active.pop() // the top is e.cur: nothing touches the queue between Next and Decide
	e.cur = -1
	p := &e.pods[id]
	p.wait = waitNone
	p.Attempts++
	e.counters.Decisions++
	if node == PendingDecision {
		if e.c.AnyFeasible(p.Spec) {
			e.counters.Deferred++
			e.backoffWait(p)
			return OutcomeDeferred
		}
		e.counters.Unschedulable++
		return e.unschedulable(p)
	}
	if node < 0 || node >= len(e.c.nodes) || !Feasible(&e.c.nodes[node], p.Spec) {
		e.counters.Invalid++
		e.backoffWait(p)
		return OutcomeInvalid
	}
	e.bind(p, node)
	return OutcomeBound
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

// bind places p on the node at slot i. The caller has checked feasibility.
func (e *Engine) bind(p *Pod, i int) {
	n := &e.c.nodes[i]
	n.Requested = n.Requested.Add(p.Spec.Requests)
	n.Pods++
	ns := e.nodes[n.ID]
	p.nodePos = int32(len(ns.pods))
	ns.pods = append(ns.pods, int32(p.ID))
	p.State = Bound
	p.Node = n.ID
	p.unschedAt = -1
	p.backoff = e.cfg.BackoffInitial
	e.pending--
	e.maxFreeDirty = true
	e.counters.Binds++
	if !p.everBound {
		p.everBound = true
		p.boundAt = e.c.now
		e.m.addLatency(p.Spec.Priority, e.c.now-p.arrivedAt)
	}
	lat := e.cfg.StartupBase
	if e.cfg.StartupNoise > 0 {
		lat += Time(math.Round(e.rng.NormFloat64() * float64(e.cfg.StartupNoise)))
	}
	p.epoch++
	e.push(event{at: e.c.now + max(lat, 0), kind: evStart, pod: int32(p.ID), epoch: p.epoch})
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
	e.pending++
	e.activate(p)
}

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
	e.m.violationMs += int64(e.c.now - p.violatedAt)
}

// markViolation counts an SLA violation of a high-priority pod.
func (e *Engine) markViolation(p *Pod) {
	e.counters.Violations++
	if !p.everViolated {
		p.everViolated = true
		e.m.violatedPods++
	}
}

// addNode brings a node into the cluster.
func (e *Engine) addNode(spec NodeSpec) {
	if id, ok := e.nodeByName[spec.Name]; ok && e.nodes[id].slot >= 0 {
		e.m.ignoredEvents++ // already present
		return
	}
	id := NodeID(len(e.nodes))
	ns := &nodeState{spec: cloneSpec(spec), slot: int32(len(e.c.nodes)), underSince: -1}
	e.nodes = append(e.nodes, ns)
	e.nodeByName[spec.Name] = id
	maxPods := spec.MaxPods
	if maxPods == 0 {
		maxPods = DefaultMaxPods
	}
	n := Node{
		Alloc:      spec.Allocatable,
		MaxPods:    maxPods,
		ID:         id,
		HardTaints: hasHardTaints(spec.Taints),
		SoftTaints: softTaints(spec.Taints),
		Spec:       &ns.spec,
		Domain:     [2]int32{-1, -1},
	}
	for lvl, key := range [2]string{LabelZone, LabelRack} {
		if v, ok := spec.Labels[key]; ok {
			d, seen := e.c.domains[lvl][v]
			if !seen {
				d = int32(len(e.c.domains[lvl]))
				e.c.domains[lvl][v] = d
			}
			n.Domain[lvl] = d
		}
	}
	e.c.nodes = append(e.c.nodes, n)
	e.capacityFreed(id)
}

// cloneSpec copies a node spec so that the engine's copy does not alias the
// workload's taints and labels.
func cloneSpec(s NodeSpec) NodeSpec {
	s.Taints = slices.Clone(s.Taints)
	if s.Labels != nil {
		l := make(map[string]string, len(s.Labels))
		for k, v := range s.Labels {
			l[k] = v
		}
		s.Labels = l
	}
	return s
}

// removeNode takes a node out of the cluster. Its pods are evicted (machine
// removal) or drained (scale-down) and re-enter the queue.
func (e *Engine) removeNode(id NodeID, drain bool) {
	ns := e.nodes[id]
	counter := &e.counters.Evictions
	if drain {
		counter = &e.counters.Drained
	}
	for len(ns.pods) > 0 {
		e.evict(&e.pods[ns.pods[len(ns.pods)-1]], counter)
	}
	slot := ns.slot
	e.c.nodes = slices.Delete(e.c.nodes, int(slot), int(slot)+1)
	for i := int(slot); i < len(e.c.nodes); i++ {
		e.nodes[e.c.nodes[i].ID].slot = int32(i)
	}
	ns.slot = -1
	e.maxFreeDirty = true
}

// finish ends the run: violations in progress are accrued and a final
// sample is taken.
func (e *Engine) finish() {
	if e.done {
		return
	}
	e.done = true
	for i := range e.pods {
		e.endViolation(&e.pods[i])
	}
	if len(e.m.samples) == 0 || e.m.samples[len(e.m.samples)-1].At < e.c.now {
		e.sample()
	}
}

// Run replays w under cfg with scheduler s and returns the result. It is a
// loop over Next and Decide, the same calls an RL environment makes. ctx is
// checked every few thousand decisions.
func Run(ctx context.Context, w *Workload, cfg Config, s Scheduler) (*Result, error) {
	e, err := New(w, cfg)
	if err != nil {
		return nil, err
	}
	for n := 0; ; n++ {
		p, ok := e.Next()
		if !ok {
			break
		}
		e.Decide(s.Schedule(&e.c, p))
		if n&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("replay %s with %s: %w", w.Name, s.Name(), err)
			}
		}
	}
	r := e.Result()
	r.Scheduler = s.Name()
	return r, nil
}
