package env

import (
	"fmt"
	"slices"
	"testing"

	"github.com/kubesim/kubesim/sim"
)

// TestPinnedArrived: on nodes of models A, B and C, the pods decided so
// far that allow some models but not all count for each model they allow:
// a 2-GPU pod pinned to B (2,000 milli), a half-GPU pod allowed on A|B
// (500 for each), a pod allowed on all three models and an unconstrained
// one (not counted), a CPU-only pod and a pod allowed on B and a model no
// node has (counted for B alone). After the six decisions: A 500, B 3,500,
// C 0; before any, 0; a node without GPUs (model -1) 0.
func TestPinnedArrived(t *testing.T) {
	one := sim.GPURequest{Count: 1, Milli: sim.GPUMilli}
	w := &sim.GPUWorkload{Name: "pinned", Models: []string{"A", "B", "C", "D"},
		Nodes: []sim.GPUNodeSpec{
			{Name: "a", CPU: 64000, Mem: 262144, GPUs: 4, Model: 0},
			{Name: "b", CPU: 64000, Mem: 262144, GPUs: 4, Model: 1},
			{Name: "c", CPU: 64000, Mem: 262144, GPUs: 4, Model: 2},
		},
		Pods: []sim.GPUPodSpec{
			{Name: "b2", CPU: 1000, Mem: 1024, GPU: sim.GPURequest{Count: 2, Milli: sim.GPUMilli, Models: 1 << 1}},
			{Name: "ab", CPU: 1000, Mem: 1024, GPU: sim.GPURequest{Count: 1, Milli: 500, Models: 1<<0 | 1<<1}},
			{Name: "abc", CPU: 1000, Mem: 1024, GPU: sim.GPURequest{Count: 1, Milli: sim.GPUMilli, Models: 1<<0 | 1<<1 | 1<<2}},
			{Name: "any", CPU: 1000, Mem: 1024, GPU: one},
			{Name: "cpu", CPU: 1000, Mem: 1024},
			{Name: "bd", CPU: 1000, Mem: 1024, GPU: sim.GPURequest{Count: 1, Milli: sim.GPUMilli, Models: 1<<1 | 1<<3}},
		}}
	e, err := NewGPUEnv(GPUConfig{Select: "fgd", FailPenalty: 1}, w)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Reset(1); err != nil {
		t.Fatal(err)
	}
	for m := range int8(3) {
		if v := e.PinnedArrived(m); v != 0 {
			t.Fatalf("before any decision: model %d has %d milli pinned", m, v)
		}
	}
	for done := false; !done; {
		_, _, done, _, err = e.Step(e.Best())
		if err != nil {
			t.Fatal(err)
		}
	}
	for m, want := range []int64{500, 3500, 0} {
		if got := e.PinnedArrived(int8(m)); got != want {
			t.Errorf("model %s: %d milli pinned; want %d", w.Models[m], got, want)
		}
	}
	if e.PinnedArrived(-1) != 0 {
		t.Error("a node without GPUs has pinned demand")
	}
}

// TestObsPinned: with obs_pinned each node row has an 18th column, the
// pinned demand of its model over the model's capacity (before every
// decision: PinnedArrived(model) / (4 GPUs x 1000) here), and the other 17
// columns, the pod features, the mask and the prior are those of the
// environment without it, decision for decision.
func TestObsPinned(t *testing.T) {
	one := sim.GPURequest{Count: 1, Milli: sim.GPUMilli}
	w := &sim.GPUWorkload{Name: "pinned", Models: []string{"A", "B", "C"},
		Nodes: []sim.GPUNodeSpec{
			{Name: "a", CPU: 64000, Mem: 262144, GPUs: 4, Model: 0},
			{Name: "b", CPU: 64000, Mem: 262144, GPUs: 4, Model: 1},
			{Name: "c", CPU: 64000, Mem: 262144, GPUs: 4, Model: 2},
			{Name: "cpu", CPU: 64000, Mem: 262144},
		}}
	for i := range 8 {
		w.Pods = append(w.Pods,
			sim.GPUPodSpec{Name: fmt.Sprintf("b%d", i), CPU: 1000, Mem: 1024, GPU: sim.GPURequest{Count: 1, Milli: 500, Models: 1 << 1}},
			sim.GPUPodSpec{Name: fmt.Sprintf("ab%d", i), CPU: 1000, Mem: 1024, GPU: sim.GPURequest{Count: 1, Milli: sim.GPUMilli, Models: 1<<0 | 1<<1}},
			sim.GPUPodSpec{Name: fmt.Sprintf("any%d", i), CPU: 1000, Mem: 1024, GPU: one})
	}
	base := GPUConfig{Select: "fgd", FailPenalty: 1, Prior: "fgd", PriorScale: 5}
	with := base
	with.ObsPinned = true
	if base.NodeFeatures() != GPUNodeFeatures || with.NodeFeatures() != GPUNodeFeatures+1 {
		t.Fatalf("widths %d and %d", base.NodeFeatures(), with.NodeFeatures())
	}
	e0, err := NewGPUEnv(base, w)
	if err != nil {
		t.Fatal(err)
	}
	e1, err := NewGPUEnv(with, w)
	if err != nil {
		t.Fatal(err)
	}
	o0, err := e0.Reset(4)
	if err != nil {
		t.Fatal(err)
	}
	o1, err := e1.Reset(4)
	if err != nil {
		t.Fatal(err)
	}
	d := GPUNodeFeatures
	seen := 0.0
	for step := 0; ; step++ {
		if len(o1.Nodes) != o1.N*(d+1) || len(o0.Nodes) != o0.N*d {
			t.Fatalf("step %d: rows of %d and %d values for %d nodes", step, len(o1.Nodes), len(o0.Nodes), o1.N)
		}
		for i := range o1.N {
			r0, r1 := o0.Nodes[i*d:(i+1)*d], o1.Nodes[i*(d+1):(i+1)*(d+1)]
			if !slices.Equal(r0, r1[:d]) {
				t.Fatalf("step %d node %d: columns differ", step, i)
			}
			want := 0.0
			if i < 3 {
				want = float64(e1.PinnedArrived(int8(i))) / 4000
			}
			if r1[GPUNodePinned] != want {
				t.Fatalf("step %d node %d: pinned %v; want %v", step, i, r1[GPUNodePinned], want)
			}
			seen = max(seen, want)
		}
		if !slices.Equal(o0.Pod, o1.Pod) || !slices.Equal(o0.Mask, o1.Mask) || !slices.Equal(o0.Prior, o1.Prior) {
			t.Fatalf("step %d: pod, mask or prior differ", step)
		}
		a := e0.Best()
		var done bool
		if o0, _, done, _, err = e0.Step(a); err != nil {
			t.Fatal(err)
		}
		if o1, _, _, _, err = e1.Step(a); err != nil {
			t.Fatal(err)
		}
		if done {
			break
		}
	}
	// by the end model B has 8 x 500 + 8 x 1,000 (the A|B pods) = 12,000
	// milli pinned, 3x its capacity; the last observation saw at least 2.5
	if got := e1.PinnedArrived(1); got != 12000 || seen < 2.5 {
		t.Errorf("model B: %d milli pinned, largest feature seen %v", got, seen)
	}
}
