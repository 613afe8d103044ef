package sim

import (
	"math"
	"testing"
)

// gpus builds a GPU state from free milli per device.
func gpus(model int8, free ...int16) GPUs {
	g := GPUs{N: int8(len(free)), Model: model}
	copy(g.Free[:], free)
	g.Refresh()
	return g
}

func TestGPUsFitAndBestFit(t *testing.T) {
	tests := []struct {
		name string
		g    GPUs
		r    GPURequest
		fits bool
		best GPUMask
	}{
		// a CPU-only pod fits anywhere and takes no GPU
		{"cpu only", gpus(0, 0, 0), GPURequest{}, true, 0},
		// share of 300: devices 1 (500) and 2 (300) fit; 2 has the least free
		{"share best fit", gpus(0, 1000, 500, 300, 200), GPURequest{Count: 1, Milli: 300}, true, 0b0100},
		// equal free: the lower index wins
		{"share tie", gpus(0, 400, 400), GPURequest{Count: 1, Milli: 300}, true, 0b0001},
		// share of 600 needs one device with 600 free: none has
		{"share too big", gpus(0, 500, 500), GPURequest{Count: 1, Milli: 600}, false, 0},
		// two whole GPUs: the idle devices 1 and 3 (0 and 2 are partly used)
		{"whole first idle", gpus(0, 900, 1000, 0, 1000), GPURequest{Count: 2, Milli: 1000}, true, 0b1010},
		// 1,800 milli free in all but no idle device: a whole GPU does not fit
		{"whole fragmented", gpus(0, 900, 900), GPURequest{Count: 1, Milli: 1000}, false, 0},
		// model 1 only, the node is model 0
		{"model refused", gpus(0, 1000), GPURequest{Count: 1, Milli: 1000, Models: 1 << 1}, false, 0},
		// models {0, 1} include the node's 0
		{"model allowed", gpus(0, 1000), GPURequest{Count: 1, Milli: 500, Models: 0b11}, true, 0b1},
		// a model constraint refuses a node without GPUs
		{"model on cpu node", NewGPUs(0, 3), GPURequest{Count: 1, Milli: 500, Models: 0b1}, false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.g.Fits(tc.r); got != tc.fits {
				t.Errorf("Fits = %v; want %v", got, tc.fits)
			}
			if got := tc.g.BestFit(tc.r); got != tc.best {
				t.Errorf("BestFit = %04b; want %04b", got, tc.best)
			}
			if tc.best != 0 && !tc.g.CanTake(tc.r, tc.best) {
				t.Errorf("CanTake(BestFit) = false")
			}
		})
	}
}

func TestGPUsTakeRelease(t *testing.T) {
	g := gpus(0, 1000, 1000, 600, 1000)
	r := GPURequest{Count: 2, Milli: 1000}
	m := g.BestFit(r) // devices 0 and 1
	if m != 0b0011 {
		t.Fatalf("BestFit = %04b; want 0011", m)
	}
	g.Take(r, m)
	// 0 + 0 + 600 + 1000
	if g.TotalFree() != 1600 || g.Idle() != 1 {
		t.Fatalf("after Take: free %d idle %d; want 1600 and 1", g.TotalFree(), g.Idle())
	}
	if g.CanTake(r, 0b0011) {
		t.Errorf("CanTake on taken devices = true")
	}
	if g.CanTake(GPURequest{Count: 1, Milli: 500}, 0b10000) {
		t.Errorf("CanTake on a device the node lacks = true")
	}
	if got := g.Sorted(); got != [MaxGPUs]int16{1000, 600} {
		t.Errorf("Sorted = %v; want [1000 600 0 ...]", got)
	}
	g.Release(r, m)
	if g != gpus(0, 1000, 1000, 600, 1000) {
		t.Errorf("Release did not restore: %v", g)
	}
}

