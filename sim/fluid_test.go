package sim

import (
	"math"
	"reflect"
	"slices"
	"testing"
)

// fullCopy copies w down to every slice, map and pointer that Fluid could
// reach, so that a change through any of them shows in a DeepEqual.
func fullCopy(w *Workload) *Workload {
	c := *w
	c.Nodes = make([]NodeSpec, len(w.Nodes))
	for i, n := range w.Nodes {
		c.Nodes[i] = cloneSpec(n)
	}
	c.Pods = slices.Clone(w.Pods)
	for i := range c.Pods {
		p := &c.Pods[i]
		p.Tolerations = slices.Clone(p.Tolerations)
		p.Usage = slices.Clone(p.Usage)
		p.After = slices.Clone(p.After)
		if a := p.Affinity; a != nil {
			cp := Affinity{Required: make([]Term, len(a.Required)), Preferred: slices.Clone(a.Preferred)}
			for j, t := range a.Required {
				cp.Required[j] = slices.Clone(t)
			}
			p.Affinity = &cp
		}
	}
	c.Events = slices.Clone(w.Events)
	for i := range c.Events {
		c.Events[i].Node = cloneSpec(c.Events[i].Node)
	}
	c.Initial = slices.Clone(w.Initial)
	return &c
}

// TestFluidCapacity: the node's capacity is the peak, per resource, of the
// live nodes' sums, with the engine's rules for events.
func TestFluidCapacity(t *testing.T) {
	a, b := node("a", 4000, 4096), node("b", 2000, 8192)
	b.MaxPods = 5
	big := node("big", 16000, 1024)
	big.MaxPods = 200
	add := func(at Time, n NodeSpec) MachineEvent { return MachineEvent{At: at, Kind: MachineAdd, Node: n} }
	del := func(at Time, name string) MachineEvent {
		return MachineEvent{At: at, Kind: MachineRemove, Node: NodeSpec{Name: name}}
	}
	cases := []struct {
		name   string
		nodes  []NodeSpec
		events []MachineEvent
		want   Resources
		pods   int32
	}{
		// 4000+2000, 4096+8192; 110 (0 means the default) + 5.
		{"initial nodes", []NodeSpec{a, b}, nil, Resources{CPU: 6000, Mem: 12288}, 115},
		// a leaves and comes back: counted once.
		{"down and up", []NodeSpec{a, b}, []MachineEvent{del(Second, "a"), add(2*Second, a)}, Resources{CPU: 6000, Mem: 12288}, 115},
		// b leaves at 1 s, big joins at 2 s: CPU peaks at 2 s (4000+16000),
		// memory and pods at 0 (12288, 115; later 5120 and 310 for pods).
		{"peaks at different times", []NodeSpec{a, b}, []MachineEvent{add(2*Second, big), del(Second, "b")},
			Resources{CPU: 20000, Mem: 12288}, 310},
		// Same time: index order, as in the engine. Remove b then add big:
		// the peak after both is a+big; had big come first, all three.
		{"ties in index order", []NodeSpec{a, b}, []MachineEvent{del(Second, "b"), add(Second, big)},
			Resources{CPU: 20000, Mem: 12288}, 310},
		{"ties, add first", []NodeSpec{a, b}, []MachineEvent{add(Second, big), del(Second, "b")},
			Resources{CPU: 22000, Mem: 13312}, 315},
		// Adding a live name and removing an absent one change nothing.
		{"ignored events", []NodeSpec{a}, []MachineEvent{add(Second, a), del(Second, "nobody")}, Resources{CPU: 4000, Mem: 4096}, 110},
		// No initial node: the joining node's capacity from time 0.
		{"no initial nodes", nil, []MachineEvent{add(Hour, b)}, Resources{CPU: 2000, Mem: 8192}, 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := &Workload{Name: "w", Nodes: tc.nodes, Events: tc.events, Pods: []PodSpec{pod("p", 0, 100, 100, 0)}}
			f, err := Fluid(w)
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Nodes) != 1 || len(f.Events) != 0 {
				t.Fatalf("%d nodes, %d events; want 1 and 0", len(f.Nodes), len(f.Events))
			}
			if n := f.Nodes[0]; n.Allocatable != tc.want || n.MaxPods != tc.pods {
				t.Errorf("allocatable %v, pod limit %d; want %v and %d", n.Allocatable, n.MaxPods, tc.want, tc.pods)
			}
		})
	}
}

// TestFluidPodLimitCap: a summed pod limit beyond int32 is capped.
func TestFluidPodLimitCap(t *testing.T) {
	a, b := node("a", 1000, 1024), node("b", 1000, 1024)
	a.MaxPods, b.MaxPods = math.MaxInt32, math.MaxInt32
	f, err := Fluid(&Workload{Nodes: []NodeSpec{a, b}})
	if err != nil {
		t.Fatal(err)
	}
	if f.Nodes[0].MaxPods != math.MaxInt32 {
		t.Errorf("pod limit %d; want %d", f.Nodes[0].MaxPods, math.MaxInt32)
	}
}

