package sim

import (
	"fmt"
	"math"
)

// Curves of the bound (gpu_bound.go). OPT is monotone in the prefix, so a bound at the end of a prefix
// bounds every shorter one: GPUBoundCurve evaluates L at a few points per
// arrived-% bin and gives each record of RunGPU's binning the smallest bound
// at or after it (capped by its placeable demand, and by the counting bound
// of pods that name GPU models, pinnedBound, at or after it), then bins the
// records as RunGPU does. Every scheduler's allocation curve on the same arrival order
// lies at or below it, record by record and so bin by bin.

// GPUBoundOptions tunes GPUBoundCurve; the zero value takes the defaults.
type GPUBoundOptions struct {
	// PerBin is the number of evaluation points per arrived-% bin (at
	// equal record counts, the last at the bin's end); 0: 2.
	PerBin int
	// FullEvery is how often (in evaluation points, from the largest
	// prefix down) the search tries every DFF threshold, the others only
	// the last best one; 0: 8.
	FullEvery int
	// Iters is the subgradient steps after the search at each point; 0:
	// none (on the openb lists they never improved on the search).
	Iters int
}

// gpuBoundIters is GPUBound's subgradient steps after the search.
const gpuBoundIters = 300

// GPUBound returns an upper bound, in milli-GPU, on the GPUs that any
// placement of the pods pods (indices into w.Pods, repeats allowed) on w's
// empty cluster can allocate.
func GPUBound(w *GPUWorkload, pods []int32) (float64, error) {
	if err := w.Validate(); err != nil {
		return 0, err
	}
	b := newGPUBound(w)
	n := make([]float64, len(b.shapes))
	var demand, capMilli int64
	for _, k := range pods {
		if k < 0 || int(k) >= len(w.Pods) {
			return 0, fmt.Errorf("gpu bound %s: pod index %d out of range", w.Name, k)
		}
		if s := b.shapeOf[k]; s >= 0 {
			n[s]++
			demand += w.Pods[k].GPU.Total()
		}
	}
	capMilli = w.GPUCapacity() * GPUMilli
	pb := newPinnedBound(b)
	for t, c := range n {
		pb.add(t, c*b.shapes[t].g*GPUMilli)
	}
	v := math.Min(math.Min(float64(demand), float64(capMilli)), float64(demand)-pb.excess())
	return math.Min(v, b.bound(n, true, gpuBoundIters)*GPUMilli), nil
}

