package sim

import (
	"fmt"
	"strconv"
)

// Time is simulated time in integer milliseconds since the start of a run.
type Time int64

// Units of simulated time.
const (
	Millisecond Time = 1
	Second           = 1000 * Millisecond
	Minute           = 60 * Second
	Hour             = 60 * Minute
)

// Seconds returns t in seconds as a float, for reports.
func (t Time) Seconds() float64 { return float64(t) / float64(Second) }

// String formats t as seconds with millisecond precision ("12.345s").
func (t Time) String() string {
	return strconv.FormatFloat(t.Seconds(), 'f', 3, 64) + "s"
}

// Resources is an amount of CPU (millicores) and memory (MiB).
type Resources struct {
	CPU int64 `json:"cpu_millicores"`
	Mem int64 `json:"mem_mib"`
}

// Add returns r + o.
func (r Resources) Add(o Resources) Resources { return Resources{r.CPU + o.CPU, r.Mem + o.Mem} }

// Sub returns r - o.
func (r Resources) Sub(o Resources) Resources { return Resources{r.CPU - o.CPU, r.Mem - o.Mem} }

// Fits reports whether r fits in free in both dimensions.
func (r Resources) Fits(free Resources) bool { return r.CPU <= free.CPU && r.Mem <= free.Mem }

// String formats r as "2000m/4096Mi".
func (r Resources) String() string { return fmt.Sprintf("%dm/%dMi", r.CPU, r.Mem) }

// Priority is a pod's priority class. Higher values win preemption and are
// evicted last.
type Priority int8

// Priority classes: batch work is Low, online (latency-sensitive) services are High.
const (
	Low  Priority = 0
	High Priority = 1
)

// String returns "low" or "high".
func (p Priority) String() string {
	if p >= High {
		return "high"
	}
	return "low"
}

// TaintEffect is what a taint does to pods that do not tolerate it.
type TaintEffect uint8

// Taint effects, as in Kubernetes.
const (
	NoSchedule TaintEffect = iota + 1
	PreferNoSchedule
	NoExecute
)

// String returns the Kubernetes spelling of the effect.
func (e TaintEffect) String() string {
	switch e {
	case NoSchedule:
		return "NoSchedule"
	case PreferNoSchedule:
		return "PreferNoSchedule"
	case NoExecute:
		return "NoExecute"
	}
	return "TaintEffect(" + strconv.Itoa(int(e)) + ")"
}

// Taint marks a node so that pods without a matching toleration avoid it.
type Taint struct {
	Key    string
	Value  string
	Effect TaintEffect
}

// Toleration lets a pod ignore matching taints. With Exists set the value is
// ignored (operator Exists); an empty Key with Exists tolerates every taint.
// An Effect of 0 matches every effect.
type Toleration struct {
	Key    string
	Value  string
	Exists bool
	Effect TaintEffect
}

// Tolerates reports whether t tolerates taint, with Kubernetes' matching rules.
func (t Toleration) Tolerates(taint Taint) bool {
	if t.Effect != 0 && t.Effect != taint.Effect {
		return false
	}
	if t.Key == "" {
		return t.Exists
	}
	if t.Key != taint.Key {
		return false
	}
	return t.Exists || t.Value == taint.Value
}

// SelectorOp is the operator of a node-selector requirement.
type SelectorOp uint8

// Node-selector operators, as in Kubernetes.
const (
	OpIn SelectorOp = iota + 1
	OpNotIn
	OpExists
	OpDoesNotExist
)

// Requirement is one node-selector requirement on a label.
type Requirement struct {
	Key    string
	Op     SelectorOp
	Values []string
}

// Matches reports whether labels satisfy r.
func (r Requirement) Matches(labels map[string]string) bool {
	v, ok := labels[r.Key]
	switch r.Op {
	case OpExists:
		return ok
	case OpDoesNotExist:
		return !ok
	case OpIn:
		if !ok {
			return false
		}
		for _, w := range r.Values {
			if v == w {
				return true
			}
		}
		return false
	case OpNotIn:
		if !ok {
			return true
		}
		for _, w := range r.Values {
			if v == w {
				return false
			}
		}
		return true
	}
	return false
}

// Term is a conjunction of requirements (a NodeSelectorTerm).
type Term []Requirement