// TestFluidWorkload: the pods are w's in order without node affinity, the
// node has no taints or labels, the warm start is on the one node, and w
// is unchanged, also after the result is modified.
func TestFluidWorkload(t *testing.T) {
	tainted := node("tainted", 4000, 4096)
	tainted.Taints = []Taint{{Key: "dedicated", Value: "online", Effect: NoSchedule}}
	tainted.Labels = map[string]string{LabelZone: "z1", LabelRack: "r1"}
	picky := pod("picky", Second, 1000, 1024, 0)
	picky.Affinity = &Affinity{
		Required:  []Term{{{Key: LabelZone, Op: OpIn, Values: []string{"z2"}}}},
		Preferred: []PreferredTerm{{Weight: 10, Term: Term{{Key: LabelRack, Op: OpExists}}}},
	}
	picky.Tolerations = []Toleration{{Key: "dedicated", Exists: true}}
	picky.Usage = []UsagePoint{{Use: Resources{CPU: 500, Mem: 512}}}
	dep := pod("dep", 0, 100, 100, Second)
	dep.After = []int32{0}
	w := &Workload{
		Name:    "w",
		Nodes:   []NodeSpec{tainted, node("plain", 2000, 2048)},
		Pods:    []PodSpec{pod("w0", 0, 1000, 1024, 10*Second), picky, dep, pod("w1", 0, 1000, 1024, 0)},
		Events:  []MachineEvent{{At: Second, Kind: MachineRemove, Node: NodeSpec{Name: "plain"}}},
		End:     Minute,
		Initial: []Placement{{Pod: 3, Node: 1}, {Pod: 0, Node: 0}},
	}
	before := fullCopy(w)
	f, err := Fluid(w)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Validate(); err != nil {
		t.Fatalf("fluid workload invalid: %v", err)
	}
	n := f.Nodes[0]
	if n.Name != FluidNode || len(n.Taints) != 0 || len(n.Labels) != 0 {
		t.Errorf("fluid node %+v; want %q without taints or labels", n, FluidNode)
	}
	if f.Name != "w@fluid" || f.End != Minute || len(f.Events) != 0 {
		t.Errorf("name %q, end %v, %d events; want w@fluid, 60s, none", f.Name, f.End, len(f.Events))
	}
	if want := []Placement{{Pod: 3, Node: 0}, {Pod: 0, Node: 0}}; !reflect.DeepEqual(f.Initial, want) {
		t.Errorf("initial %v; want %v", f.Initial, want)
	}
	if len(f.Pods) != len(w.Pods) {
		t.Fatalf("%d pods; want %d", len(f.Pods), len(w.Pods))
	}
	for i := range f.Pods {
		got, want := f.Pods[i], w.Pods[i]
		if got.Affinity != nil {
			t.Errorf("pod %s keeps affinity %+v", got.Name, got.Affinity)
		}
		want.Affinity = nil
		if !reflect.DeepEqual(got, want) {
			t.Errorf("pod %d: %+v; want %+v", i, got, want)
		}
	}
	if !reflect.DeepEqual(w, before) {
		t.Error("Fluid modified its workload")
	}
	f.Pods[1].Name = "changed"
	f.Initial[0].Pod = 2
	f.Nodes[0].Allocatable.CPU = 1
	if !reflect.DeepEqual(w, before) {
		t.Error("a change to the fluid workload modified the original")
	}
}

