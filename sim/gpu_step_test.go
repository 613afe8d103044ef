package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// referenceRunGPU is RunGPU's loop as it was before GPUStep (commit
// eddda8d), kept to check that the loop over GPUStep gives the same
// results bit for bit.
func referenceRunGPU(w *GPUWorkload, c *GPUCluster, s GPUScheduler, order []int32) (GPUResult, error) {
	capMilli := w.GPUCapacity() * GPUMilli
	res := GPUResult{Scheduler: s.Name(), Pods: len(order), GPUs: w.GPUCapacity()}
	if capMilli == 0 {
		return res, fmt.Errorf("gpu run %s: the cluster has no GPU", w.Name)
	}
	nodeFrag := make([]float64, len(c.Nodes))
	var fragSum float64
	var free int64
	for i := range c.Nodes {
		nodeFrag[i] = GPUFrag(c.Nodes[i].CPUFree(), &c.Nodes[i].GPU, c.Types)
		fragSum += nodeFrag[i]
		free += c.Nodes[i].GPU.TotalFree()
	}
	var allocSum, fragBin [curveBins]float64
	var cnt [curveBins]int32
	var arrived int64
	pct := 100 / float64(capMilli)
	for _, k := range order {
		p := &w.Pods[k]
		arrived += p.GPU.Total()
		ni, m := s.Schedule(c, int(k), p)
		if ni < 0 {
			res.Failed++
		} else {
			before := c.Nodes[ni].GPU.TotalFree()
			if !c.Place(ni, p, m) {
				return res, fmt.Errorf("gpu run %s: scheduler %s put pod %s on node %d (GPUs %08b), where it does not fit", w.Name, s.Name(), p.Name, ni, m)
			}
			res.Placed++
			n := &c.Nodes[ni]
			free -= before - n.GPU.TotalFree()
			f := GPUFrag(n.CPUFree(), &n.GPU, c.Types)
			fragSum += f - nodeFrag[ni]
			nodeFrag[ni] = f
		}
		bin := math.RoundToEven(float64(arrived) * pct)
		if bin < curveBins {
			b := int(bin)
			allocSum[b] += float64(capMilli-free) * pct
			fragBin[b] += fragSum * pct
			cnt[b]++
		}
	}
	res.ArrivedPct = float64(arrived) * pct
	res.AllocPct = float64(capMilli-free) * pct
	res.AllocCurve = make(Curve, CurvePoints)
	res.FragCurve = make(Curve, CurvePoints)
	for k := range CurvePoints {
		var a, f float64
		var n int32
		if cnt[k] > 0 {
			a, f, n = allocSum[k], fragBin[k], cnt[k]
		} else {
			for j := max(k-1, 0); j <= k+1; j++ {
				a, f, n = a+allocSum[j], f+fragBin[j], n+cnt[j]
			}
		}
		if n == 0 {
			res.AllocCurve[k], res.FragCurve[k] = math.NaN(), math.NaN()
			continue
		}
		res.AllocCurve[k], res.FragCurve[k] = a/float64(n), f/float64(n)
	}
	return res, nil
}

// sameResult compares two results field by field, floats by their bits
// (NaN included).
func sameResult(a, b GPUResult) bool {
	bits := func(c Curve) []uint64 {
		v := make([]uint64, len(c))
		for i, x := range c {
			v[i] = math.Float64bits(x)
		}
		return v
	}
	return a.Scheduler == b.Scheduler && a.Pods == b.Pods && a.Placed == b.Placed && a.Failed == b.Failed && a.GPUs == b.GPUs &&
		math.Float64bits(a.ArrivedPct) == math.Float64bits(b.ArrivedPct) && math.Float64bits(a.AllocPct) == math.Float64bits(b.AllocPct) &&
		reflect.DeepEqual(bits(a.AllocCurve), bits(b.AllocCurve)) && reflect.DeepEqual(bits(a.FragCurve), bits(b.FragCurve))
}

func TestGPUStepMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for it := range 300 {
		w := randomSmall(rng)
		for len(w.Pods) < 30 {
			w.Pods = append(w.Pods, randomSmall(rng).Pods...)
		}
		if w.GPUCapacity() == 0 {
			continue
		}
		order, rank := GPUArrivals(w, 1.3, uint64(it))
		base := NewGPUCluster(w, rank)
		for _, s := range []GPUScheduler{firstFit{}, lastFit{}} {
			got, err := RunGPUOrder(w, base, s, order)
			if err != nil {
				t.Fatal(err)
			}
			c := *base
			c.Nodes = append([]GPUNode(nil), base.Nodes...)
			want, err := referenceRunGPU(w, &c, s, order)
			if err != nil {
				t.Fatal(err)
			}
			if !sameResult(got, want) {
				t.Fatalf("case %d, %s: RunGPU over GPUStep differs from the reference loop:\n%+v\n%+v", it, s.Name(), got, want)
			}
		}
	}
}

func TestGPUStepDecisions(t *testing.T) {
	w := tinyWorkload()
	c := NewGPUCluster(w, nil)
	st, err := NewGPUStep(w, c, "manual", []int32{2, 0, 1, 3})
	if err != nil {
		t.Fatal(err)
	}
	// p2 (2 GPUs) on node 0 takes both devices
	if k, _ := st.Pod(); k != 2 {
		t.Fatalf("first pod %d; want 2", k)
	}
	if err := st.Decide(0, 0b11); err != nil {
		t.Fatal(err)
	}
	// p0 (a share) on node 0: no device left, an error, the pod stays
	if err := st.Decide(0, 0b01); err == nil {
		t.Fatal("p0 on a full node: no error")
	}
	if err := st.Decide(5, 0b01); err == nil {
		t.Fatal("node 5 of 2: no error")
	}
	if k, _ := st.Pod(); k != 0 || st.Arrived() != 1 {
		t.Fatalf("after errors: pod %d, arrived %d; want 0 and 1", k, st.Arrived())
	}
	if err := st.Decide(1, 0b01); err != nil {
		t.Fatal(err)
	}
	// p1 fails by choice (it would fit on node 1's device 1)
	if err := st.Decide(-1, 0); err != nil {
		t.Fatal(err)
	}
	if st.AllocatedMilli() != 2500 || st.ArrivedMilli() != 3500 {
		t.Errorf("allocated %d arrived %d; want 2500 and 3500", st.AllocatedMilli(), st.ArrivedMilli())
	}
	if r := st.Result(); r.AllocCurve != nil {
		t.Error("curves before the end")
	}
	if err := st.Decide(-1, 0); err != nil { // p3, CPU only
		t.Fatal(err)
	}
	if !st.Done() {
		t.Fatal("not done after 4 pods")
	}
	if err := st.Decide(-1, 0); err == nil {
		t.Error("a decision after the last pod: no error")
	}
	r := st.Result()
	if r.Placed != 2 || r.Failed != 2 || math.Abs(r.AllocPct-62.5) > 1e-12 {
		t.Errorf("placed %d failed %d alloc %v; want 2, 2, 62.5", r.Placed, r.Failed, r.AllocPct)
	}
	if _, err := NewGPUStep(w, c, "bad", []int32{4}); err == nil {
		t.Error("pod 4 of 4: no error")
	}
}