// Matches reports whether labels satisfy every requirement of t. An empty
// term matches nothing, as in Kubernetes.
func (t Term) Matches(labels map[string]string) bool {
	if len(t) == 0 {
		return false
	}
	for _, r := range t {
		if !r.Matches(labels) {
			return false
		}
	}
	return true
}

// PreferredTerm is a weighted preferred scheduling term (weight 1..100).
type PreferredTerm struct {
	Weight int32
	Term   Term
}

// Affinity is a pod's node affinity: Required terms are ORed (the pod may
// only go to nodes matching at least one); Preferred terms add their weights
// to the score of matching nodes.
type Affinity struct {
	Required  []Term
	Preferred []PreferredTerm
}

// UsagePoint is a step of a usage profile: from Offset after the pod starts,
// its actual use is Use, until the next point.
type UsagePoint struct {
	Offset Time
	Use    Resources
}

// PodSpec describes a pod of a workload. It is immutable during a run.
type PodSpec struct {
	Name     string
	Group    string // application group (Alibaba app_du or job name); informational
	Arrival  Time
	Requests Resources
	Limits   Resources // zero means no limit in that dimension
	Priority Priority
	// Duration is how long the pod runs once started. Zero means it runs until
	// the end of the run (a long-running service).
	Duration    Time
	Tolerations []Toleration
	Affinity    *Affinity
	// Usage is the pod's actual use over its life, piecewise constant and
	// sorted by Offset. Empty means it uses exactly its requests.
	Usage []UsagePoint
	// After lists indices (into Workload.Pods) of pods that must finish before
	// this one arrives (DAG dependencies of batch tasks). The pod arrives at
	// max(Arrival, last dependency's finish).
	After []int32
}

// UseAt returns the actual use of the pod at offset since it started.
func (p *PodSpec) UseAt(offset Time) Resources {
	if len(p.Usage) == 0 {
		return p.Requests
	}
	u := p.Usage[0].Use
	for _, pt := range p.Usage[1:] {
		if pt.Offset > offset {
			break
		}
		u = pt.Use
	}
	return u
}

// Well-known node label keys for the two failure-domain levels.
const (
	LabelZone = "topology.kubernetes.io/zone" // failure domain level 1
	LabelRack = "topology.kubesim.io/rack"    // failure domain level 2
)

// NodeSpec describes a node (machine).
type NodeSpec struct {
	Name        string
	Allocatable Resources
	MaxPods     int32 // pod-count limit; 0 means the Kubernetes default of 110
	Taints      []Taint
	Labels      map[string]string
}

// DefaultMaxPods is the kubelet's default pod limit.
const DefaultMaxPods = 110

// MachineEventKind says whether a machine joins or leaves the cluster.
type MachineEventKind uint8

// Machine event kinds.
const (
	MachineAdd MachineEventKind = iota + 1
	MachineRemove
)

// MachineEvent adds or removes a node at a time. For MachineRemove only
// Node.Name is used; its pods are evicted and re-enter the queue.
type MachineEvent struct {
	At   Time
	Kind MachineEventKind
	Node NodeSpec
}

// Workload is everything a run replays: the nodes present at time 0, the pods
// with their arrival times, and machine events. Pods need not be sorted.
type Workload struct {
	Name   string
	Nodes  []NodeSpec
	Pods   []PodSpec
	Events []MachineEvent
	// End is the end of the replay window; zero means run until every event
	// has been processed (long-running pods then stop at the last finish of a
	// finite pod or arrival, whichever is later).
	End Time
	// Initial is the warm start: pods that were already running when the
	// window opened, each with the node (an index into Nodes) that ran it.
	// At time 0, before any arrival, the engine binds and starts each of
	// them there without asking the scheduler, if the node passes the hard
	// filters (fit, pod limit, taints, required affinity); a pod that does
	// not pass arrives normally at its Arrival. Warm pods have no pending
	// latency and are counted in Result.WarmPods. Empty means a cold start.
	Initial []Placement
}

// Placement puts pod Pod (an index into Workload.Pods) on node Node (an
// index into Workload.Nodes).
type Placement struct {
	Pod  int32
	Node int32
}