// TestFluidReplay compares cluster and fluid replays by hand, first-fit,
// no startup latency, pods running to the end (60 s):
//   - fragmentation: two 4-CPU nodes, pods of 3, 3 and 2 CPU at 0. On the
//     cluster each node keeps 1 CPU after a 3: the 2 is never placed. On
//     8 CPU all three fit.
//   - affinity: a pod requiring zone z2, which no node has, is never
//     placed on the cluster and placed on the fluid node.
//   - warm start: 3 CPU warm on each node, then 2 CPU arrives: as the
//     first case, both warm pods start on the fluid node too (warm 2).
//   - pod limit: nodes of 1 pod each, three 1-CPU pods: the limit is summed
//     (2), not dropped, so one pod is left on the cluster and on the fluid
//     node although CPU would fit all three.
//   - anomaly: pods of 3, 3, 2, 1 and 1 CPU: on the cluster the 2 waits
//     and the 1s take the nodes' last CPU (1 unschedulable); on the fluid
//     node 3+3+2 fill it and both 1s wait (2): not a strict lower bound.
func TestFluidReplay(t *testing.T) {
	two := []NodeSpec{node("a", 4000, 4096), node("b", 4000, 4096)}
	picky := pod("picky", 0, 1000, 512, 0)
	picky.Affinity = &Affinity{Required: []Term{{{Key: LabelZone, Op: OpIn, Values: []string{"z2"}}}}}
	one := func(name string) NodeSpec { n := node(name, 4000, 4096); n.MaxPods = 1; return n }
	cases := []struct {
		name            string
		nodes           []NodeSpec
		pods            []PodSpec
		initial         []Placement
		cluster, fluid  int64
		clusterW, warmF int64
	}{
		{"fragmentation", two, []PodSpec{pod("p3", 0, 3000, 512, 0), pod("q3", 0, 3000, 512, 0), pod("p2", 0, 2000, 512, 0)}, nil, 1, 0, 0, 0},
		{"affinity", two, []PodSpec{picky, pod("p1", 0, 1000, 512, 0)}, nil, 1, 0, 0, 0},
		{"warm start", two, []PodSpec{pod("w3", 0, 3000, 512, 0), pod("v3", 0, 3000, 512, 0), pod("p2", 0, 2000, 512, 0)},
			[]Placement{{Pod: 0, Node: 0}, {Pod: 1, Node: 1}}, 1, 0, 2, 2},
		{"pod limit", []NodeSpec{one("a"), one("b")}, []PodSpec{pod("x", 0, 1000, 512, 0), pod("y", 0, 1000, 512, 0), pod("z", 0, 1000, 512, 0)}, nil, 1, 1, 0, 0},
		{"anomaly", two, []PodSpec{pod("p3", 0, 3000, 512, 0), pod("q3", 0, 3000, 512, 0), pod("p2", 0, 2000, 512, 0),
			pod("p1", 0, 1000, 512, 0), pod("q1", 0, 1000, 512, 0)}, nil, 1, 2, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := &Workload{Name: tc.name, Nodes: tc.nodes, Pods: tc.pods, Initial: tc.initial, End: Minute}
			f, err := Fluid(w)
			if err != nil {
				t.Fatal(err)
			}
			cfg := quietConfig(0)
			_, rc := mustRun(t, w, cfg, scripted{})
			e, rf := mustRun(t, f, FluidConfig(cfg), scripted{})
			if err := e.CheckInvariants(); err != nil {
				t.Fatal(err)
			}
			if rc.Unschedulable != tc.cluster || rf.Unschedulable != tc.fluid {
				t.Errorf("unschedulable: cluster %d, fluid %d; want %d and %d", rc.Unschedulable, rf.Unschedulable, tc.cluster, tc.fluid)
			}
			if rc.WarmPods != tc.clusterW || rf.WarmPods != tc.warmF {
				t.Errorf("warm pods: cluster %d, fluid %d; want %d and %d", rc.WarmPods, rf.WarmPods, tc.clusterW, tc.warmF)
			}
			if rc.Pods != rf.Pods {
				t.Errorf("pods: cluster %d, fluid %d; want equal", rc.Pods, rf.Pods)
			}
		})
	}
}

// TestFluidSynthetic: the relaxation of a synthetic workload (taints,
// labels, warm start) replays with the invariants kept, every warm
// placement accepted, and its capacity the cluster's.
func TestFluidSynthetic(t *testing.T) {
	o := DefaultSyntheticOptions(12)
	o.Pods = 1500
	o.Load = 1.5
	w, err := Synthetic(o)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 80 {
		w.Initial = append(w.Initial, Placement{Pod: int32(i), Node: int32(i % len(w.Nodes))})
	}
	f, err := Fluid(w)
	if err != nil {
		t.Fatal(err)
	}
	var sum Resources
	for _, n := range w.Nodes {
		sum = sum.Add(n.Allocatable)
	}
	if f.Nodes[0].Allocatable != sum || f.Nodes[0].MaxPods != int32(12*DefaultMaxPods) {
		t.Errorf("fluid node %v, %d pods; want %v, %d", f.Nodes[0].Allocatable, f.Nodes[0].MaxPods, sum, 12*DefaultMaxPods)
	}
	cfg := DefaultConfig()
	cfg.Autoscaler.Enabled = true
	cfg.Autoscaler.Template = node("tmpl", 4000, 4096)
	cfg = FluidConfig(cfg)
	if cfg.Autoscaler.Enabled {
		t.Fatal("FluidConfig left the autoscaler on")
	}
	e, err := New(f, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := scripted{}
	for {
		p, ok := e.Next()
		if !ok {
			break
		}
		e.Decide(s.Schedule(e.Cluster(), p))
	}
	if err := e.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	r := e.Result()
	if r.WarmPods != 80 || r.WarmRejected != 0 || r.NodesMax != 1 {
		t.Errorf("warm %d, refused %d, max nodes %d; want 80, 0, 1", r.WarmPods, r.WarmRejected, r.NodesMax)
	}
	if _, rc := mustRun(t, w, DefaultConfig(), s); rc.Pods != r.Pods {
		t.Errorf("pods: cluster %d, fluid %d; want equal", rc.Pods, r.Pods)
	}
}

// TestFluidErrors: an invalid workload, and one that never has a node.
func TestFluidErrors(t *testing.T) {
	bad := &Workload{Name: "bad", Nodes: []NodeSpec{node("a", 0, 1024)}}
	if _, err := Fluid(bad); err == nil {
		t.Error("invalid workload: no error")
	}
	if _, err := Fluid(&Workload{Name: "empty", Pods: []PodSpec{pod("p", 0, 1, 1, 0)}}); err == nil {
		t.Error("no nodes: no error")
	}
}