// GPUBoundCurve returns the upper bound on the allocation curve of every
// scheduler that RunGPU runs on w in the arrival order order (GPUArrivals):
// a curve binned as RunGPU bins its records, in % of the GPU capacity.
func GPUBoundCurve(w *GPUWorkload, order []int32, opts GPUBoundOptions) (Curve, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	capMilli := w.GPUCapacity() * GPUMilli
	if capMilli == 0 {
		return nil, fmt.Errorf("gpu bound %s: the cluster has no GPU", w.Name)
	}
	perBin, every := opts.PerBin, opts.FullEvery
	if perBin <= 0 {
		perBin = 2
	}
	if every <= 0 {
		every = 8
	}
	iters := max(opts.Iters, 0)
	b := newGPUBound(w)
	pct := 100 / float64(capMilli)
	// the records: arrived demand (binning) and placeable demand (a cap)
	nrec := len(order)
	bins := make([]int, nrec)
	cum := make([]float64, nrec)    // placeable demand, capped by the capacity
	dem := make([]float64, nrec)    // placeable demand
	pinned := make([]float64, nrec) // placeable demand minus the pinned excess (pinnedBound)
	pb := newPinnedBound(b)
	var arrived, placeable int64
	for i, k := range order {
		if k < 0 || int(k) >= len(w.Pods) {
			return nil, fmt.Errorf("gpu bound %s: pod index %d out of range", w.Name, k)
		}
		p := &w.Pods[k]
		arrived += p.GPU.Total()
		if s := b.shapeOf[k]; s >= 0 {
			placeable += p.GPU.Total()
			pb.add(int(s), float64(p.GPU.Total()))
		}
		pinned[i] = float64(placeable) - pb.excess()
		dem[i] = float64(placeable)
		cum[i] = math.Min(dem[i], float64(capMilli))
		bins[i] = int(math.RoundToEven(float64(arrived) * pct))
	}
	// the evaluation points: perBin per bin at equal record counts
	var points []int
	for i := 0; i < nrec; {
		j := i
		for j < nrec && bins[j] == bins[i] {
			j++
		}
		for s := 1; s <= perBin; s++ {
			if e := i + (j-i)*s/perBin - 1; e >= i && (len(points) == 0 || points[len(points)-1] < e) {
				points = append(points, e)
			}
		}
		i = j
	}
	// from the last point down, warm-started; below the first point where
	// the bound reaches the demand, the demand is the bound
	rec := make([]float64, nrec)
	copy(rec, cum)
	n := make([]float64, len(b.shapes))
	counts := func(e int) {
		clear(n)
		for i := 0; i <= e; i++ {
			if s := b.shapeOf[order[i]]; s >= 0 {
				n[s]++
			}
		}
	}
	// where the bound is only the capacity (the top of an inflated run),
	// probe every probeStride-th point to skip most of it: the records
	// after the start keep their demand capped by the capacity, a valid
	// bound
	start := len(points) - 1
	for pi := start; pi >= 0; pi -= probeStride {
		counts(points[pi])
		if b.bound(n, true, 0)*GPUMilli < float64(capMilli)-1e-6 {
			break
		}
		start = pi
	}
	if start < 0 {
		return binRecords(withPinned(rec, pinned), bins, pct), nil
	}
	counts(points[start])
	upto := points[start]
	suffix := math.Inf(1)
	trivial := true
	for pi := start; pi >= 0; pi-- {
		e := points[pi]
		for ; upto > e; upto-- {
			if s := b.shapeOf[order[upto]]; s >= 0 {
				n[s]--
			}
		}
		// every DFF while the bound is only the capacity (the search near
		// the last best finds nothing better there), else now and then
		full := trivial || (start-pi)%every == 0
		v := b.bound(n, full, iters) * GPUMilli
		trivial = v >= float64(capMilli)-1e-6
		suffix = math.Min(suffix, v)
		lo := 0
		if pi > 0 {
			lo = points[pi-1] + 1
		}
		for i := lo; i <= e; i++ {
			rec[i] = math.Min(cum[i], suffix)
		}
		if suffix >= dem[e] {
			break // every earlier record: its demand
		}
	}
	return binRecords(withPinned(rec, pinned), bins, pct), nil
}

// withPinned caps each record's bound by the counting bound of every
// record at or after it (OPT grows with the prefix) and returns rec.
func withPinned(rec, pinned []float64) []float64 {
	s := math.Inf(1)
	for i := len(rec) - 1; i >= 0; i-- {
		s = math.Min(s, pinned[i])
		rec[i] = math.Min(rec[i], s)
	}
	return rec
}

// probeStride is the step of GPUBoundCurve's probes over the points where
// the bound is the capacity.
const probeStride = 8

// binRecords bins per-record milli-GPU values as RunGPU bins its records.
func binRecords(rec []float64, bins []int, pct float64) Curve {
	var sum [curveBins]float64
	var cnt [curveBins]int32
	for i := range rec {
		if bins[i] < curveBins {
			sum[bins[i]] += rec[i] * pct
			cnt[bins[i]]++
		}
	}
	return binCurve(&sum, &cnt)
}

// binCurve turns per-bin sums and counts into RunGPU's curve: the mean of
// bin k, or of bins k-1..k+1 when k is empty, NaN when those are too.
func binCurve(sum *[curveBins]float64, cnt *[curveBins]int32) Curve {
	c := make(Curve, CurvePoints)
	for k := range CurvePoints {
		var a float64
		var n int32
		if cnt[k] > 0 {
			a, n = sum[k], cnt[k]
		} else {
			for j := max(k-1, 0); j <= k+1; j++ {
				a, n = a+sum[j], n+cnt[j]
			}
		}
		if n == 0 {
			c[k] = math.NaN()
			continue
		}
		c[k] = a / float64(n)
	}
	return c
}
