package sched

import "github.com/kubesim/kubesim/sim"

// NodeResourcesFit is kube-scheduler's NodeResourcesFit plugin.
//
// As a filter it keeps the nodes whose free allocatable CPU and memory hold
// the pod's requests and whose bound pod count is below the pod limit
// (sim.FitsResources).
//
// As a score it applies its scoring strategy to the node's requested
// resources after placing the pod: LeastAllocatedStrategy (kube-scheduler's
// default, spreads) or MostAllocatedStrategy (its bin-packing profile), with
// Weights for CPU and memory. Like upstream it scores with the pod's non-zero
// requests (NonZeroRequests: a zero CPU request counts as
// DefaultMilliCPURequest, a zero memory request as DefaultMemoryRequestMiB).
// Upstream also counts the node's bound pods by their non-zero requests;
// sim.Node only carries plain requests, so the node side here is
// Node.Requested (identical unless a bound pod has a zero request).
type NodeResourcesFit struct {
	Strategy ScoringStrategy
	// Weights of CPU and memory, in that order (upstream: 1..100 each,
	// default 1 and 1).
	Weights [2]int64
}

var (
	_ FilterPlugin = (*NodeResourcesFit)(nil)
	_ ScorePlugin  = (*NodeResourcesFit)(nil)
)

// NodeResourcesFitName is the upstream plugin name.
const NodeResourcesFitName = "NodeResourcesFit"

// ScoringStrategy is NodeResourcesFit's scoring strategy.
type ScoringStrategy uint8

// Scoring strategies. The zero value is kube-scheduler's default.
const (
	LeastAllocatedStrategy ScoringStrategy = iota // favour free nodes: LeastAllocated
	MostAllocatedStrategy                         // favour full nodes: MostAllocated
)

// String returns the upstream spelling of the strategy.
func (s ScoringStrategy) String() string {
	switch s {
	case LeastAllocatedStrategy:
		return "LeastAllocated"
	case MostAllocatedStrategy:
		return "MostAllocated"
	}
	return "ScoringStrategy(?)"
}

// Non-zero default requests that kube-scheduler substitutes for a missing
// request when scoring (pkg/scheduler/util: 100 millicores, 200 MiB).
const (
	DefaultMilliCPURequest  int64 = 100
	DefaultMemoryRequestMiB int64 = 200
)

// Name returns NodeResourcesFitName.
func (pl *NodeResourcesFit) Name() string { return NodeResourcesFitName }

// Filter keeps the candidates that pass sim.FitsResources.
func (pl *NodeResourcesFit) Filter(nodes []sim.Node, p *sim.PodSpec, cand []int32) []int32 {
	k := 0
	for _, i := range cand {
		ok := sim.FitsResources(&nodes[i], p)
		cand[k] = i
		if ok {
			k++
		}
	}
	return cand[:k]
}

// Score writes the strategy's score (0..100) of each candidate.
func (pl *NodeResourcesFit) Score(nodes []sim.Node, p *sim.PodSpec, cand []int32, dst []int64) bool {
	req := NonZeroRequests(p.Requests)
	w := pl.Weights
	most := pl.Strategy == MostAllocatedStrategy
	if w[0] != w[1] || w[0] <= 0 || req.CPU < 0 || req.Mem < 0 {
		for j, i := range cand {
			n := &nodes[i]
			dst[j] = allocated2(most, n.Requested.Add(req), n.Alloc, w)
		}
		return true
	}
	// Equal weights: the weighted mean is (cpu + mem) / 2. The loops score
	// the common case; a node outside their domain is marked -1 and scored
	// here by the general path.
	if shares(most, nodes, req, cand, dst) {
		for j, i := range cand {
			if dst[j] < 0 {
				n := &nodes[i]
				dst[j] = allocated2(most, n.Requested.Add(req), n.Alloc, w)
			}
		}
	}
	return true
}

// floatDomain bounds, as a power of two for a single test, the allocatable
// amounts for which the share loops divide in float64: 2^46 is below
// percentFloatLimit, so percent's argument holds for them.
const floatDomain = 1 << 46

// shares writes into dst[j] the equal-weight LeastAllocated, or with most
// set MostAllocated, score of node cand[j] with the pod's requests req added
// (r): ((a-r)*100/a, or min(r, a)*100/a, for CPU + the same for memory) / 2,
// each share truncated. It writes -1 for a node outside the loop's domain
// (see amounts) and reports whether it wrote any.
//
// This loop, balancedScores and the fused loops make no calls: Go keeps no
// registers across a call, so a call in the loop (even one on a rare path)
// makes iterations spill and reload their state. Measured with cachegrind
// on BenchmarkSchedule/kube-default/nodes=100, the two resource scores took
// about 130 instructions a node with a call per node and 108 without.
func shares(most bool, nodes []sim.Node, req sim.Resources, cand []int32, dst []int64) (slow bool) {
	dst = dst[:len(cand)]
	for j, i := range cand {
		ac, am, rc, rm, ok := amounts(&nodes[i], req)
		if !ok {
			dst[j], slow = -1, true
			continue
		}
		xc, xm := max(ac-rc, 0), max(am-rm, 0)
		if most {
			xc, xm = min(rc, ac), min(rm, am)
		}
		dst[j] = (int64(float64(xc*MaxNodeScore)/float64(ac)) + int64(float64(xm*MaxNodeScore)/float64(am))) >> 1
	}
	return slow
}

