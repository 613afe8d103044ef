package sched

import "github.com/kubesim/kubesim/sim"

// BestFit scores nodes by how little room the pod would leave on them: the
// best-fit rule of bin packing with a two-dimensional leftover measured as a
// Euclidean norm (the L2 norm-based greedy rule of Panigrahy et al., 2011,
// "Heuristics for Vector Bin Packing").
//
// For a candidate node with allocatable A, requested R (bound pods) and pod
// requests D, the leftover share of resource r after placement is
//
//	l_r = (A_r - R_r - D_r) * FineScale / A_r      (integer division, 0..FineScale)
//
// and the score is 2*FineScale^2 - (l_cpu^2 + l_mem^2): the smaller the
// leftover vector, the higher the score. A node left exactly full in both
// dimensions scores 2*FineScale^2; an empty node with a zero-request pod
// scores 0. Unlike MostAllocated it works on the pod's plain requests, at a
// resolution of 1/FineScale instead of 1/100, and squares each dimension so a
// node that would keep a large share of one resource free ranks below a node
// that would be tight in both.
type BestFit struct{}

var _ ScorePlugin = BestFit{}

// BestFitName is the plugin's name.
const BestFitName = "BestFit"

// FineScale is the resolution of kubesim's own score plugins (BestFit,
// Tetris): shares are computed in units of 1/FineScale.
const FineScale int64 = 10000

// Name returns BestFitName.
func (BestFit) Name() string { return BestFitName }

// Score writes 2*FineScale^2 minus the squared norm of each candidate's
// leftover shares after placement.
func (BestFit) Score(nodes []sim.Node, p *sim.PodSpec, cand []int32, dst []int64) bool {
	d := p.Requests
	for j, i := range cand {
		n := &nodes[i]
		lc := share(n.Alloc.CPU-n.Requested.CPU-d.CPU, n.Alloc.CPU)
		lm := share(n.Alloc.Mem-n.Requested.Mem-d.Mem, n.Alloc.Mem)
		dst[j] = 2*FineScale*FineScale - lc*lc - lm*lm
	}
	return true
}

// share returns x*FineScale/total (truncated) clamped to [0, FineScale],
// and 0 when total is not positive. Below shareFloatLimit it divides in
// float64, exactly as integer division would (the argument of percent, with
// quotients up to FineScale).
func share(x, total int64) int64 {
	if total <= 0 || x <= 0 {
		return 0
	}
	if x >= total {
		return FineScale
	}
	if total < shareFloatLimit {
		return int64(float64(x*FineScale) / float64(total))
	}
	return x * FineScale / total
}

// shareFloatLimit bounds the totals for which share divides in float64:
// below it, FineScale*total < 2^53.
const shareFloatLimit = (1 << 53) / FineScale
