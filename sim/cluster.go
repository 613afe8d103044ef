package sim

// NodeID identifies a node for its whole life in a run; ids are never reused.
type NodeID int32

// PodID identifies a pod: its index in Workload.Pods.
type PodID int32

// Node is the engine's state of one node. Schedulers read it through
// Cluster.Nodes and must not modify it. It is kept compact because every
// scheduling decision reads all N of them.
type Node struct {
	Alloc     Resources // allocatable
	Requested Resources // summed requests of pods bound to the node
	Used      Resources // summed actual use of pods running on the node
	Pods      int32     // pods bound to the node
	MaxPods   int32     // pod-count limit
	ID        NodeID
	// Domain holds interned failure-domain ids (LabelZone, LabelRack); -1
	// where the node has no such label. Ids are dense per run, in order of
	// first appearance.
	Domain [2]int32
	// HardTaints is true when the node has a NoSchedule or NoExecute taint, so
	// filters can skip the taint check for the common untainted node.
	HardTaints bool
	// SoftTaints is the number of the node's PreferNoSchedule taints (at
	// most 255: MaxSoftTaints means that many or more), so scores can skip
	// the taint count for nodes without any, and need not look at the
	// taints at all for a pod that cannot tolerate any (see
	// CountIntolerablePreferNoSchedule).
	SoftTaints uint8
	Spec       *NodeSpec
}

// Free returns allocatable minus requested.
func (n *Node) Free() Resources { return n.Alloc.Sub(n.Requested) }

// PodState is where a pod is in its lifecycle. Every pod is in exactly one.
type PodState uint8

// Pod states.
const (
	NotArrived PodState = iota // before arrival (or waiting for DAG dependencies)
	Pending                    // in the scheduling queue
	Bound                      // bound to a node, starting (image pull, volume mount)
	Running                    // running on its node
	Finished                   // done (or still running when the run ended: see Pod.EndedRunning)
)

// String names the state.
func (s PodState) String() string {
	return [...]string{"not-arrived", "pending", "bound", "running", "finished"}[s]
}

// Pod is the engine's state of one pod. Schedulers must not modify it.
type Pod struct {
	Spec  *PodSpec
	ID    PodID
	State PodState
	Node  NodeID // node while Bound or Running, else -1
	// QueuedAt is when the pod last entered the pending queue (arrival, or
	// eviction); pending latency is measured from arrival to first bind.
	QueuedAt Time
	// Attempts counts scheduling decisions taken for this pod.
	Attempts int32
	// Group is the dense id of Spec.Group in this run (see GroupID); only
	// meaningful when Spec.Group is not empty (NoGroup in the engine's pods).
	Group GroupID

	arrivedAt    Time
	boundAt      Time // first bind
	startedAt    Time
	everBound    bool
	warm         bool // placed by the warm start (Workload.Initial)
	unschedAt    Time // since when the pod fits nowhere in this pending spell; -1 if not
	backoff      Time
	retryAt      Time // backoff expiry while pending
	listedAt     Time // when the pod entered the unschedulable list
	waitingDeps  int32
	usageStep    int32 // index of the current usage point
	use          Resources
	epoch        int32 // bumped whenever queued events of the pod become stale
	nodePos      int32 // index in its node's pod list
	unschedPos   int32 // index in the unschedulable list
	wait         uint8 // where a pending pod waits (waitActive, ...)
	violating    bool  // high-priority pod currently throttled
	everViolated bool
	violatedAt   Time
}

// ArrivedAt returns when the pod first arrived: it entered the pending
// queue for the first time (an eviction does not change it). A scheduler
// knows it: it is when it was first asked about the pod. Pending latency
// runs from it.
func (p *Pod) ArrivedAt() Time { return p.arrivedAt }

// Decision constants.
const (
	// PendingDecision is the decision to leave a pod pending (the Pending
	// action of a learned policy).
	PendingDecision = -1
)

// Scheduler is a placement policy. Schedule reads the cluster view and one
// pod and returns an index into c.Nodes() or PendingDecision. It must not
// modify c or p. "Does not fit anywhere" is PendingDecision, not an error.
type Scheduler interface {
	Name() string
	Schedule(c *Cluster, p *Pod) int
}

// StatsReporter is a Scheduler that reports statistics of its own
// decisions, such as a learned gate's mean weights; Run stores them in
// Result.SchedulerStats at the end of the replay.
type StatsReporter interface {
	Stats() map[string]float64
}

