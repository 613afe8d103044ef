package env

import (
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
