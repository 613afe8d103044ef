package sim

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestGPUWasteHand checks the snapshot at 100% arrived on a hand-made run:
// node A (4 CPUs, 2 GPUs), node B (16 CPUs, 1 GPU), 3,000 milli-GPU.
//   - a 1-GPU pod of 4 CPUs on A: A's CPU is gone, its other GPU idle;
//   - a 600-milli share of 1 CPU on B: 400 milli left, less than any type asks;
//   - a 2-GPU pod fails (no node has two free GPUs): 3,600 arrived, the snapshot;
//   - a 1-GPU pod of 8 CPUs fails after the snapshot and is not counted.
//
// At the snapshot: allocated 1,600 (53.33%), failed 2,000 of shape 2-4
// GPUs (66.67%), A's idle GPU stranded by CPU (every type that fits the
// device asks more CPU than A's 0: 33.33%), B's 400 milli of no type's
// shape (13.33%), nothing usable.
func TestGPUWasteHand(t *testing.T) {
	w := &GPUWorkload{Name: "hand", Models: []string{"A"},
		Nodes: []GPUNodeSpec{{Name: "a", CPU: 4000, Mem: 1 << 20, GPUs: 2, Model: 0}, {Name: "b", CPU: 16000, Mem: 1 << 20, GPUs: 1, Model: 0}},
		Pods: []GPUPodSpec{
			{Name: "one", CPU: 4000, Mem: 1, GPU: GPURequest{Count: 1, Milli: GPUMilli}},
			{Name: "share", CPU: 1000, Mem: 1, GPU: GPURequest{Count: 1, Milli: 600}},
			{Name: "two", CPU: 2000, Mem: 1, GPU: GPURequest{Count: 2, Milli: GPUMilli}},
			{Name: "big-cpu", CPU: 8000, Mem: 1, GPU: GPURequest{Count: 1, Milli: GPUMilli}},
		}}
	c := NewGPUCluster(w, nil)
	st, err := NewGPUStep(w, c, "hand", []int32{0, 1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	decide := []struct {
		node int
		m    GPUMask
	}{{0, 1}, {1, 1}, {-1, 0}, {-1, 0}}
	for _, d := range decide {
		if err := st.Decide(d.node, d.m); err != nil {
			t.Fatal(err)
		}
	}
	r := st.Result()
	if r.Waste == nil {
		t.Fatal("no waste snapshot")
	}
	g := *r.Waste
	pct := func(milli float64) float64 { return milli / 3000 * 100 }
	want := GPUWaste{ArrivedPct: pct(3600), AllocPct: pct(1600), Failed: [GPUShapes]float64{3: pct(2000)}, FreeCPU: pct(1000), FreeShape: pct(400)}
	if !wasteNear(g, want) {
		t.Fatalf("waste %+v, want %+v", g, want)
	}
	// conservation: allocated + free = capacity
	if s := g.AllocPct + g.FreeIdle + g.FreePartial + g.FreeCPU + g.FreeShape; math.Abs(s-100) > 1e-9 {
		t.Errorf("allocated + free = %g%%, want 100", s)
	}
}

// TestGPUWasteUsableAndEnd: a run that never reaches 100% arrived is
// described at its end; an idle GPU on a node with CPU to spare is usable
// and idle, the rest of a shared one usable and partial.
func TestGPUWasteUsableAndEnd(t *testing.T) {
	w := oneNode(8000, 1<<20, 3, whole(1), share(250))
	c := NewGPUCluster(w, nil)
	st, err := NewGPUStep(w, c, "end", []int32{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Decide(0, 1); err != nil {
		t.Fatal(err)
	}
	if err := st.Decide(0, 2); err != nil {
		t.Fatal(err)
	}
	g := *st.Result().Waste
	// 3,000 milli: 1,250 taken; the third device idle, 750 of the second
	// left (the 250-milli type fits it)
	want := GPUWaste{ArrivedPct: 1250.0 / 30, AllocPct: 1250.0 / 30, FreeIdle: 1000.0 / 30, FreePartial: 750.0 / 30}
	if !wasteNear(g, want) {
		t.Fatalf("waste %+v, want %+v", g, want)
	}
}

// TestGPUWasteConserves: on random runs under first fit, the snapshot's
// allocation and free causes sum to the capacity, it is taken at 100%
// arrived or later, and its failed demand is at most the whole run's.
func TestGPUWasteConserves(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for it := range 300 {
		w := randomSmall(rng)
		if w.GPUDemand() == 0 {
			continue
		}
		order, rank := GPUArrivals(w, 1.3, uint64(it))
		c := NewGPUCluster(w, rank)
		st, err := NewGPUStep(w, c, "first-fit", order)
		if err != nil {
			t.Fatal(err)
		}
		var failed int64
		for !st.Done() {
			_, p := st.Pod()
			node, m := -1, GPUMask(0)
			for i := range c.Nodes {
				if c.Nodes[i].Fits(p) {
					node, m = i, c.Nodes[i].GPU.BestFit(p.GPU)
					break
				}
			}
			if node < 0 {
				failed += p.GPU.Total()
			}
			if err := st.Decide(node, m); err != nil {
				t.Fatal(err)
			}
		}
		r := st.Result()
		g := r.Waste
		if s := g.AllocPct + g.FreeIdle + g.FreePartial + g.FreeCPU + g.FreeShape; math.Abs(s-100) > 1e-9 {
			t.Fatalf("case %d: allocated + free = %g%%, want 100", it, s)
		}
		if g.ArrivedPct < 100 && math.Abs(g.ArrivedPct-r.ArrivedPct) > 1e-9 {
			t.Fatalf("case %d: snapshot at %g%% arrived before the end (%g%%)", it, g.ArrivedPct, r.ArrivedPct)
		}
		if g.FailedPct() > float64(failed)/float64(w.GPUCapacity()*GPUMilli)*100+1e-9 {
			t.Fatalf("case %d: %g%% failed at the snapshot, %d milli in the run", it, g.FailedPct(), failed)
		}
	}
}

func wasteNear(a, b GPUWaste) bool {
	near := func(x, y float64) bool { return math.Abs(x-y) < 1e-9 }
	for k := range a.Failed {
		if !near(a.Failed[k], b.Failed[k]) {
			return false
		}
	}
	return near(a.ArrivedPct, b.ArrivedPct) && near(a.AllocPct, b.AllocPct) && near(a.FreeIdle, b.FreeIdle) && near(a.FreePartial, b.FreePartial) &&
		near(a.FreeCPU, b.FreeCPU) && near(a.FreeShape, b.FreeShape)
}
