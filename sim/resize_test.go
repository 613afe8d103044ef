package sim

import (
	"context"
	"reflect"
	"slices"
	"testing"
)

// TestResize: shrinking keeps the first nodes and drops the placements on
// the others; growing repeats the nodes with new names; w is unchanged.
func TestResize(t *testing.T) {
	w := &Workload{
		Name: "w",
		Nodes: []NodeSpec{
			{Name: "a", Allocatable: Resources{CPU: 4000, Mem: 4096}, Labels: map[string]string{LabelZone: "z1"}},
			{Name: "b", Allocatable: Resources{CPU: 2000, Mem: 2048}},
		},
		Pods: []PodSpec{
			{Name: "p0", Requests: Resources{CPU: 1000, Mem: 1024}},
			{Name: "p1", Requests: Resources{CPU: 1000, Mem: 1024}},
		},
		Initial: []Placement{{Pod: 0, Node: 0}, {Pod: 1, Node: 1}},
	}
	before := deepCopy(w)

	small, err := Resize(w, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(small.Nodes) != 1 || small.Nodes[0].Name != "a" {
		t.Errorf("shrunk nodes %+v; want [a]", small.Nodes)
	}
	if want := []Placement{{Pod: 0, Node: 0}}; !reflect.DeepEqual(small.Initial, want) {
		t.Errorf("shrunk placements %v; want %v", small.Initial, want)
	}

	big, err := Resize(w, 5)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range big.Nodes {
		names = append(names, n.Name)
	}
	if want := []string{"a", "b", "a~2", "b~2", "a~3"}; !reflect.DeepEqual(names, want) {
		t.Errorf("grown names %v; want %v", names, want)
	}
	if big.Nodes[4].Allocatable != w.Nodes[0].Allocatable || big.Nodes[4].Labels[LabelZone] != "z1" {
		t.Errorf("copy a~3 is %+v; want a's shape and labels", big.Nodes[4])
	}
	if err := big.Validate(); err != nil {
		t.Errorf("grown workload invalid: %v", err)
	}
	big.Nodes[2].Labels[LabelZone] = "changed"
	if !reflect.DeepEqual(w, before) {
		t.Error("Resize or a change to its result modified the original workload")
	}
	if _, err := Resize(w, 0); err == nil {
		t.Error("Resize to 0 nodes: no error")
	}
}

// TestResizeReplay: a pod that was warm on a dropped node is scheduled
// normally: on one 4-CPU node, p0 (warm) and p1 (3 CPU, its warm node gone)
// cannot both fit, so exactly one pod is never placed.
func TestResizeReplay(t *testing.T) {
	w := &Workload{
		Name: "w",
		Nodes: []NodeSpec{
			{Name: "a", Allocatable: Resources{CPU: 4000, Mem: 4096}},
			{Name: "b", Allocatable: Resources{CPU: 4000, Mem: 4096}},
		},
		Pods: []PodSpec{
			{Name: "p0", Requests: Resources{CPU: 2000, Mem: 1024}},
			{Name: "p1", Requests: Resources{CPU: 3000, Mem: 1024}},
		},
		Initial: []Placement{{Pod: 0, Node: 0}, {Pod: 1, Node: 1}},
		End:     10 * Second,
	}
	for _, tc := range []struct{ n, unsched int }{{2, 0}, {1, 1}} {
		r, err := Resize(w, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(context.Background(), r, DefaultConfig(), scripted{})
		if err != nil {
			t.Fatal(err)
		}
		if int(res.Unschedulable) != tc.unsched {
			t.Errorf("%d nodes: %d unschedulable; want %d", tc.n, res.Unschedulable, tc.unsched)
		}
	}
}

// deepCopy copies the parts of w that Resize could share.
func deepCopy(w *Workload) *Workload {
	c := *w
	c.Nodes = make([]NodeSpec, len(w.Nodes))
	for i, n := range w.Nodes {
		c.Nodes[i] = cloneSpec(n)
	}
	c.Pods = slices.Clone(w.Pods)
	c.Initial = slices.Clone(w.Initial)
	return &c
}