func TestGPUFrag(t *testing.T) {
	// three types: CPU-only (p 0.5), a share of 500 m with 4 CPUs (0.3),
	// two whole GPUs with 8 CPUs on model 1 only (0.2)
	types := []TypeShare{
		{PodType{CPU: 1000}, 0.5},
		{PodType{CPU: 4000, GPU: GPURequest{Count: 1, Milli: 500}}, 0.3},
		{PodType{CPU: 8000, GPU: GPURequest{Count: 2, Milli: 1000, Models: 0b10}}, 0.2},
	}
	tests := []struct {
		name string
		cpu  int64
		g    GPUs
		want float64
	}{
		// free 1000+400 = 1400; CPU-only: 0.5*1400; share: devices with
		// <500 free (400) are fragment: 0.3*400; two whole GPUs on model 0:
		// refused, 0.2*1400 => 700+120+280
		{"model 0", 16000, gpus(0, 1000, 400), 1100},
		// same on model 1: two whole GPUs need two idle devices, only one:
		// 0.2*1400 as well => 1100
		{"model 1 one idle", 16000, gpus(1, 1000, 400), 1100},
		// model 1, two idle: whole GPUs fit, no device short of 1000:
		// 0.5*2000 + 0.3*0 + 0.2*0 = 1000
		{"model 1 two idle", 16000, gpus(1, 1000, 1000), 1000},
		// 3 CPUs free: neither GPU type fits the CPU => all 2000 for each
		{"cpu short", 3000, gpus(1, 1000, 1000), 2000},
		// no free GPU milli: 0
		{"full", 16000, gpus(1, 0, 0), 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := GPUFrag(tc.cpu, &tc.g, types); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("GPUFrag = %v; want %v", got, tc.want)
			}
		})
	}
}

func TestTypicalPods(t *testing.T) {
	pod := func(cpu int64, n int8, m int16) GPUPodSpec {
		return GPUPodSpec{CPU: cpu, GPU: GPURequest{Count: n, Milli: m}}
	}
	// 6 of type A, 3 of B, 1 of C: A+B cover 9/10 < 0.95, so C is taken
	// too at 0.95; at 0.85 A alone (6/10) is short and A+B (9/10) reach
	// it, C is left out, the shares renormalised over 9: 6/9 and 3/9.
	var pods []GPUPodSpec
	for range 6 {
		pods = append(pods, pod(1000, 1, 500))
	}
	for range 3 {
		pods = append(pods, pod(2000, 0, 0))
	}
	pods = append(pods, pod(4000, 2, 1000))
	if got := TypicalPods(pods, 0.95); len(got) != 3 {
		t.Fatalf("0.95: %d types; want 3", len(got))
	}
	got := TypicalPods(pods, 0.85)
	if len(got) != 2 || got[0].CPU != 1000 || math.Abs(got[0].P-6.0/9) > 1e-12 || math.Abs(got[1].P-3.0/9) > 1e-12 {
		t.Errorf("0.85: %+v; want A 6/9, B 3/9", got)
	}
}

// tinyWorkload is two nodes with 2 GPUs each and four pods.
func tinyWorkload() *GPUWorkload {
	return &GPUWorkload{
		Name:   "tiny",
		Models: []string{"T4"},
		Nodes: []GPUNodeSpec{
			{Name: "a", CPU: 8000, Mem: 8192, GPUs: 2, Model: 0},
			{Name: "b", CPU: 8000, Mem: 8192, GPUs: 2, Model: 0},
		},
		Pods: []GPUPodSpec{
			{Name: "p0", CPU: 1000, Mem: 1024, GPU: GPURequest{Count: 1, Milli: 500}},
			{Name: "p1", CPU: 1000, Mem: 1024, GPU: GPURequest{Count: 1, Milli: 1000}},
			{Name: "p2", CPU: 1000, Mem: 1024, GPU: GPURequest{Count: 2, Milli: 1000}},
			{Name: "p3", CPU: 1000, Mem: 1024},
		},
	}
}

