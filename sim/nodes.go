package sim

import "slices"

// nodeState is the engine's bookkeeping for a node, indexed by NodeID.
type nodeState struct {
	spec       NodeSpec
	slot       int32   // index in Cluster.nodes; -1 once removed
	pods       []int32 // pods bound to the node (Bound or Running)
	cpuOver    bool    // summed actual CPU exceeds allocatable
	underSince Time    // since when requested utilisation is below the scale-down threshold; -1 if not
	freedMark  bool    // listed in Engine.freedNodes
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
		Domain:     e.c.internDomains(spec.Labels),
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
	e.c.nodeRemoved(slot)
	e.maxFreeDirty = true
}
