package sched

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kubesim/kubesim/sim"
)

// oneGPUNodes is a workload of n nodes of one GPU each and the given
// shares (milli), all asking 1 CPU of the nodes' 16.
func oneGPUNodes(n int, shares ...int16) *sim.GPUWorkload {
	w := &sim.GPUWorkload{Name: "hand", Models: []string{"M0"}}
	for i := range n {
		w.Nodes = append(w.Nodes, sim.GPUNodeSpec{Name: string(rune('A' + i)), CPU: 16000, Mem: 65536, GPUs: 1, Model: 0})
	}
	for _, m := range shares {
		w.Pods = append(w.Pods, sim.GPUPodSpec{Name: "s", CPU: 1000, Mem: 1024, GPU: sim.GPURequest{Count: 1, Milli: m}})
	}
	return w
}

// checkPacking replays the packing's placements on a fresh cluster: every
// one must fit, and the nodes' usage and the allocated milli must match
// the packing's own.
func checkPacking(t *testing.T, h *hindsightPacking) {
	t.Helper()
	c := sim.NewGPUCluster(h.w, nil)
	var milli int64
	for j, i := range h.node {
		if i < 0 {
			continue
		}
		p := &h.w.Pods[h.pods[j]]
		if !c.Place(int(i), p, h.mask[j]) {
			t.Fatalf("slot %d (%+v) does not fit node %d devices %08b on replay", j, p.GPU, i, h.mask[j])
		}
		milli += p.GPU.Total()
	}
	if milli != h.milli {
		t.Fatalf("replay allocates %d milli, the packing says %d", milli, h.milli)
	}
	for i := range c.Nodes {
		a, b := &c.Nodes[i], &h.c.Nodes[i]
		if a.CPUUsed != b.CPUUsed || a.MemUsed != b.MemUsed || a.GPU.Free != b.GPU.Free || a.Pods != b.Pods {
			t.Fatalf("node %d: replay %+v, packing %+v", i, a, b)
		}
	}
	for s := range h.shapeRep {
		var n int32
		for i := range h.c.Nodes {
			if h.c.Nodes[i].Fits(&h.w.Pods[h.pods[h.shapeRep[s]]]) {
				n++
			}
		}
		if n != h.fitNodes[s] {
			t.Fatalf("shape %d fits %d nodes, the count says %d", s, n, h.fitNodes[s])
		}
	}
}

// TestHindsightRepairByHand: two one-GPU nodes hold a 300-milli share each
// and an 800-milli share is left out. The repair moves one 300 next to the
// other and puts the 800 on the device it freed: 1,400 milli, the optimum.
func TestHindsightRepairByHand(t *testing.T) {
	w := oneGPUNodes(2, 300, 300, 800)
	c := sim.NewGPUCluster(w, nil)
	h := newHindsightPacking(w, c, []int32{0, 1, 2})
	if !h.placeRaw(0, 0, 1) || !h.placeRaw(1, 1, 1) {
		t.Fatal("setup: the shares do not fit")
	}
	if got := h.repair(); got != 800 || h.milli != 1400 || h.leftOut() != 0 {
		t.Fatalf("repair gained %d, allocates %d, leaves %d out: want 800, 1400, 0", got, h.milli, h.leftOut())
	}
	if h.node[0] != h.node[1] || h.node[2] == h.node[0] {
		t.Errorf("nodes %v: want both 300s together and the 800 alone", h.node)
	}
	checkPacking(t, h)
}

// TestHindsightSwapOutByHand: one GPU holds a 600-milli share and a 700 is
// left out; nothing can move, so the 700 takes the 600's place (a gain of
// 100), and the 600 is left out.
func TestHindsightSwapOutByHand(t *testing.T) {
	w := oneGPUNodes(1, 600, 700)
	c := sim.NewGPUCluster(w, nil)
	h := newHindsightPacking(w, c, []int32{0, 1})
	if !h.placeRaw(0, 0, 1) {
		t.Fatal("setup: the share does not fit")
	}
	if got := h.repair(); got != 100 || h.milli != 700 || h.node[0] != -1 || h.node[1] != 0 {
		t.Fatalf("repair gained %d, allocates %d, nodes %v: want 100, 700, [-1 0]", got, h.milli, h.node)
	}
	checkPacking(t, h)
}

// TestHindsightRollback: moves undone by rollback leave the cluster and
// the slots as they were before them.
func TestHindsightRollback(t *testing.T) {
	w := oneGPUNodes(2, 300, 800, 800)
	c := sim.NewGPUCluster(w, nil)
	h := newHindsightPacking(w, c, []int32{0, 1, 2})
	if !h.placeRaw(0, 0, 1) || !h.placeRaw(1, 1, 1) {
		t.Fatal("setup")
	}
	before := make([]sim.GPUNode, len(c.Nodes))
	copy(before, c.Nodes)
	mark := len(h.log)
	h.remove(0)
	if !h.place(2, 0, 1) {
		t.Fatal("the 800 does not fit the freed device")
	}
	h.rollback(mark)
	for i := range c.Nodes {
		a, b := c.Nodes[i], before[i]
		if a.CPUUsed != b.CPUUsed || a.MemUsed != b.MemUsed || a.GPU.Free != b.GPU.Free || a.Pods != b.Pods || a.Tags != b.Tags {
			t.Fatalf("node %d after rollback %+v, before %+v", i, a, b)
		}
	}
	if h.node[0] != 0 || h.node[1] != 1 || h.node[2] != -1 || h.milli != 1100 || len(h.log) != mark {
		t.Fatalf("slots %v, milli %d, log %d: want [0 1 -1], 1100, %d", h.node, h.milli, len(h.log), mark)
	}
	checkPacking(t, h)
}

