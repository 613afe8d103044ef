package sched

import (
	"math"

	"github.com/kubesim/kubesim/sim"
)

// resourceFusion scores a profile's NodeResourcesFit (equal CPU and memory
// weights) and NodeResourcesBalancedAllocation in one loop over the
// candidates, writing their weighted sum, instead of one loop per plugin
// and one more to add each into the total. Both read the same node fields
// and compute the same requested/allocatable ratios; measured at 100 nodes,
// the fused loop takes about 0.75 of the time of the two plugin loops plus
// their accumulation. The results are the plugins' to the last integer:
// TestResourceFusionMatchesPlugins checks this on random clusters.
type resourceFusion struct {
	fit, balanced int   // indices of the two plugins in Profile.Scores
	wFit, wBal    int64 // their profile weights
	most          bool  // NodeResourcesFit scores with MostAllocated
}

// fuseResources returns the fusion for scores, or nil when they lack one of
// the two plugins, have one twice, or NodeResourcesFit has unequal weights
// or an unknown strategy.
func fuseResources(scores []WeightedScore) *resourceFusion {
	r := &resourceFusion{fit: -1, balanced: -1}
	for k, ws := range scores {
		switch pl := ws.Plugin.(type) {
		case *NodeResourcesFit:
			if r.fit >= 0 || pl.Weights[0] != pl.Weights[1] || pl.Weights[0] <= 0 ||
				(pl.Strategy != LeastAllocatedStrategy && pl.Strategy != MostAllocatedStrategy) {
				return nil
			}
			r.fit, r.wFit, r.most = k, ws.Weight, pl.Strategy == MostAllocatedStrategy
		case NodeResourcesBalancedAllocation:
			if r.balanced >= 0 {
				return nil
			}
			r.balanced, r.wBal = k, ws.Weight
		}
	}
	if r.fit < 0 || r.balanced < 0 {
		return nil
	}
	return r
}

// applies reports whether the fusion can score p: both plugins must use the
// same requests, which holds unless a request is zero (NodeResourcesFit
// then substitutes its non-zero default, and BalancedAllocation skips a pod
// requesting nothing); such pods take the plugins' own loops.
func (r *resourceFusion) applies(p *sim.PodSpec) bool {
	return p.Requests.CPU > 0 && p.Requests.Mem > 0
}

// score writes into total[j] wFit * NodeResourcesFit + wBal *
// BalancedAllocation of node cand[j] for a pod requesting req. The loop
// handles nodes whose allocatables are in [1, floatDomain] and whose
// requested amounts are non-negative (amounts' domain); other nodes are
// marked and scored afterwards by the exact two-resource functions, out of
// the loop so that it makes no calls (see shares).
func (r *resourceFusion) score(nodes []sim.Node, req sim.Resources, cand []int32, total []int64) {
	total = total[:len(cand)]
	var slow bool
	if r.most {
		slow = mostBalanced(nodes, req, cand, total, r.wFit, r.wBal)
	} else {
		slow = leastBalanced(nodes, req, cand, total, r.wFit, r.wBal)
	}
	if !slow {
		return
	}
	for j, i := range cand {
		if total[j] < 0 {
			n := &nodes[i]
			rq := n.Requested.Add(req)
			total[j] = r.wFit*allocated2(r.most, rq, n.Alloc, [2]int64{1, 1}) + r.wBal*balanced2(rq, n.Alloc)
		}
	}
}

// leastBalanced is resourceFusion.score's loop for LeastAllocated; it
// returns whether it marked any node for the exact path. It and
// mostBalanced are separate functions, not one loop testing the strategy,
// because the fewer values a loop keeps live the fewer it spills: merged
// (as shares is), the decision took 17% more instructions (cachegrind,
// BenchmarkSchedule/kube-default/nodes=100).
func leastBalanced(nodes []sim.Node, req sim.Resources, cand []int32, total []int64, wFit, wBal int64) (slow bool) {
	total = total[:len(cand)]
	for j, i := range cand {
		ac, am, rc, rm, ok := amounts(&nodes[i], req)
		if !ok {
			total[j], slow = -1, true
			continue
		}
		fac, fam := float64(ac), float64(am)
		fit := (int64(float64(max(ac-rc, 0)*MaxNodeScore)/fac) + int64(float64(max(am-rm, 0)*MaxNodeScore)/fam)) >> 1
		total[j] = wFit*fit + wBal*balancedFloat(float64(rc)/fac, float64(rm)/fam)
	}
	return slow
}

// mostBalanced is leastBalanced for MostAllocated.
func mostBalanced(nodes []sim.Node, req sim.Resources, cand []int32, total []int64, wFit, wBal int64) (slow bool) {
	total = total[:len(cand)]
	for j, i := range cand {
		ac, am, rc, rm, ok := amounts(&nodes[i], req)
		if !ok {
			total[j], slow = -1, true
			continue
		}
		fac, fam := float64(ac), float64(am)
		fit := (int64(float64(min(rc, ac)*MaxNodeScore)/fac) + int64(float64(min(rm, am)*MaxNodeScore)/fam)) >> 1
		total[j] = wFit*fit + wBal*balancedFloat(float64(rc)/fac, float64(rm)/fam)
	}
	return slow
}

// balancedFloat is BalancedAllocation from the two requested/allocatable
// fractions, with upstream's float64 operations in upstream's order: each
// fraction capped at 1, std = |fc - fm| / 2, int64((1 - std) * 100). Small
// enough to be inlined into the loops that use it.
func balancedFloat(fc, fm float64) int64 {
	if fc > 1 {
		fc = 1
	}
	if fm > 1 {
		fm = 1
	}
	// math.Abs(fc-fm)/2 is math.Abs((fc-fm)/2) exactly. math.Abs clears the
	// sign bit; a branch on the sign, mispredicted half the time, made
	// BenchmarkReplay/kube-default/nodes=100 about 7% slower (median of 10
	// alternating runs).
	return int64((1 - math.Abs(fc-fm)/2) * float64(MaxNodeScore))
}