// Validate checks a workload for impossible values and names the offending
// pod, node or event.
func (w *Workload) Validate() error {
	names := make(map[string]struct{}, len(w.Nodes))
	for i := range w.Nodes {
		if err := w.Nodes[i].validate(); err != nil {
			return fmt.Errorf("workload %q: node %d: %w", w.Name, i, err)
		}
		if _, dup := names[w.Nodes[i].Name]; dup {
			return fmt.Errorf("workload %q: node %d: duplicate name %q", w.Name, i, w.Nodes[i].Name)
		}
		names[w.Nodes[i].Name] = struct{}{}
	}
	for i := range w.Pods {
		p := &w.Pods[i]
		switch {
		case p.Arrival < 0:
			return fmt.Errorf("workload %q: pod %d (%s): negative arrival %d", w.Name, i, p.Name, p.Arrival)
		case p.Requests.CPU < 0 || p.Requests.Mem < 0:
			return fmt.Errorf("workload %q: pod %d (%s): negative requests %v", w.Name, i, p.Name, p.Requests)
		case p.Limits.CPU < 0 || p.Limits.Mem < 0:
			return fmt.Errorf("workload %q: pod %d (%s): negative limits %v", w.Name, i, p.Name, p.Limits)
		case p.Duration < 0:
			return fmt.Errorf("workload %q: pod %d (%s): negative duration %d", w.Name, i, p.Name, p.Duration)
		}
		for j, u := range p.Usage {
			if u.Use.CPU < 0 || u.Use.Mem < 0 || u.Offset < 0 || (j > 0 && u.Offset < p.Usage[j-1].Offset) {
				return fmt.Errorf("workload %q: pod %d (%s): usage point %d invalid or out of order", w.Name, i, p.Name, j)
			}
		}
		for _, d := range p.After {
			if d < 0 || int(d) >= len(w.Pods) || int(d) == i {
				return fmt.Errorf("workload %q: pod %d (%s): dependency %d out of range", w.Name, i, p.Name, d)
			}
		}
	}
	for i := range w.Events {
		ev := &w.Events[i]
		if ev.At < 0 {
			return fmt.Errorf("workload %q: machine event %d: negative time", w.Name, i)
		}
		switch ev.Kind {
		case MachineAdd:
			if err := ev.Node.validate(); err != nil {
				return fmt.Errorf("workload %q: machine event %d: %w", w.Name, i, err)
			}
		case MachineRemove:
			if ev.Node.Name == "" {
				return fmt.Errorf("workload %q: machine event %d: remove without a node name", w.Name, i)
			}
		default:
			return fmt.Errorf("workload %q: machine event %d: unknown kind %d", w.Name, i, ev.Kind)
		}
	}
	if w.End < 0 {
		return fmt.Errorf("workload %q: negative end %d", w.Name, w.End)
	}
	placed := make(map[int32]struct{}, len(w.Initial))
	for i, pl := range w.Initial {
		switch {
		case pl.Pod < 0 || int(pl.Pod) >= len(w.Pods):
			return fmt.Errorf("workload %q: initial placement %d: pod %d out of range", w.Name, i, pl.Pod)
		case pl.Node < 0 || int(pl.Node) >= len(w.Nodes):
			return fmt.Errorf("workload %q: initial placement %d: node %d out of range", w.Name, i, pl.Node)
		case len(w.Pods[pl.Pod].After) > 0:
			return fmt.Errorf("workload %q: initial placement %d: pod %d (%s) has dependencies", w.Name, i, pl.Pod, w.Pods[pl.Pod].Name)
		}
		if _, dup := placed[pl.Pod]; dup {
			return fmt.Errorf("workload %q: initial placement %d: pod %d (%s) placed twice", w.Name, i, pl.Pod, w.Pods[pl.Pod].Name)
		}
		placed[pl.Pod] = struct{}{}
	}
	return nil
}

func (n *NodeSpec) validate() error {
	switch {
	case n.Name == "":
		return fmt.Errorf("node without a name")
	case n.Allocatable.CPU <= 0 || n.Allocatable.Mem <= 0:
		return fmt.Errorf("node %q: allocatable %v must be positive", n.Name, n.Allocatable)
	case n.MaxPods < 0:
		return fmt.Errorf("node %q: negative pod limit %d", n.Name, n.MaxPods)
	}
	return nil
}