func TestGPUArrivalsInflate(t *testing.T) {
	w := tinyWorkload()
	// capacity 4,000 milli, the pods ask 500+1000+2000 = 3,500. At 1.3 the
	// target is 5,200: clones are appended while the demand plus the
	// drawn pod's milli per GPU (not its total: the artifact's rule, kept)
	// stays within it, so before the last clone the demand plus its milli
	// per GPU is at most 5,200, and the draw that stopped it would have
	// passed 5,200 with at most 1,000 more: the demand ends above 4,200.
	for seed := range uint64(20) {
		order, rank := GPUArrivals(w, 1.3, seed)
		var d int64
		for _, k := range order {
			d += w.Pods[k].GPU.Total()
		}
		if len(order) > 4 {
			last := w.Pods[order[len(order)-1]].GPU
			if before := d - last.Total(); before+int64(last.Milli) > 5200 {
				t.Errorf("seed %d: last clone added at demand %d + %d milli per GPU > 5200", seed, before, last.Milli)
			}
		}
		if d <= 4200 {
			t.Errorf("seed %d: demand %d; want > 4200", seed, d)
		}
		if len(rank) != 2 || rank[0]+rank[1] != 1 {
			t.Errorf("seed %d: rank %v; want a permutation of 0, 1", seed, rank)
		}
		seen := make(map[int32]bool)
		for _, k := range order[:4] {
			seen[k] = true
		}
		if len(seen) != 4 {
			t.Errorf("seed %d: the first 4 arrivals %v are not the 4 pods shuffled", seed, order[:4])
		}
	}
	// a list without GPU demand is not inflated (the artifact never stops)
	cpuOnly := &GPUWorkload{Name: "cpu", Nodes: w.Nodes, Models: w.Models, Pods: []GPUPodSpec{{Name: "c", CPU: 1}}}
	if order, _ := GPUArrivals(cpuOnly, 1.3, 1); len(order) != 1 {
		t.Errorf("CPU-only list: %d arrivals; want 1", len(order))
	}
	// at 0.5 the target is 2,000: pods are removed until the demand is at most that
	order, _ := GPUArrivals(w, 0.5, 1)
	var d int64
	for _, k := range order {
		d += w.Pods[k].GPU.Total()
	}
	if d > 2000 {
		t.Errorf("tuned down: demand %d; want <= 2000", d)
	}
}

// firstFit places each pod on the first node it fits, best-fit GPUs.
type firstFit struct{}

func (firstFit) Name() string { return "first" }
func (firstFit) Schedule(c *GPUCluster, _ int, p *GPUPodSpec) (int, GPUMask) {
	for i := range c.Nodes {
		if c.Nodes[i].Fits(p) {
			return i, c.Nodes[i].GPU.BestFit(p.GPU)
		}
	}
	return -1, 0
}

