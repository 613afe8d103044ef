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
	// PendingMs is the time integral of Pending() in pod-milliseconds, and
	// PendingHighMs that of PendingHigh() (see waiting.go): the difference
	// between two readings is the exact pending pod-time in between.
	PendingMs     int64
	PendingHighMs int64
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

	essential int  // essential events queued (see evKind.essential)
	end       Time // the run's end: the window's end plus Config.Grace
	windowEnd Time // the window's end: no pod arrives from here on
	done      bool
	grace     *graceState // the window-end result, once in the grace period

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

	typical    Resources
	shapes     []podShape // the workload's pod shapes, for the expected fragmentation
	shapeTotal int64      // summed count of shapes
	pending    int
	counters   Counters
	m          metrics

	pendingHigh int // the high-priority part of pending (waiting.go)

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
	if cfg.Grace > 0 && w.End == 0 {
		return nil, fmt.Errorf("%w: grace_ms = %v: workload %q has no window end to drain after", ErrConfig, cfg.Grace, w.Name)
	}
	e := &Engine{
		cfg:        cfg,
		w:          w,
		rng:        rand.New(rand.NewPCG(cfg.Seed, 0x6b756265)),
		pods:       make([]Pod, len(w.Pods)),
		cur:        -1,
		windowEnd:  w.End,
		nodeByName: make(map[string]NodeID, len(w.Nodes)),
	}
	e.c.domains = [2]map[string]int32{{}, {}}
	if cfg.WarmUp == 0 {
		e.m.warmedUp = true // counters count from 0
	}
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
	groups, ng := groupIDs(w.Pods)
	e.c.groups = make([]group, ng)
	for i := range w.Pods {
		e.pods[i] = Pod{Spec: &w.Pods[i], ID: PodID(i), Node: -1, Group: groups[i], unschedAt: -1, waitingDeps: waiting[i]}
	}
	e.typical = typicalPod(w.Pods, cfg.StrandedQuantile)
	e.shapes, e.shapeTotal = podShapes(w.Pods, maxShapes)

	for i := range w.Nodes {
		e.addNode(w.Nodes[i])
	}
	e.warmStart()
	for i := range w.Pods {
		if waiting[i] == 0 && !e.pods[i].warm {
			e.arrivals = append(e.arrivals, int32(i))
		}
	}
	slices.SortStableFunc(e.arrivals, func(a, b int32) int {
		return cmp.Compare(w.Pods[a].Arrival, w.Pods[b].Arrival)
	})
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
	if w.End > 0 {
		e.end = w.End + cfg.Grace
		e.push(event{at: w.End, kind: evEnd})
		if cfg.Grace > 0 {
			e.push(event{at: e.end, kind: evEnd})
		}
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

// advance moves the clock to t, integrating the node count from the end of
// the warm-up on. Crossing the end of the warm-up snapshots the counters
// before anything at t happens, so that Result counts from there on.
func (e *Engine) advance(t Time) {
	if t <= e.c.now {
		return
	}
	if !e.m.warmedUp && t >= e.cfg.WarmUp {
		e.endWarmUp()
	}
	if from := max(e.c.now, e.cfg.WarmUp); t > from {
		e.m.nodeMs += int64(len(e.c.nodes)) * int64(t-from)
	}
	e.accruePending(t - e.c.now)
	e.c.now = t
}

// endWarmUp snapshots the counters at the end of the warm-up.
func (e *Engine) endWarmUp() {
	e.m.warmedUp = true
	e.m.base = e.counters
	e.m.ignoredBase = e.m.ignoredEvents
}

// measured reports whether p counts in the metrics: it arrived at or after
// the end of the warm-up.
func (e *Engine) measured(p *Pod) bool { return p.arrivedAt >= e.cfg.WarmUp }

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
		if next := e.c.now + e.cfg.SampleInterval; e.windowEnd == 0 || next < e.windowEnd {
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
		if e.cfg.Grace > 0 && e.grace == nil {
			e.closeWindow()
		} else {
			e.finish()
		}
	}
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

// finish ends the run and settles it, unless a grace period settled the
// window at its end already (closeWindow).
func (e *Engine) finish() {
	if e.done {
		return
	}
	e.done = true
	if e.grace == nil { // after a grace period the window was settled at its end
		e.settle()
	}
}

// settle closes the measured run at now: violations in progress are accrued
// and a final sample is taken.
func (e *Engine) settle() {
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
	if sr, ok := s.(StatsReporter); ok {
		r.SchedulerStats = sr.Stats()
	}
	return r, nil
}
