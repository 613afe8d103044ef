package sim

import "fmt"

// CheckInvariants verifies the engine's bookkeeping and returns the first
// violation found: every node's summed requests fit its allocatable and pod
// limit; each node's Requested, Used and Pods equal the sums over the pods
// bound to it (conservation); every pod is in exactly one state and, while
// pending, in exactly one waiting place. It costs O(pods + nodes): for tests
// and debugging, not for the hot path.
func (e *Engine) CheckInvariants() error {
	for i := range e.c.nodes {
		n := &e.c.nodes[i]
		ns := e.nodes[n.ID]
		if int(ns.slot) != i {
			return fmt.Errorf("node %s at slot %d records slot %d", ns.spec.Name, i, ns.slot)
		}
		var req, used Resources
		for k, q := range ns.pods {
			p := &e.pods[q]
			if p.Node != n.ID || int(p.nodePos) != k || (p.State != Bound && p.State != Running) {
				return fmt.Errorf("node %s lists pod %s in state %v on node %d at %d", ns.spec.Name, p.Spec.Name, p.State, p.Node, p.nodePos)
			}
			req = req.Add(p.Spec.Requests)
			if p.State == Running {
				used = used.Add(p.use)
			}
		}
		switch {
		case req != n.Requested:
			return fmt.Errorf("node %s: requested %v, pods sum to %v", ns.spec.Name, n.Requested, req)
		case used != n.Used:
			return fmt.Errorf("node %s: used %v, running pods sum to %v", ns.spec.Name, n.Used, used)
		case int(n.Pods) != len(ns.pods):
			return fmt.Errorf("node %s: %d pods counted, %d listed", ns.spec.Name, n.Pods, len(ns.pods))
		case !n.Requested.Fits(n.Alloc):
			return fmt.Errorf("node %s: requested %v exceeds allocatable %v", ns.spec.Name, n.Requested, n.Alloc)
		case n.Pods > n.MaxPods:
			return fmt.Errorf("node %s: %d pods over the limit %d", ns.spec.Name, n.Pods, n.MaxPods)
		}
	}
	inActive := make([]int, len(e.pods))
	for _, id := range e.active.h {
		inActive[id]++
	}
	inUnsched := make([]int, len(e.pods))
	for k, id := range e.unsched {
		inUnsched[id]++
		if int(e.pods[id].unschedPos) != k {
			return fmt.Errorf("pod %s: unschedulable position %d, listed at %d", e.pods[id].Spec.Name, e.pods[id].unschedPos, k)
		}
	}
	pending, pendingHigh := 0, 0
	for i := range e.pods {
		p := &e.pods[i]
		bound := p.State == Bound || p.State == Running
		if bound != (p.Node >= 0) {
			return fmt.Errorf("pod %s: state %v with node %d", p.Spec.Name, p.State, p.Node)
		}
		if bound {
			ns := e.nodes[p.Node]
			if ns.slot < 0 || int(p.nodePos) >= len(ns.pods) || ns.pods[p.nodePos] != int32(i) {
				return fmt.Errorf("pod %s: not listed on its node %s", p.Spec.Name, ns.spec.Name)
			}
		}
		wantActive, wantUnsched := 0, 0
		if p.State == Pending {
			pending++
			if p.Spec.Priority >= High {
				pendingHigh++
			}
			switch p.wait {
			case waitActive:
				wantActive = 1
			case waitUnsched:
				wantUnsched = 1
			case waitBackoff:
			default:
				return fmt.Errorf("pod %s: pending but waiting nowhere", p.Spec.Name)
			}
		} else if p.wait != waitNone {
			return fmt.Errorf("pod %s: state %v but waiting in queue %d", p.Spec.Name, p.State, p.wait)
		}
		if inActive[i] != wantActive || inUnsched[i] != wantUnsched {
			return fmt.Errorf("pod %s: in the active queue %d times and the unschedulable list %d times (state %v, wait %d)",
				p.Spec.Name, inActive[i], inUnsched[i], p.State, p.wait)
		}
	}
	if pending != e.pending || pendingHigh != e.pendingHigh {
		return fmt.Errorf("%d pods pending (%d high-priority), counters say %d (%d)", pending, pendingHigh, e.pending, e.pendingHigh)
	}
	return e.checkGroups()
}

// checkGroups verifies the group counts (Cluster.GroupNodes, GroupZones)
// against a count of the bound pods.
func (e *Engine) checkGroups() error {
	type key struct {
		g  GroupID
		at int32 // slot, or zone id
	}
	perNode := map[key]int32{}
	perZone := map[key]int32{}
	for i := range e.pods {
		p := &e.pods[i]
		if p.Group < 0 || (p.State != Bound && p.State != Running) {
			continue
		}
		slot := e.nodes[p.Node].slot
		perNode[key{p.Group, slot}]++
		if z := e.c.nodes[slot].Domain[0]; z >= 0 {
			perZone[key{p.Group, z}]++
		}
	}
	entries, zoned := 0, 0
	for g := range e.c.groups {
		gr := &e.c.groups[g]
		for _, gn := range gr.nodes {
			if want := perNode[key{GroupID(g), gn.Slot}]; gn.Pods != want || want == 0 {
				return fmt.Errorf("group %d: %d pods counted on the node at slot %d, %d bound", g, gn.Pods, gn.Slot, want)
			}
			perNode[key{GroupID(g), gn.Slot}] = -1 // a second entry for the node fails above
			entries++
		}
		for z, k := range gr.zones {
			if want := perZone[key{GroupID(g), int32(z)}]; k != want {
				return fmt.Errorf("group %d: %d pods counted in zone %d, %d bound", g, k, z, want)
			}
			if k > 0 {
				zoned++
			}
		}
	}
	if entries != len(perNode) || zoned != len(perZone) {
		return fmt.Errorf("group counts cover %d nodes and %d zones, bound pods %d and %d", entries, zoned, len(perNode), len(perZone))
	}
	return nil
}