func TestRunGPUCurves(t *testing.T) {
	w := tinyWorkload()
	res, err := RunGPU(w, firstFit{}, GPURunConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Pods != 4 || res.Placed != 4 || res.Failed != 0 {
		t.Fatalf("pods %d placed %d failed %d; want 4 4 0", res.Pods, res.Placed, res.Failed)
	}
	// every pod fits, so allocation equals arrival at every record: the
	// demand 3,500 of 4,000 is 87.5% (bin 88, round half to even)
	if math.Abs(res.AllocPct-87.5) > 1e-9 || math.Abs(res.ArrivedPct-87.5) > 1e-9 {
		t.Errorf("alloc %v arrived %v; want 87.5", res.AllocPct, res.ArrivedPct)
	}
	if len(res.AllocCurve) != CurvePoints || len(res.FragCurve) != CurvePoints {
		t.Fatalf("curve lengths %d, %d; want %d", len(res.AllocCurve), len(res.FragCurve), CurvePoints)
	}
	if v := res.AllocCurve[88]; math.Abs(v-87.5) > 1e-9 {
		t.Errorf("alloc[88] = %v; want 87.5", v)
	}
	if !math.IsNaN(res.AllocCurve[130]) {
		t.Errorf("alloc[130] = %v; want NaN (no record near)", res.AllocCurve[130])
	}
	// an empty bin next to a full one takes the neighbours' mean: bin 89 is
	// empty and bin 88 holds the last records
	if math.IsNaN(res.AllocCurve[89]) {
		t.Errorf("alloc[89] = NaN; want the mean of bins 88-90")
	}
}

func TestRunGPURejectsMisfit(t *testing.T) {
	w := tinyWorkload()
	if _, err := RunGPU(w, misfit{}, GPURunConfig{}); err == nil {
		t.Fatal("a scheduler taking GPUs that are not free: no error")
	}
}

type misfit struct{}

func (misfit) Name() string { return "misfit" }
func (misfit) Schedule(_ *GPUCluster, _ int, p *GPUPodSpec) (int, GPUMask) {
	return 0, 0b100 // a device the node lacks
}

func TestGPUWorkloadValidate(t *testing.T) {
	bad := []func(w *GPUWorkload){
		func(w *GPUWorkload) { w.Nodes[0].GPUs = 9 },
		func(w *GPUWorkload) { w.Pods[1].GPU.Milli = 1001 },
		func(w *GPUWorkload) { w.Pods[2].GPU.Milli = 500 },     // two shared GPUs
		func(w *GPUWorkload) { w.Pods[3].GPU.Milli = 100 },     // milli without a GPU
		func(w *GPUWorkload) { w.Pods[0].GPU.Models = 1 << 5 }, // unknown model
		func(w *GPUWorkload) { w.Nodes = nil },
	}
	if err := tinyWorkload().Validate(); err != nil {
		t.Fatalf("valid workload: %v", err)
	}
	for i, f := range bad {
		w := tinyWorkload()
		f(w)
		if err := w.Validate(); err == nil {
			t.Errorf("case %d: no error", i)
		}
	}
}

func TestGPUCurveJSON(t *testing.T) {
	c := Curve{1.5, math.NaN()}
	b, err := c.MarshalJSON()
	if err != nil || string(b) != "[1.5000,null]" {
		t.Fatalf("MarshalJSON = %s, %v", b, err)
	}
	var back Curve
	if err := back.UnmarshalJSON(b); err != nil || back[0] != 1.5 || !math.IsNaN(back[1]) {
		t.Fatalf("UnmarshalJSON = %v, %v", back, err)
	}
}

func TestRunGPUAllocatesNothingPerPod(t *testing.T) {
	w := tinyWorkload()
	order, rank := GPUArrivals(w, 0, 1)
	base := NewGPUCluster(w, rank)
	allocs := testing.AllocsPerRun(20, func() {
		c := *base
		c.Nodes = append(c.Nodes[:0:0], base.Nodes...)
		for _, k := range order {
			p := &w.Pods[k]
			i, m := firstFit{}.Schedule(&c, int(k), p)
			if i >= 0 {
				c.Place(i, p, m)
			}
			_ = GPUFrag(c.Nodes[0].CPUFree(), &c.Nodes[0].GPU, c.Types)
		}
	})
	if allocs > 1 { // the copy of the nodes
		t.Errorf("%v allocations per run; want 1 (the node copy)", allocs)
	}
}

// TestGPUClusterRemoveUndoesPlace: a share, a whole GPU and a CPU-only pod
// placed on one node and removed in another order leave the node as it
// was, but for its generation, which every change bumps.
func TestGPUClusterRemoveUndoesPlace(t *testing.T) {
	c := &GPUCluster{Nodes: []GPUNode{{CPU: 32000, Mem: 65536, GPU: NewGPUs(2, 0)}}}
	before := c.Nodes[0]
	pods := []GPUPodSpec{
		{CPU: 4000, Mem: 1024, GPU: GPURequest{Count: 1, Milli: 300}},
		{CPU: 8000, Mem: 2048, GPU: GPURequest{Count: 1, Milli: GPUMilli}},
		{CPU: 2000, Mem: 512},
	}
	masks := []GPUMask{0b01, 0b10, 0}
	for k := range pods {
		if !c.Place(0, &pods[k], masks[k]) {
			t.Fatalf("pod %d does not fit", k)
		}
	}
	if n := c.Nodes[0]; n.CPUUsed != 14000 || n.GPU.Free != [MaxGPUs]int16{700, 0} || n.Tags[0] != 1 || n.Tags[1] != 1 {
		t.Fatalf("after placing: %+v", n)
	}
	for _, k := range []int{1, 2, 0} {
		c.Remove(0, &pods[k], masks[k])
	}
	after := c.Nodes[0]
	if after.Gen != 6 {
		t.Errorf("generation %d after three places and three removes; want 6", after.Gen)
	}
	after.Gen = before.Gen
	if after != before {
		t.Errorf("after removing: %+v; want %+v", after, before)
	}
}
