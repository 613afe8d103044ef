package sched_test

import (
	"math"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/kubesim/kubesim/dataset"
	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

// openbWorkload is the default pod list on the 1,213 GPU nodes (testdata).
func openbWorkload(t *testing.T) *sim.GPUWorkload {
	t.Helper()
	_, src, _, _ := runtime.Caller(0)
	data := filepath.Join(filepath.Dir(src), "..", "dataset", "testdata", "openb", "default")
	tr, err := dataset.ReadOpenbCSV(filepath.Join(data, "openb_node_list_gpu_node.csv"), filepath.Join(data, "openb_pod_list_default.csv"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := tr.Workload()
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestGPUScoringMatchesSchedule replays the default pod list (the first
// 3,000 arrivals at 1.3x) choosing each node as Best over Scores and the
// GPUs with GPUs: every policy's result equals its Schedule's.
func TestGPUScoringMatchesSchedule(t *testing.T) {
	w := openbWorkload(t)
	order, rank := sim.GPUArrivals(w, 1.3, 42)
	order = order[:3000]
	base := sim.NewGPUCluster(w, rank)
	for _, name := range sched.GPUNames() {
		s, err := sched.NewGPU(name, 42)
		if err != nil {
			t.Fatal(err)
		}
		want, err := sim.RunGPUOrder(w, base, s, order)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := sched.NewGPUScoring(name, 42)
		if err != nil {
			t.Fatal(err)
		}
		c := *base
		c.Nodes = append([]sim.GPUNode(nil), base.Nodes...)
		st, err := sim.NewGPUStep(w, &c, name, order)
		if err != nil {
			t.Fatal(err)
		}
		var scores []int64
		for !st.Done() {
			k, p := st.Pod()
			scores = sc.Scores(&c, k, p, scores)
			i := sc.Best(&c, scores)
			var m sim.GPUMask
			if i >= 0 {
				m = sc.GPUs(&c, i, p)
			}
			if err := st.Decide(i, m); err != nil {
				t.Fatal(err)
			}
		}
		got := st.Result()
		if got.Placed != want.Placed || got.AllocPct != want.AllocPct || !sameBits(got.AllocCurve, want.AllocCurve) || !sameBits(got.FragCurve, want.FragCurve) {
			t.Errorf("%s: placed %d alloc %v; Schedule's %d %v", name, got.Placed, got.AllocPct, want.Placed, want.AllocPct)
		}
	}
}

// sameBits compares two curves bit for bit (NaN equal to NaN).
func sameBits(a, b sim.Curve) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}
