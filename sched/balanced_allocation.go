package sched

import (
	"math"

	"github.com/kubesim/kubesim/sim"
)

// NodeResourcesBalancedAllocation is kube-scheduler's
// NodeResourcesBalancedAllocation score plugin: it favours nodes whose CPU and
// memory requested shares, after placing the pod, are close to each other
// (BalancedAllocation). Unlike NodeResourcesFit it uses the pod's plain
// requests, and like upstream it skips pods that request nothing at all
// (best-effort pods, kubernetes issue 129138).
type NodeResourcesBalancedAllocation struct{}

var _ ScorePlugin = NodeResourcesBalancedAllocation{}

// NodeResourcesBalancedAllocationName is the upstream plugin name.
const NodeResourcesBalancedAllocationName = "NodeResourcesBalancedAllocation"

// Name returns NodeResourcesBalancedAllocationName.
func (NodeResourcesBalancedAllocation) Name() string { return NodeResourcesBalancedAllocationName }

// Score writes BalancedAllocation (0..100) of each candidate, or returns
// false for a pod with no CPU and no memory request.
func (NodeResourcesBalancedAllocation) Score(nodes []sim.Node, p *sim.PodSpec, cand []int32, dst []int64) bool {
	req := p.Requests
	if req.CPU == 0 && req.Mem == 0 {
		return false
	}
	balancedScores(nodes, req, cand, dst)
	return true
}

// balancedScores writes balanced2 of each candidate with the pod's requests
// req added, in a loop without calls (see shares for why; balancedFloat
// is inlined) but with the same float64 operations in the same order, so
// the results are identical.
func balancedScores(nodes []sim.Node, req sim.Resources, cand []int32, dst []int64) {
	dst = dst[:len(cand)]
	for j, i := range cand {
		n := &nodes[i]
		ac, am := n.Alloc.CPU, n.Alloc.Mem
		if ac == 0 || am == 0 {
			dst[j] = MaxNodeScore // as in balanced2
			continue
		}
		dst[j] = balancedFloat(float64(n.Requested.CPU+req.CPU)/float64(ac), float64(n.Requested.Mem+req.Mem)/float64(am))
	}
}

// BalancedAllocation is kube-scheduler's BalancedAllocation score:
// int64((1 - std) * 100) where std is the standard deviation of the
// requested/allocatable fractions, each capped at 1, over the resources with
// non-zero allocatable; requested[i] already includes the incoming pod. With
// two resources std is |f0 - f1| / 2, with fewer it is 0. It uses float64 in
// the same order of operations as upstream so the truncated result is
// identical. Slices must have equal lengths.
func BalancedAllocation(requested, allocatable []int64) int64 {
	var (
		count  int
		total  float64
		f0, f1 float64
	)
	for i := range requested {
		if allocatable[i] == 0 {
			continue
		}
		f := fraction(requested[i], allocatable[i])
		total += f
		switch count {
		case 0:
			f0 = f
		case 1:
			f1 = f
		}
		count++
	}
	std := 0.0
	switch {
	case count == 2:
		std = math.Abs((f0 - f1) / 2)
	case count > 2:
		mean := total / float64(count)
		var sum float64
		for i := range requested {
			if allocatable[i] == 0 {
				continue
			}
			f := fraction(requested[i], allocatable[i])
			sum = sum + (f-mean)*(f-mean)
		}
		std = math.Sqrt(sum / float64(count))
	}
	return int64((1 - std) * float64(MaxNodeScore))
}

// fraction is requested/allocatable capped at 1 (allocatable must be non-zero).
func fraction(requested, allocatable int64) float64 {
	f := float64(requested) / float64(allocatable)
	if f > 1 {
		f = 1
	}
	return f
}

// balanced2 is BalancedAllocation for (cpu, memory) without slices, for the
// score loops' fallback; the loops inline the same balancedFloat.
// TestResourceScoresTwoDimMatchSlices checks that it agrees.
func balanced2(req, alloc sim.Resources) int64 {
	if alloc.CPU == 0 || alloc.Mem == 0 {
		return MaxNodeScore // fewer than two resources: std 0
	}
	return balancedFloat(float64(req.CPU)/float64(alloc.CPU), float64(req.Mem)/float64(alloc.Mem))
}