// TestHindsightFeasibleAndBelowTheBound: on random small workloads (pods
// pinned to a model included) every strategy's packing replays as valid,
// the best is at least every strategy's, and none exceeds sim.GPUBound,
// the upper bound on any placement of the same pods.
func TestHindsightFeasibleAndBelowTheBound(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 5))
	for trial := range 60 {
		w := randomGPUWorkload(r, 2+r.IntN(6), 10+r.IntN(40))
		for i := range w.Pods {
			if w.Pods[i].GPU.Count > 0 && r.IntN(4) == 0 {
				w.Pods[i].GPU.Models = 1 << uint(r.IntN(2))
			}
		}
		pods := make([]int32, len(w.Pods))
		for i := range pods {
			pods[i] = int32(i)
		}
		r.Shuffle(len(pods), func(i, j int) { pods[i], pods[j] = pods[j], pods[i] })
		best, err := GPUHindsight(w, pods)
		if err != nil {
			t.Fatal(err)
		}
		var gpuPods []int32
		for _, k := range pods {
			if w.Pods[k].GPU.Count > 0 {
				gpuPods = append(gpuPods, k)
			}
		}
		for _, s := range HindsightStrategies {
			order, err := hindsightOrder(w, gpuPods, s.Order)
			if err != nil {
				t.Fatal(err)
			}
			h, err := hindsightPack(w, sim.NewGPUCluster(w, nil), order, s.Rule)
			if err != nil {
				t.Fatal(err)
			}
			checkPacking(t, h)
			if h.milli > best.Milli {
				t.Fatalf("trial %d: %v packs %d, more than the best %d", trial, s, h.milli, best.Milli)
			}
		}
		ub, err := sim.GPUBound(w, pods)
		if err != nil {
			t.Fatal(err)
		}
		if float64(best.Milli) > ub+1e-6 {
			t.Fatalf("trial %d: hindsight %d milli above the upper bound %.1f", trial, best.Milli, ub)
		}
	}
}

// TestHindsightCurveByHand: one GPU (1,000 milli); shares of 990, 5 and 5
// arrive. Records: 99% (bin 99), 99.5% and 100% (both bin 100, rounding to
// even). Bin 100's first prefix packs 995, its last 1,000: record 1 takes
// max(995, 1,000 - 5) = 995, record 2 takes 1,000, a mean of 99.75%. Bin 99
// is record 0 alone: 99%. Bin 50 has no record and neither do 49 and 51:
// NaN, as is every bin not asked for.
func TestHindsightCurveByHand(t *testing.T) {
	w := oneGPUNodes(1, 990, 5, 5)
	c, err := GPUHindsightCurve(w, []int32{0, 1, 2}, []int{50, 99, 100})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(c[100]-99.75) > 1e-9 || math.Abs(c[99]-99) > 1e-9 {
		t.Errorf("bins 99, 100: %v, %v: want 99, 99.75", c[99], c[100])
	}
	for _, k := range []int{50, 98, 101, 130} {
		if !math.IsNaN(c[k]) {
			t.Errorf("bin %d: %v, want NaN", k, c[k])
		}
	}
	if _, err := GPUHindsightCurve(w, []int32{0, 3}, []int{100}); err == nil {
		t.Error("an arrival naming a pod the workload lacks: no error")
	}
	if _, err := GPUHindsightCurve(w, []int32{0}, []int{131}); err == nil {
		t.Error("bin 131: no error")
	}
}

// TestHindsightCurveBelowTheBoundCurve: on random workloads, at every bin
// asked for, the hindsight curve (a lower bound on OPT) is never above the
// bound curve of the same arrivals (an upper bound on it).
func TestHindsightCurveBelowTheBoundCurve(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 6))
	for trial := range 20 {
		w := randomGPUWorkload(r, 3+r.IntN(5), 30+r.IntN(40))
		order, _ := sim.GPUArrivals(w, 1.3, uint64(trial))
		hc, err := GPUHindsightCurve(w, order, []int{60, 80, 100, 120, 130})
		if err != nil {
			t.Fatal(err)
		}
		bc, err := sim.GPUBoundCurve(w, order, sim.GPUBoundOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for k := range hc {
			if !math.IsNaN(hc[k]) && hc[k] > bc[k]+1e-9 {
				t.Fatalf("trial %d bin %d: hindsight %.3f above the bound %.3f", trial, k, hc[k], bc[k])
			}
		}
	}
}
