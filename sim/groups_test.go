package sim

import (
	"slices"
	"testing"
)

func zoned(name, zone string) NodeSpec {
	n := node(name, 4000, 8192)
	if zone != "" {
		n.Labels = map[string]string{LabelZone: zone}
	}
	return n
}

// sortedGroupNodes returns GroupNodes(g) sorted by slot.
func sortedGroupNodes(c *Cluster, g GroupID) []GroupNode {
	ns := slices.Clone(c.GroupNodes(g))
	slices.SortFunc(ns, func(a, b GroupNode) int { return int(a.Slot - b.Slot) })
	return ns
}

// TestGroupCounts follows the engine's group counts through binds, a
// finish and the removal of a node: group ids in order of first
// appearance, per node (slots renumbered after the removal) and per zone
// (none for a node without a zone label).
func TestGroupCounts(t *testing.T) {
	w := &Workload{
		Name: "groups",
		Nodes: []NodeSpec{
			zoned("n0", "a"), zoned("n1", "b"), zoned("n2", "a"), zoned("n3", ""),
		},
		Pods: []PodSpec{
			{Name: "solo", Requests: Resources{CPU: 100, Mem: 100}},
			{Name: "web-0", Group: "web", Requests: Resources{CPU: 100, Mem: 100}},
			{Name: "job-0", Group: "job", Requests: Resources{CPU: 100, Mem: 100}},
			{Name: "web-1", Group: "web", Requests: Resources{CPU: 100, Mem: 100}},
			{Name: "web-2", Group: "web", Requests: Resources{CPU: 100, Mem: 100}, Duration: Minute},
			{Name: "web-3", Group: "web", Requests: Resources{CPU: 100, Mem: 100}},
		},
		Events: []MachineEvent{{At: 2 * Minute, Kind: MachineRemove, Node: NodeSpec{Name: "n1"}}},
		End:    3 * Minute,
	}
	// web-0 and web-1 on n0, web-2 on n1, web-3 on n3 (no zone), job-0 on n2.
	place := map[string]int{"solo": 1, "web-0": 0, "web-1": 0, "web-2": 1, "web-3": 3, "job-0": 2}
	e, err := New(w, quietConfig(0))
	if err != nil {
		t.Fatal(err)
	}
	if got := []GroupID{e.Pod(0).Group, e.Pod(1).Group, e.Pod(2).Group, e.Pod(3).Group}; !slices.Equal(got, []GroupID{NoGroup, 0, 1, 0}) {
		t.Fatalf("group ids %v; want [-1 0 1 0]", got)
	}
	c := e.Cluster()
	check := func(when string, web []GroupNode, webZones []int32) {
		t.Helper()
		if got := sortedGroupNodes(c, 0); !slices.Equal(got, web) {
			t.Errorf("%s: web nodes %v; want %v", when, got, web)
		}
		if got := c.GroupZones(0); !slices.Equal(got, webZones) {
			t.Errorf("%s: web zones %v; want %v", when, got, webZones)
		}
		if err := e.CheckInvariants(); err != nil {
			t.Errorf("%s: %v", when, err)
		}
	}
	checked := false
	for {
		p, ok := e.Next()
		if !ok {
			break
		}
		e.Decide(place[p.Spec.Name])
		if e.Now() == 0 && p.Spec.Name == "web-3" {
			// zone a (id 0): n0's 2; zone b (id 1): n1's 1; n3 has no zone.
			check("all bound", []GroupNode{{0, 2}, {1, 1}, {3, 1}}, []int32{2, 1})
			checked = true
		}
	}
	if !checked {
		t.Fatal("web-3 was not placed at time 0")
	}
	// web-2 finished at 1 min; n1 left at 2 min, so n2 and n3 moved to
	// slots 1 and 2.
	check("end", []GroupNode{{0, 2}, {2, 1}}, []int32{2, 0})
	if got := c.GroupNodes(1); !slices.Equal(got, []GroupNode{{1, 1}}) {
		t.Errorf("job nodes %v; want [{1 1}] (n2, now at slot 1)", got)
	}
	if c.GroupNodes(NoGroup) != nil || c.GroupNodes(7) != nil || c.GroupZones(7) != nil {
		t.Error("unknown groups have counts")
	}
}

// TestNewClusterGroups checks NewCluster's failure-domain ids and
// AddGroupPods on a view.
func TestNewClusterGroups(t *testing.T) {
	specs := []NodeSpec{zoned("x", "b"), zoned("y", ""), zoned("z", "a"), zoned("w", "b")}
	nodes := make([]Node, len(specs))
	for i := range specs {
		nodes[i] = Node{Alloc: specs[i].Allocatable, Spec: &specs[i]}
	}
	c := NewCluster(0, nodes...)
	var zones []int32
	for _, n := range c.Nodes() {
		zones = append(zones, n.Domain[0])
	}
	if want := []int32{0, -1, 1, 0}; !slices.Equal(zones, want) || c.Domains(0) != 2 {
		t.Fatalf("zone ids %v, %d zones; want %v, 2", zones, c.Domains(0), want)
	}
	c.AddGroupPods(0, 3, 2)
	c.AddGroupPods(1, 3, 1)
	c.AddGroupPods(3, 3, 1)
	c.AddGroupPods(0, 3, -2)
	if got := sortedGroupNodes(c, 3); !slices.Equal(got, []GroupNode{{1, 1}, {3, 1}}) {
		t.Errorf("nodes %v; want [{1 1} {3 1}]", got)
	}
	if got := c.GroupZones(3); !slices.Equal(got, []int32{1}) {
		t.Errorf("zones %v; want [1]", got)
	}
	if c.GroupNodes(2) != nil {
		t.Error("group 2 has nodes")
	}
}
