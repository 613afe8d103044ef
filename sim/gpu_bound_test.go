package sim

import (
	"math"
	"math/rand/v2"
	"testing"
)

func boundOf(t *testing.T, w *GPUWorkload) float64 {
	t.Helper()
	pods := make([]int32, len(w.Pods))
	for i := range pods {
		pods[i] = int32(i)
	}
	v, err := GPUBound(w, pods)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func oneNode(cpu, mem int64, gpus int8, pods ...GPUPodSpec) *GPUWorkload {
	return &GPUWorkload{Name: "hand", Models: []string{"A", "B"},
		Nodes: []GPUNodeSpec{{Name: "n", CPU: cpu, Mem: mem, GPUs: gpus, Model: 0}}, Pods: pods}
}

func share(m int16) GPUPodSpec {
	return GPUPodSpec{CPU: 1000, Mem: 1000, GPU: GPURequest{Count: 1, Milli: m}}
}

func whole(k int8) GPUPodSpec {
	return GPUPodSpec{CPU: 1000, Mem: 1000, GPU: GPURequest{Count: k, Milli: GPUMilli}}
}

func pinA() GPUPodSpec {
	return GPUPodSpec{CPU: 1, Mem: 1, GPU: GPURequest{Count: 1, Milli: GPUMilli, Models: 1 << 0}}
}

func TestGPUBoundHand(t *testing.T) {
	big := int64(1 << 20)
	tests := []struct {
		name   string
		w      *GPUWorkload
		lo, hi float64 // the bound must lie in [lo, hi]; lo is the optimum
	}{
		// two shares of 600 cannot share one GPU: 600, not 1,000 (the
		// within-one-GPU constraint; the demand 1,200 and the capacity
		// 1,000 would allow 1,000)
		{"two 600s on one GPU", oneNode(big, big, 1, share(600), share(600)), 600, 600},
		// 810 + 500 on one GPU: only one of them, the larger (810). The
		// relaxation drops the shape counts inside a node, so the device
		// may hold half of {810} and half of {500, 500}: 905, its LP gap
		{"810 and 500", oneNode(big, big, 1, share(810), share(500)), 810, 905},
		// 810 + 190 fill the GPU exactly
		{"810 and 190", oneNode(big, big, 1, share(810), share(190)), 1000, 1000},
		// a 2-GPU pod on a node with one GPU never fits; the share does
		{"too many GPUs", oneNode(big, big, 1, whole(2), share(300)), 300, 300},
		// a model-B pod on a model-A node: nothing
		{"model refused", oneNode(big, big, 2, GPUPodSpec{CPU: 1, Mem: 1, GPU: GPURequest{Count: 1, Milli: 1000, Models: 1 << 1}}), 0, 0},
		// CPU: 4 cores, two 1-GPU pods of 3 cores each: one fits (1,000);
		// the relaxation prices CPU linearly per class, so it may
		// take 4/3 of a pod: at most 1,333.4
		{"cpu binds", oneNode(4000, big, 2, GPUPodSpec{CPU: 3000, Mem: 1, GPU: GPURequest{Count: 1, Milli: 1000}},
			GPUPodSpec{CPU: 3000, Mem: 1, GPU: GPURequest{Count: 1, Milli: 1000}}), 1000, 1333.4},
		// a pod larger than the node's memory never fits
		{"memory too big", oneNode(big, 100, 1, GPUPodSpec{CPU: 1, Mem: 101, GPU: GPURequest{Count: 1, Milli: 1000}}), 0, 0},
		// whole GPUs: 2+2 on a 3-GPU node, only one pair fits (2,000);
		// a 1-GPU pod fills the third
		{"whole packing", oneNode(big, big, 3, whole(2), whole(2), whole(1)), 3000, 3000},
		{"whole pairs", oneNode(big, big, 3, whole(2), whole(2)), 2000, 2000},
		// three whole GPUs pinned to model A, one A GPU and one B GPU: one
		// of them (the counting bound: their eligible class has 1,000 milli)
		{"pinned excess", &GPUWorkload{Name: "pinned", Models: []string{"A", "B"},
			Nodes: []GPUNodeSpec{{Name: "a", CPU: big, Mem: big, GPUs: 1, Model: 0}, {Name: "b", CPU: big, Mem: big, GPUs: 1, Model: 1}},
			Pods:  []GPUPodSpec{pinA(), pinA(), pinA(), share(300)}}, 1300, 1300},
		// CPU-only pods take no GPU and are left out
		{"cpu only", oneNode(big, big, 1, GPUPodSpec{CPU: 5}, share(400)), 400, 400},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := boundOf(t, tc.w)
			if got < tc.lo-1e-6 || got > tc.hi+1e-6 {
				t.Errorf("bound %.6f; want in [%g, %g]", got, tc.lo, tc.hi)
			}
		})
	}
}

// bruteOpt is the most milli-GPU any placement of w's pods (a subset, each
// on one node and devices) can allocate: exhaustive search.
func bruteOpt(w *GPUWorkload) int64 {
	c := NewGPUCluster(w, nil)
	var best int64
	var rec func(i int, alloc int64)
	rec = func(i int, alloc int64) {
		if i == len(w.Pods) {
			best = max(best, alloc)
			return
		}
		rec(i+1, alloc) // left out
		p := &w.Pods[i]
		for ni := range c.Nodes {
			n := &c.Nodes[ni]
			if !n.Fits(p) {
				continue
			}
			for m := GPUMask(0); ; m++ {
				if n.GPU.CanTake(p.GPU, m) {
					saved := *n
					c.Place(ni, p, m)
					rec(i+1, alloc+p.GPU.Total())
					*n = saved
				}
				if m == GPUMask(1<<uint(n.GPU.N))-1 || p.GPU.Count == 0 {
					break
				}
			}
		}
	}
	rec(0, 0)
	return best
}