// amounts returns node n's allocatable CPU and memory and its requested
// amounts with req added, and whether they are in the domain of the float
// score loops: allocatables in [1, floatDomain] (where percent's float
// shortcut is exact) and requested amounts non-negative.
func amounts(n *sim.Node, req sim.Resources) (ac, am, rc, rm int64, ok bool) {
	ac, am = n.Alloc.CPU, n.Alloc.Mem
	rc, rm = n.Requested.CPU+req.CPU, n.Requested.Mem+req.Mem
	return ac, am, rc, rm, (uint64(ac-1)|uint64(am-1)) < floatDomain && (rc|rm) >= 0
}

// NewNodeResourcesFit returns the plugin with the given strategy and
// kube-scheduler's default weights (CPU 1, memory 1).
func NewNodeResourcesFit(s ScoringStrategy) *NodeResourcesFit {
	return &NodeResourcesFit{Strategy: s, Weights: [2]int64{1, 1}}
}

// NonZeroRequests returns r with each zero request replaced by
// kube-scheduler's scoring default (DefaultMilliCPURequest,
// DefaultMemoryRequestMiB). kubesim has no distinction between a missing
// request and an explicit zero; it treats zero as missing.
func NonZeroRequests(r sim.Resources) sim.Resources {
	if r.CPU == 0 {
		r.CPU = DefaultMilliCPURequest
	}
	if r.Mem == 0 {
		r.Mem = DefaultMemoryRequestMiB
	}
	return r
}

// LeastAllocated is kube-scheduler's LeastAllocated score: the weighted mean
// over resources of (allocatable-requested)*100/allocatable with upstream's
// truncating integer arithmetic (percent may divide in float64 where that
// gives the same integer), where requested[i] already includes the incoming
// pod. A resource with zero allocatable is skipped; a resource whose
// requested exceeds allocatable scores 0; the result is 0 when no weight
// remains. Slices must have equal lengths.
func LeastAllocated(requested, allocatable, weights []int64) int64 {
	var score, weightSum int64
	for i := range requested {
		if allocatable[i] == 0 {
			continue
		}
		score += leastRequestedScore(requested[i], allocatable[i]) * weights[i]
		weightSum += weights[i]
	}
	if weightSum == 0 {
		return 0
	}
	return score / weightSum
}

// MostAllocated is kube-scheduler's MostAllocated score: the weighted mean
// over resources of requested*100/allocatable with upstream's truncating
// integer arithmetic, requested capped at allocatable (non-zero default
// requests can push it over), where requested[i] already includes the
// incoming pod. A resource with zero allocatable is skipped; the result is 0
// when no weight remains. Slices must have equal lengths.
func MostAllocated(requested, allocatable, weights []int64) int64 {
	var score, weightSum int64
	for i := range requested {
		if allocatable[i] == 0 {
			continue
		}
		score += mostRequestedScore(requested[i], allocatable[i]) * weights[i]
		weightSum += weights[i]
	}
	if weightSum == 0 {
		return 0
	}
	return score / weightSum
}

// leastRequestedScore is upstream's leastRequestedScore: the unused share
// of one resource on a 0..100 scale, (capacity-requested)*100/capacity.
func leastRequestedScore(requested, capacity int64) int64 {
	if capacity == 0 || requested > capacity {
		return 0
	}
	return percent(capacity-requested, capacity)
}

// mostRequestedScore is upstream's mostRequestedScore: the used share of one
// resource on a 0..100 scale, requested*100/capacity with requested capped
// at capacity.
func mostRequestedScore(requested, capacity int64) int64 {
	if capacity == 0 {
		return 0
	}
	if requested > capacity {
		requested = capacity
	}
	return percent(requested, capacity)
}

// percentFloatLimit bounds the divisors for which percent may divide in
// float64: below it, 100*d < 2^53.
const percentFloatLimit = (1 << 53) / MaxNodeScore

// percent returns x*100/d with integer (truncating) division. When
// 0 <= x <= d < percentFloatLimit it divides in float64, which is several
// times faster than a 64-bit integer division on the machines measured and
// gives the same result: x*100 and d are exact float64 integers, the
// quotient q is at most 100, so the rounding error of the division is at
// most 100*2^-53, less than 1/d, the smallest distance from a non-integer q
// to the next integer; an integer q is exact. Otherwise it divides in
// integers, as upstream.
func percent(x, d int64) int64 {
	if 0 <= x && x <= d && d < percentFloatLimit {
		return int64(float64(x*MaxNodeScore) / float64(d))
	}
	return x * MaxNodeScore / d
}

// allocated2 is LeastAllocated or, with most set, MostAllocated for (cpu,
// memory): the general path of the score loops (unequal weights, amounts
// outside the float loops' domain). The arrays stay on the stack.
func allocated2(most bool, req, alloc sim.Resources, w [2]int64) int64 {
	r, a := [2]int64{req.CPU, req.Mem}, [2]int64{alloc.CPU, alloc.Mem}
	if most {
		return MostAllocated(r[:], a[:], w[:])
	}
	return LeastAllocated(r[:], a[:], w[:])
}
