package sim

// NewCluster returns a cluster view over the given node states at time now,
// for tests of schedulers and for offline tools. Nodes without a pod limit get
// DefaultMaxPods; HardTaints and SoftTaints are derived from Spec.Taints. The
// view owns the slice.
func NewCluster(now Time, nodes ...Node) *Cluster {
	c := &Cluster{nodes: nodes, now: now}
	for i := range c.nodes {
		n := &c.nodes[i]
		if n.MaxPods == 0 {
			n.MaxPods = DefaultMaxPods
		}
		if n.Spec == nil {
			n.Spec = &NodeSpec{Name: "node", Allocatable: n.Alloc}
		}
		n.HardTaints = hasHardTaints(n.Spec.Taints)
		n.SoftTaints = softTaints(n.Spec.Taints)
	}
	return c
}

func hasHardTaints(ts []Taint) bool {
	for _, t := range ts {
		if t.Effect == NoSchedule || t.Effect == NoExecute {
			return true
		}
	}
	return false
}

// softTaints counts the PreferNoSchedule taints, capped at MaxSoftTaints.
func softTaints(ts []Taint) uint8 {
	c := 0
	for _, t := range ts {
		if t.Effect == PreferNoSchedule {
			c++
		}
	}
	return uint8(min(c, MaxSoftTaints))
}
