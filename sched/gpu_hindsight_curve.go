package sched

import (
	"fmt"
	"math"

	"github.com/kubesim/kubesim/sim"
)

// GPUHindsightCurve returns, at the arrived-% bins of bins, a lower bound on
// the mean over the bin's records of OPT (the most any placement of the
// arrivals so far allocates), binned as sim.RunGPU bins its records (the
// records of bin k, or of bins k-1..k+1 when k has none), in % of the GPU
// capacity; NaN at every other point. The records run over the arrival
// order order (sim.GPUArrivals).
//
// GPUHindsight packs two prefixes per bin: the one of the bin's first
// record and the one of its last. OPT grows with the prefix, so the first
// packing bounds every record of the bin; and an optimal packing of the
// last prefix without the pods that arrived after record r is a packing of
// record r's prefix, so the last packing minus the GPU demand arrived after
// r bounds record r too. Each record takes the larger of the two.
func GPUHindsightCurve(w *sim.GPUWorkload, order []int32, bins []int) (sim.Curve, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	capMilli := w.GPUCapacity() * sim.GPUMilli
	if capMilli == 0 {
		return nil, fmt.Errorf("gpu hindsight %s: the cluster has no GPU", w.Name)
	}
	pct := 100 / float64(capMilli)
	// arrived[r]: the GPU demand arrived up to record r (pod r included)
	arrived := make([]int64, len(order))
	bin := make([]int, len(order))
	var sum int64
	for r, k := range order {
		if k < 0 || int(k) >= len(w.Pods) {
			return nil, fmt.Errorf("gpu hindsight %s: arrival %d names pod %d of %d", w.Name, r, k, len(w.Pods))
		}
		sum += w.Pods[k].GPU.Total()
		arrived[r] = sum
		bin[r] = int(math.RoundToEven(float64(sum) * pct))
	}
	base := sim.NewGPUCluster(w, nil)
	out := make(sim.Curve, sim.CurvePoints)
	for k := range out {
		out[k] = math.NaN()
	}
	for _, k := range bins {
		if k < 0 || k >= sim.CurvePoints {
			return nil, fmt.Errorf("gpu hindsight %s: bin %d outside 0..%d", w.Name, k, sim.CurvePoints-1)
		}
		first, last := recordsOf(bin, k, k)
		if first < 0 {
			first, last = recordsOf(bin, k-1, k+1)
		}
		if first < 0 {
			continue
		}
		lo, err := gpuHindsight(w, base, order[:first+1])
		if err != nil {
			return nil, err
		}
		hi := lo
		if last > first {
			if hi, err = gpuHindsight(w, base, order[:last+1]); err != nil {
				return nil, err
			}
		}
		var total float64
		for r := first; r <= last; r++ {
			total += float64(max(lo.Milli, hi.Milli-(arrived[last]-arrived[r])))
		}
		out[k] = total / float64(last-first+1) * pct
	}
	return out, nil
}

// recordsOf returns the first and last record whose bin is in lo..hi, or
// -1, -1 when none is. The bins never decrease along the records (the
// arrived demand only grows), so the records between are in lo..hi too.
func recordsOf(bin []int, lo, hi int) (first, last int) {
	first, last = -1, -1
	for r, b := range bin {
		if b >= lo && b <= hi {
			if first < 0 {
				first = r
			}
			last = r
		}
	}
	return first, last
}