// Cluster is the read-only view of the simulator that schedulers get.
type Cluster struct {
	nodes    []Node
	now      Time
	domains  [2]map[string]int32
	groups   []group     // by GroupID: bound pods per node and zone
	life     lifetimes   // finished pods' lifetimes (lifetimes.go)
	queue    queueView   // the pending queue and arrivals (queueview.go)
	services serviceView // long-running pods seen (services.go)
}

// Nodes returns the live nodes, in order of addition. The slice is the
// engine's own: read it, never write it, and do not keep it across decisions.
func (c *Cluster) Nodes() []Node { return c.nodes }

// Len returns the number of live nodes.
func (c *Cluster) Len() int { return len(c.nodes) }

// Now returns the current simulated time.
func (c *Cluster) Now() Time { return c.now }

// Domains returns the number of distinct failure domains seen so far at the
// given level (0 for LabelZone, 1 for LabelRack).
func (c *Cluster) Domains(level int) int { return len(c.domains[level]) }

// FitsResources reports whether p's requests fit n's free allocatable and n
// is below its pod limit (kube-scheduler's NodeResourcesFit filter).
func FitsResources(n *Node, p *PodSpec) bool {
	return n.Pods < n.MaxPods &&
		p.Requests.CPU <= n.Alloc.CPU-n.Requested.CPU &&
		p.Requests.Mem <= n.Alloc.Mem-n.Requested.Mem
}

// ToleratesTaints reports whether p tolerates every NoSchedule and NoExecute
// taint of n (kube-scheduler's TaintToleration filter).
func ToleratesTaints(n *Node, p *PodSpec) bool {
	if !n.HardTaints {
		return true
	}
	for _, t := range n.Spec.Taints {
		if t.Effect == PreferNoSchedule {
			continue
		}
		if !tolerated(p.Tolerations, t) {
			return false
		}
	}
	return true
}

// CountIntolerablePreferNoSchedule counts n's PreferNoSchedule taints that p
// does not tolerate (the raw TaintToleration score, lower is better).
func CountIntolerablePreferNoSchedule(n *Node, p *PodSpec) int64 {
	if n.SoftTaints == 0 {
		return 0
	}
	var c int64
	for _, t := range n.Spec.Taints {
		if t.Effect == PreferNoSchedule && !tolerated(p.Tolerations, t) {
			c++
		}
	}
	return c
}

// MaxSoftTaints is the cap of Node.SoftTaints.
const MaxSoftTaints = 255

// MayTolerate reports whether some toleration of p applies to taints of the
// given effect (its effect is that one or empty). When none does, p
// tolerates no taint of that effect: it passes no node with a NoSchedule or
// NoExecute taint, and CountIntolerablePreferNoSchedule of a node is its
// SoftTaints (when below MaxSoftTaints).
func MayTolerate(p *PodSpec, e TaintEffect) bool {
	for _, t := range p.Tolerations {
		if t.Effect == 0 || t.Effect == e {
			return true
		}
	}
	return false
}

func tolerated(tols []Toleration, t Taint) bool {
	for _, tol := range tols {
		if tol.Tolerates(t) {
			return true
		}
	}
	return false
}

// MatchesAffinity reports whether n satisfies p's required node affinity
// (kube-scheduler's NodeAffinity filter): any of the required terms matches.
func MatchesAffinity(n *Node, p *PodSpec) bool {
	if p.Affinity == nil || len(p.Affinity.Required) == 0 {
		return true
	}
	for _, t := range p.Affinity.Required {
		if t.Matches(n.Spec.Labels) {
			return true
		}
	}
	return false
}

// PreferredAffinityWeight sums the weights of p's preferred affinity terms
// that n matches (the raw NodeAffinity score).
func PreferredAffinityWeight(n *Node, p *PodSpec) int64 {
	if p.Affinity == nil {
		return 0
	}
	var w int64
	for _, pt := range p.Affinity.Preferred {
		if pt.Term.Matches(n.Spec.Labels) {
			w += int64(pt.Weight)
		}
	}
	return w
}

// Feasible reports whether kube-scheduler's default filters pass for p on n:
// resources and pod count, taints, required node affinity.
func Feasible(n *Node, p *PodSpec) bool {
	return FitsResources(n, p) && ToleratesTaints(n, p) && MatchesAffinity(n, p)
}

// AnyFeasible reports whether some node passes the filters for s (when none
// does, Pending is the only legal decision).
func (c *Cluster) AnyFeasible(s *PodSpec) bool {
	for i := range c.nodes {
		if Feasible(&c.nodes[i], s) {
			return true
		}
	}
	return false
}
