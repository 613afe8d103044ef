package sim

// NewCluster returns a cluster view over the given node states at time now,
// for tests of schedulers and for offline tools. Nodes without a pod limit get
// DefaultMaxPods; HardTaints, SoftTaints and Domain are derived from
// Spec.Taints and Spec.Labels (failure-domain ids in order of first
// appearance, as the engine numbers them). The view has no pods of any group
// until AddGroupPods adds them. The view owns the slice.
func NewCluster(now Time, nodes ...Node) *Cluster {
	c := &Cluster{nodes: nodes, now: now, domains: [2]map[string]int32{{}, {}}}
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
		n.Domain = c.internDomains(n.Spec.Labels)
	}
	return c
}

// internDomains returns the failure-domain ids of a node with the given
// labels (LabelZone, LabelRack; -1 without the label), numbering values not
// seen before in order of appearance.
func (c *Cluster) internDomains(labels map[string]string) [2]int32 {
	dom := [2]int32{-1, -1}
	for lvl, key := range [2]string{LabelZone, LabelRack} {
		if v, ok := labels[key]; ok {
			d, seen := c.domains[lvl][v]
			if !seen {
				d = int32(len(c.domains[lvl]))
				c.domains[lvl][v] = d
			}
			dom[lvl] = d
		}
	}
	return dom
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
