package sched

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"

	"github.com/kubesim/kubesim/sim"
)

// A placement in hindsight (issue 27's headroom). sim.GPUBound bounds from
// above OPT(P), the most milli-GPU any placement of a set of arrivals P can
// allocate at once. GPUHindsight bounds it from below: it packs P on the
// empty cluster knowing every pod in advance, free to place them in any
// order and to leave any pod out (CPU-only pods are left out: they only
// take room). Pods never leave in FGD's experiment, so such a packing is the
// end state of some placement of P, and its allocation is at most OPT(P).
// Between the two bounds lies what the best placement of P allocates; how
// wide the bracket is says how loose the upper bound may be, and a packing
// above a target says the target is reachable by some placement of those
// pods, if not by an online scheduler, which sees them one at a time.

// HindsightStrategy is one way GPUHindsight packs: an order of the pods and
// a rule that picks each pod's node.
type HindsightStrategy struct {
	// Order is "arrival" (the pods as given) or "whole" (pods of whole
	// GPUs first, more GPUs first, then the shares as given).
	Order string
	// Rule is "best-fit" (the node and device left with the least free
	// room), "fgd" or "fgd-tiers" (those schedulers' choice).
	Rule string
}

// HindsightStrategies are the strategies GPUHindsight tries, in order.
// Each greedy packing is then repaired (gpu_hindsight_repair.go). Measured
// at 100% arrived, seed 42, on five lists (docs/gpu.md): arrival/fgd-tiers
// was best on the default list, cpu250 and gpushare100, whole/fgd-tiers and
// arrival/fgd on multigpu50, arrival/best-fit on gpuspec33, and whole/fgd
// within 0.1 points of the best on three. Orders by decreasing size, with
// or without the pods that name models first, were never close (FFD leaves
// devices with gaps that no remaining share fits: 92-93% on the default
// list against 96.7%).
var HindsightStrategies = []HindsightStrategy{
	{"arrival", NameFGDTiers}, {"whole", NameFGDTiers}, {"arrival", NameFGD}, {"whole", NameFGD}, {"arrival", NameBestFit},
}

// HindsightResult is GPUHindsight's best packing.
type HindsightResult struct {
	Milli    int64             // milli-GPU allocated
	Strategy HindsightStrategy // the strategy that allocated it (the first of equals)
	Failed   int               // GPU pods of P left out by that strategy
}

// GPUHindsight packs the GPU pods among pods (indices into w.Pods, repeats
// allowed) on w's empty cluster with every strategy of HindsightStrategies
// and returns the best: a feasible placement, so a lower bound on what any
// placement of pods allocates.
func GPUHindsight(w *sim.GPUWorkload, pods []int32) (HindsightResult, error) {
	if err := w.Validate(); err != nil {
		return HindsightResult{}, err
	}
	return gpuHindsight(w, sim.NewGPUCluster(w, nil), pods)
}

// gpuHindsight is GPUHindsight on a validated workload, with its empty
// cluster base (copied, not modified) built once by the caller.
func gpuHindsight(w *sim.GPUWorkload, base *sim.GPUCluster, pods []int32) (HindsightResult, error) {
	gpuPods := make([]int32, 0, len(pods))
	for _, k := range pods {
		if k < 0 || int(k) >= len(w.Pods) {
			return HindsightResult{}, fmt.Errorf("gpu hindsight %s: pod index %d out of range", w.Name, k)
		}
		if w.Pods[k].GPU.Count > 0 {
			gpuPods = append(gpuPods, k)
		}
	}
	best := HindsightResult{Milli: -1}
	for _, s := range HindsightStrategies {
		order, err := hindsightOrder(w, gpuPods, s.Order)
		if err != nil {
			return HindsightResult{}, err
		}
		h, err := hindsightPack(w, base, order, s.Rule)
		if err != nil {
			return HindsightResult{}, err
		}
		if h.milli > best.Milli {
			best = HindsightResult{Milli: h.milli, Strategy: s, Failed: h.leftOut()}
		}
	}
	return best, nil
}

// hindsightOrder returns the pods in the named order (HindsightStrategy);
// ties keep the given order.
func hindsightOrder(w *sim.GPUWorkload, pods []int32, order string) ([]int32, error) {
	out := slices.Clone(pods)
	switch order {
	case "arrival":
	case "whole":
		slices.SortStableFunc(out, func(a, b int32) int {
			ga, gb := w.Pods[a].GPU, w.Pods[b].GPU
			if ga.Share() || gb.Share() {
				return cmp.Compare(b2i(ga.Share()), b2i(gb.Share()))
			}
			return cmp.Compare(gb.Count, ga.Count)
		})
	default:
		return nil, fmt.Errorf("gpu hindsight: unknown order %q", order)
	}
	return out, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// hindsightPack places order on a copy of base with the named rule,
// repairs the packing and returns it.
func hindsightPack(w *sim.GPUWorkload, base *sim.GPUCluster, order []int32, rule string) (*hindsightPacking, error) {
	c := *base
	c.Nodes = slices.Clone(base.Nodes)
	var f sim.GPUScheduler
	switch rule {
	case NameBestFit:
		f = hindsightBestFit{}
	case NameFGD, NameFGDTiers:
		var err error
		if f, err = NewGPU(rule, 0); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("gpu hindsight: unknown rule %q", rule)
	}
	h := newHindsightPacking(w, &c, order)
	for j, k := range order {
		p := &w.Pods[k]
		i, m := f.Schedule(&c, int(k), p)
		if i < 0 {
			continue
		}
		if !h.placeRaw(int32(j), i, m) {
			return nil, fmt.Errorf("gpu hindsight %s: rule %s put pod %s where it does not fit", w.Name, rule, p.Name)
		}
	}
	h.repair()
	return h, nil
}

// hindsightBestFit puts a pod where the least room is left after it: for a
// share, the device with the least free milli that fits, then the node with
// the least free milli, then the least free CPU share; for whole GPUs, the
// node left with the fewest idle devices, then the least free milli, then
// the least free CPU share. Ties go to the lowest node index.
type hindsightBestFit struct{}

func (hindsightBestFit) Name() string { return "hindsight-best-fit" }

func (hindsightBestFit) Schedule(c *sim.GPUCluster, _ int, p *sim.GPUPodSpec) (int, sim.GPUMask) {
	best, bestMask := -1, sim.GPUMask(0)
	var bk [3]float64
	for i := range c.Nodes {
		n := &c.Nodes[i]
		if !n.Fits(p) {
			continue
		}
		m := n.GPU.BestFit(p.GPU)
		k := [3]float64{float64(n.GPU.Idle() - int(p.GPU.Count)), float64(n.GPU.TotalFree() - p.GPU.Total()),
			float64(n.CPUFree()-p.CPU) / float64(max(n.CPU, 1))}
		if p.GPU.Share() {
			d := bits.TrailingZeros8(uint8(m))
			k[0] = float64(n.GPU.Free[d] - p.GPU.Milli)
		}
		if best < 0 || k[0] < bk[0] || k[0] == bk[0] && (k[1] < bk[1] || k[1] == bk[1] && k[2] < bk[2]) {
			best, bestMask, bk = i, m, k
		}
	}
	return best, bestMask
}
