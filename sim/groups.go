package sim

// GroupID is the dense id of a pod group (PodSpec.Group: an Alibaba app_du
// or job name) in one run: the engine numbers the distinct non-empty groups
// of Workload.Pods 0, 1, 2, ... in order of first appearance, once, when it
// is created. A pod without a group has NoGroup.
type GroupID int32

// NoGroup is the GroupID of a pod whose PodSpec.Group is empty.
const NoGroup GroupID = -1

// GroupNode is how many pods of one group are bound (Bound or Running) to
// the node at one slot of Cluster.Nodes.
type GroupNode struct {
	Slot int32
	Pods int32
}

// group is the cluster's count of one group's bound pods, per node and per
// zone, kept up to date on every bind and unbind so that a scheduler reads
// them without scanning pods (PodTopologySpread).
type group struct {
	nodes []GroupNode // the nodes with at least one pod of the group, in no particular order
	zones []int32     // pods per zone id (Node.Domain[0]); ids past the end count 0
}

// GroupNodes returns the nodes holding bound pods of group g with their
// counts, in no particular order; nil for a group with none (or an id the
// cluster has never seen). The slice is the cluster's own: read it, never
// write it, and do not keep it across decisions.
func (c *Cluster) GroupNodes(g GroupID) []GroupNode {
	if g < 0 || int(g) >= len(c.groups) {
		return nil
	}
	return c.groups[g].nodes
}

// GroupZones returns the number of bound pods of group g per zone id
// (Node.Domain[0], LabelZone): zone ids at or past its end have none. Pods
// on nodes without a zone label are in no zone. The slice is the cluster's
// own, as for GroupNodes.
func (c *Cluster) GroupZones(g GroupID) []int32 {
	if g < 0 || int(g) >= len(c.groups) {
		return nil
	}
	return c.groups[g].zones
}

// AddGroupPods adds k (negative to remove) pods of group g to the counts of
// the node at slot (GroupNodes, GroupZones). The engine counts every bind
// and unbind itself; this is for views built with NewCluster, in tests of
// schedulers and in offline tools. It panics on a slot out of range and
// when a count would become negative.
func (c *Cluster) AddGroupPods(slot int, g GroupID, k int32) {
	if slot < 0 || slot >= len(c.nodes) {
		panic("sim: AddGroupPods: slot out of range")
	}
	if g < 0 || k == 0 {
		return
	}
	c.addGroupPods(int32(slot), g, k)
}

// addGroupPods is AddGroupPods for a valid slot and group. A node holds at
// most MaxPods pods, so finding its entry scans at most as many entries as
// the group has nodes.
func (c *Cluster) addGroupPods(slot int32, g GroupID, k int32) {
	if int(g) >= len(c.groups) {
		c.groups = append(c.groups, make([]group, int(g)+1-len(c.groups))...)
	}
	gr := &c.groups[g]
	j := 0
	for j < len(gr.nodes) && gr.nodes[j].Slot != slot {
		j++
	}
	if j == len(gr.nodes) {
		gr.nodes = append(gr.nodes, GroupNode{Slot: slot})
	}
	e := &gr.nodes[j]
	e.Pods += k
	switch {
	case e.Pods < 0:
		panic("sim: negative group count")
	case e.Pods == 0: // swap-delete
		last := len(gr.nodes) - 1
		gr.nodes[j] = gr.nodes[last]
		gr.nodes = gr.nodes[:last]
	}
	if z := c.nodes[slot].Domain[0]; z >= 0 {
		if int(z) >= len(gr.zones) {
			gr.zones = append(gr.zones, make([]int32, int(z)+1-len(gr.zones))...)
		}
		gr.zones[z] += k
	}
}

// nodeRemoved renumbers the group counts after the node at slot left
// (Cluster.nodes shifted down by one from there). The node held no pods:
// its pods were unbound first, so no entry names slot itself. Node removals
// are rare, so this walks every group.
func (c *Cluster) nodeRemoved(slot int32) {
	for g := range c.groups {
		for j := range c.groups[g].nodes {
			if e := &c.groups[g].nodes[j]; e.Slot > slot {
				e.Slot--
			}
		}
	}
}

// groupIDs numbers the distinct non-empty groups of pods in order of first
// appearance and returns each pod's id (NoGroup for an empty group) and the
// number of groups.
func groupIDs(pods []PodSpec) ([]GroupID, int) {
	ids := make([]GroupID, len(pods))
	byName := make(map[string]GroupID)
	for i := range pods {
		name := pods[i].Group
		if name == "" {
			ids[i] = NoGroup
			continue
		}
		g, ok := byName[name]
		if !ok {
			g = GroupID(len(byName))
			byName[name] = g
		}
		ids[i] = g
	}
	return ids, len(byName)
}