// randomSmall is a random cluster of 1-3 nodes (1-4 GPUs, two models) and
// 1-7 pods.
func randomSmall(rng *rand.Rand) *GPUWorkload {
	w := &GPUWorkload{Name: "rand", Models: []string{"A", "B"}}
	for i := range 1 + rng.IntN(3) {
		w.Nodes = append(w.Nodes, GPUNodeSpec{Name: string(rune('a' + i)), CPU: int64(2000 + 2000*rng.IntN(4)),
			Mem: int64(2000 + 2000*rng.IntN(4)), GPUs: int8(1 + rng.IntN(4)), Model: int8(rng.IntN(2))})
	}
	shares := []int16{100, 250, 300, 500, 600, 750, 810}
	for i := range 1 + rng.IntN(7) {
		p := GPUPodSpec{Name: string(rune('p' + i)), CPU: int64(500 * rng.IntN(8)), Mem: int64(500 * rng.IntN(8))}
		switch rng.IntN(4) {
		case 0: // CPU only
		case 1, 2:
			p.GPU = GPURequest{Count: 1, Milli: shares[rng.IntN(len(shares))]}
		default:
			p.GPU = GPURequest{Count: int8(1 + rng.IntN(3)), Milli: GPUMilli}
		}
		if p.GPU.Count > 0 && rng.IntN(4) == 0 {
			p.GPU.Models = GPUModels(1 + rng.IntN(3))
		}
		w.Pods = append(w.Pods, p)
	}
	return w
}

func TestGPUBoundBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	gap := 0.0
	for it := range 400 {
		w := randomSmall(rng)
		opt := bruteOpt(w)
		b := boundOf(t, w)
		if b < float64(opt)-1e-6 {
			t.Fatalf("case %d: bound %.3f below the optimum %d\n%+v", it, b, opt, w)
		}
		gap += b - float64(opt)
	}
	t.Logf("mean gap over 400 random clusters: %.1f milli-GPU", gap/400)
}

// TestGPUBoundCurveAboveSchedulers runs a few placement rules on random
// small clusters with inflated arrivals and checks every curve point
// against the bound's.
func TestGPUBoundCurveAboveSchedulers(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for it := range 200 {
		w := randomSmall(rng)
		if w.GPUCapacity() == 0 {
			continue
		}
		for _, inflate := range []float64{0, 1.3} {
			order, rank := GPUArrivals(w, inflate, uint64(it))
			bc, err := GPUBoundCurve(w, order, GPUBoundOptions{Iters: it % 2 * 20})
			if err != nil {
				t.Fatal(err)
			}
			base := NewGPUCluster(w, rank)
			for _, s := range []GPUScheduler{firstFit{}, lastFit{}} {
				res, err := RunGPUOrder(w, base, s, order)
				if err != nil {
					t.Fatal(err)
				}
				for k := range CurvePoints {
					a, b := res.AllocCurve[k], bc[k]
					if math.IsNaN(a) != math.IsNaN(b) {
						t.Fatalf("case %d: %s at %d: alloc %v, bound %v: NaN in one only", it, s.Name(), k, a, b)
					}
					if a > b+1e-9 {
						t.Fatalf("case %d: %s at %d%%: alloc %.4f above the bound %.4f", it, s.Name(), k, a, b)
					}
				}
			}
		}
	}
}

// lastFit places each pod on the last node it fits.
type lastFit struct{}

func (lastFit) Name() string { return "last" }
func (lastFit) Schedule(c *GPUCluster, _ int, p *GPUPodSpec) (int, GPUMask) {
	for i := len(c.Nodes) - 1; i >= 0; i-- {
		if c.Nodes[i].Fits(p) {
			return i, c.Nodes[i].GPU.BestFit(p.GPU)
		}
	}
	return -1, 0
}

func TestGPUBoundErrors(t *testing.T) {
	w := tinyWorkload()
	if _, err := GPUBound(w, []int32{7}); err == nil {
		t.Error("pod index 7 of 4: no error")
	}
	if _, err := GPUBoundCurve(w, []int32{-1}, GPUBoundOptions{}); err == nil {
		t.Error("pod index -1: no error")
	}
	noGPU := &GPUWorkload{Name: "cpu", Nodes: []GPUNodeSpec{{Name: "a", CPU: 1, Mem: 1, Model: -1}}}
	if _, err := GPUBoundCurve(noGPU, nil, GPUBoundOptions{}); err == nil {
		t.Error("a cluster without GPUs: no error")
	}
}

func BenchmarkGPUBound(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	w := randomSmall(rng)
	for len(w.Nodes) < 200 {
		w.Nodes = append(w.Nodes, randomSmall(rng).Nodes...)
	}
	for len(w.Pods) < 2000 {
		w.Pods = append(w.Pods, randomSmall(rng).Pods...)
	}
	order, _ := GPUArrivals(w, 1.3, 1)
	b.ResetTimer()
	for range b.N {
		if _, err := GPUBoundCurve(w, order, GPUBoundOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
