package sched

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kubesim/kubesim/sim"
)

// refNormalize is upstream's DefaultNormalizeScore written plainly, with
// integer division only: the reference for NormalizeScore's fast paths.
func refNormalize(maxPriority int64, reverse bool, scores []int64) {
	var maxCount int64
	for _, s := range scores {
		if s > maxCount {
			maxCount = s
		}
	}
	if maxCount == 0 {
		if reverse {
			for i := range scores {
				scores[i] = maxPriority
			}
		}
		return
	}
	for i, s := range scores {
		s = maxPriority * s / maxCount
		if reverse {
			s = maxPriority - s
		}
		scores[i] = s
	}
}

func TestNormalizeScoreMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for i := range 20000 {
		n := 1 + r.IntN(40)
		scores := make([]int64, n)
		limit := []int64{2, 5, 300, 1 << 20, 1 << 45, 1 << 52}[r.IntN(6)]
		for j := range scores {
			scores[j] = r.Int64N(limit)
			if r.IntN(30) == 0 {
				scores[j] = -r.Int64N(10)
			}
		}
		maxPriority := []int64{100, 1, 7, 1 << 21}[r.IntN(4)]
		reverse := r.IntN(2) == 0
		got, want := slices.Clone(scores), slices.Clone(scores)
		NormalizeScore(maxPriority, reverse, got)
		refNormalize(maxPriority, reverse, want)
		if !slices.Equal(got, want) {
			t.Fatalf("case %d: NormalizeScore(%d, %v, %v) = %v; want %v", i, maxPriority, reverse, scores, got, want)
		}
	}
}

// TestPercentEdges checks the float64 shortcut of percent at the edges of
// its domain against integer division.
func TestPercentEdges(t *testing.T) {
	lim := int64(percentFloatLimit)
	for _, d := range []int64{1, 2, 3, 7, 100, 1023, 1 << 30, lim - 2, lim - 1, lim, lim + 1, 1 << 55} {
		for _, x := range []int64{0, 1, d / 3, d / 2, d - 1, d, d + 1} {
			if x*MaxNodeScore/MaxNodeScore != x { // the reference itself would overflow
				continue
			}
			if got, want := percent(x, d), x*MaxNodeScore/d; got != want {
				t.Errorf("percent(%d, %d) = %d; want %d", x, d, got, want)
			}
		}
	}
}

// TestScorePluginsMatchReference checks every kube-scheduler score plugin's
// fast loop against the exported reference functions on random clusters
// and pods.
func TestScorePluginsMatchReference(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for round := range 300 {
		c := randomCluster(r, 1+r.IntN(80))
		nodes := c.Nodes()
		cand := allCand(len(nodes))
		// A random subset, in a random order, as after filtering.
		r.Shuffle(len(cand), func(i, j int) { cand[i], cand[j] = cand[j], cand[i] })
		cand = cand[:1+r.IntN(len(cand))]
		dst := make([]int64, len(cand))
		for range 4 {
			p := randomPod(r).Spec
			for _, w := range [][2]int64{{1, 1}, {1 + r.Int64N(100), 1 + r.Int64N(100)}} {
				for _, strategy := range []ScoringStrategy{LeastAllocatedStrategy, MostAllocatedStrategy} {
					pl := &NodeResourcesFit{Strategy: strategy, Weights: w}
					pl.Score(nodes, p, cand, dst)
					req := NonZeroRequests(p.Requests)
					for j, i := range cand {
						n := &nodes[i]
						rs := []int64{n.Requested.CPU + req.CPU, n.Requested.Mem + req.Mem}
						as := []int64{n.Alloc.CPU, n.Alloc.Mem}
						want := LeastAllocated(rs, as, w[:])
						if strategy == MostAllocatedStrategy {
							want = MostAllocated(rs, as, w[:])
						}
						if dst[j] != want {
							t.Fatalf("round %d: NodeResourcesFit(%v, %v) on node %d = %d; want %d", round, strategy, w, i, dst[j], want)
						}
					}
				}
			}
			if (NodeResourcesBalancedAllocation{}).Score(nodes, p, cand, dst) {
				for j, i := range cand {
					n := &nodes[i]
					want := BalancedAllocation([]int64{n.Requested.CPU + p.Requests.CPU, n.Requested.Mem + p.Requests.Mem}, []int64{n.Alloc.CPU, n.Alloc.Mem})
					if dst[j] != want {
						t.Fatalf("round %d: BalancedAllocation plugin on node %d = %d; want %d", round, i, dst[j], want)
					}
				}
			} else if p.Requests != (sim.Resources{}) {
				t.Fatalf("round %d: BalancedAllocation skipped a pod requesting %v", round, p.Requests)
			}
			want := make([]int64, len(cand))
			(TaintToleration{}).Score(nodes, p, cand, dst)
			for j, i := range cand {
				want[j] = sim.CountIntolerablePreferNoSchedule(&nodes[i], p)
			}
			refNormalize(MaxNodeScore, true, want)
			if !slices.Equal(dst, want) {
				t.Fatalf("round %d: TaintToleration scores %v; want %v", round, dst, want)
			}
			if (NodeAffinity{}).Score(nodes, p, cand, dst) {
				for j, i := range cand {
					want[j] = sim.PreferredAffinityWeight(&nodes[i], p)
				}
				refNormalize(MaxNodeScore, false, want)
				if !slices.Equal(dst, want) {
					t.Fatalf("round %d: NodeAffinity scores %v; want %v", round, dst, want)
				}
			}
		}
	}
}

// TestShareMatchesIntegerDivision checks share's float64 shortcut against
// integer division, including the edges of its domain.
func TestShareMatchesIntegerDivision(t *testing.T) {
	ref := func(x, total int64) int64 {
		switch {
		case total <= 0 || x <= 0:
			return 0
		case x >= total:
			return FineScale
		}
		return x * FineScale / total
	}
	r := rand.New(rand.NewPCG(31, 32))
	lim := int64(shareFloatLimit)
	for _, total := range []int64{1, 2, 3, 7, 9999, 10000, 10001, 1 << 30, lim - 1, lim, lim + 1} {
		for _, x := range []int64{-1, 0, 1, total / 3, total / 2, total - 1, total, total + 1} {
			if got, want := share(x, total), ref(x, total); got != want {
				t.Errorf("share(%d, %d) = %d; want %d", x, total, got, want)
			}
		}
	}
	for range 1000000 {
		total := 1 + r.Int64N([]int64{20, 100000, 1 << 40}[r.IntN(3)])
		x := r.Int64N(total + 2)
		if got, want := share(x, total), ref(x, total); got != want {
			t.Fatalf("share(%d, %d) = %d; want %d", x, total, got, want)
		}
	}
}
