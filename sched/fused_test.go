package sched

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/sim"
)

// TestResourceFusionMatchesPlugins compares the fused resource score with
// the two plugins' own scores, weighted and added, on random clusters and
// pods, including nodes outside the fused loop's domain (zero, huge and
// negative amounts), for both strategies and several weights.
func TestResourceFusionMatchesPlugins(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	odd := []sim.Resources{{}, {CPU: 0, Mem: 1024}, {CPU: 4000, Mem: 0}, {CPU: 1 << 50, Mem: 1 << 40}, {CPU: -5, Mem: 100}}
	for round := range 3000 {
		c := randomCluster(r, 1+r.IntN(30))
		nodes := c.Nodes()
		for i := range nodes {
			switch r.IntN(12) {
			case 0:
				nodes[i].Alloc = odd[r.IntN(len(odd))]
			case 1:
				nodes[i].Requested = odd[r.IntN(len(odd))]
			}
		}
		p := randomPod(r).Spec
		if p.Requests.CPU == 0 || p.Requests.Mem == 0 {
			p.Requests = sim.Resources{CPU: 1 + r.Int64N(16000), Mem: 1 + r.Int64N(65536)}
		}
		fit := &NodeResourcesFit{Strategy: ScoringStrategy(r.IntN(2)), Weights: [2]int64{3, 3}}
		wf, wb := 1+r.Int64N(5), 1+r.Int64N(5)
		fu := fuseResources([]WeightedScore{{TaintToleration{}, 3}, {fit, wf}, {NodeResourcesBalancedAllocation{}, wb}})
		if fu == nil || !fu.applies(p) {
			t.Fatal("no fusion")
		}
		cand := make([]int32, len(nodes))
		for i := range cand {
			cand[i] = int32(i)
		}
		got := make([]int64, len(cand))
		fu.score(nodes, p.Requests, cand, got)
		a, b := make([]int64, len(cand)), make([]int64, len(cand))
		fit.Score(nodes, p, cand, a)
		NodeResourcesBalancedAllocation{}.Score(nodes, p, cand, b)
		for j := range cand {
			if want := wf*a[j] + wb*b[j]; got[j] != want {
				t.Fatalf("round %d, node %+v, pod %+v, %v: fused %d, plugins %d*%d + %d*%d = %d",
					round, nodes[j], p.Requests, fit.Strategy, got[j], wf, a[j], wb, b[j], want)
			}
		}
	}
}

// TestFusedFrameworkMatchesGeneric runs every scheduler of the package with
// the one-pass filter (and, for kube-default and most-allocated, the fused
// resource score) side by side with the same profiles on the
// plugin-by-plugin path, on random clusters of up
// to 400 nodes (so sampling and the rotating start index matter), and
// requires the same decisions, start indices and random draws.
func TestFusedFrameworkMatchesGeneric(t *testing.T) {
	sampled := KubeDefaultProfile(KubeDefaultOptions{PercentageOfNodesToScore: 30})
	sampled.Name = "kube-default sampling 30%"
	profiles := []Profile{
		KubeDefaultProfile(KubeDefaultOptions{}),
		KubeDefaultProfile(KubeDefaultOptions{NoSpread: true}),
		KubeDefaultProfile(KubeDefaultOptions{Strategy: MostAllocatedStrategy}),
		KubeDefaultProfile(KubeDefaultOptions{Strategy: MostAllocatedStrategy, NoSpread: true}),
		sampled,
		// the one-pass filters without the fused score, and first-feasible
		// selection's early stop
		BestFitProfile(), TetrisProfile(), RandomProfile(), FirstFitProfile(),
	}
	for _, prof := range profiles {
		fast, slow := newFramework(prof, 3), newFramework(prof, 3)
		wantRes := strings.HasPrefix(prof.Name, NameKubeDefault) || strings.HasPrefix(prof.Name, NameMostAllocated)
		if !fast.defaultFilters || (fast.res != nil) != wantRes {
			t.Fatalf("%s: fast paths %v / %v", prof.Name, fast.defaultFilters, fast.res != nil)
		}
		slow.defaultFilters, slow.res = false, nil
		r := rand.New(rand.NewPCG(8, 8))
		placed := 0
		for round := range 500 {
			n := 1 + r.IntN(40)
			if round%10 == 0 {
				n = 100 + r.IntN(300)
			}
			c := randomCluster(r, n)
			addRandomGroups(r, c, 4)
			for range 6 {
				p := randomPod(r)
				randomGroup(r, p, 5) // one in five without a group
				a, b := fast.Schedule(c, p), slow.Schedule(c, p)
				if a != b || fast.next != slow.next {
					t.Fatalf("%s, round %d (%d nodes): fast chose %d (next %d), generic %d (next %d)", prof.Name, round, n, a, fast.next, b, slow.next)
				}
				if a >= 0 {
					placed++
				}
			}
			if fast.rng.Uint64() != slow.rng.Uint64() {
				t.Fatalf("%s, round %d: random sources diverged", prof.Name, round)
			}
		}
		if placed < 500 {
			t.Errorf("%s: only %d placements", prof.Name, placed)
		}
	}
}

// TestFastPathSelection checks which profiles take the fast paths.
func TestFastPathSelection(t *testing.T) {
	fit := NewNodeResourcesFit(LeastAllocatedStrategy)
	bal := NodeResourcesBalancedAllocation{}
	if !isDefaultFilters(DefaultFilters()) || isDefaultFilters(DefaultFilters()[:2]) ||
		isDefaultFilters(append(DefaultFilters(), TaintToleration{})) {
		t.Error("isDefaultFilters misjudges the default filters")
	}
	for _, c := range []struct {
		name   string
		scores []WeightedScore
		want   bool
	}{
		{"both", []WeightedScore{{fit, 1}, {bal, 1}}, true},
		{"fit only", []WeightedScore{{fit, 1}}, false},
		{"unequal weights", []WeightedScore{{&NodeResourcesFit{Weights: [2]int64{1, 2}}, 1}, {bal, 1}}, false},
		{"twice", []WeightedScore{{fit, 1}, {bal, 1}, {bal, 1}}, false},
	} {
		if got := fuseResources(c.scores) != nil; got != c.want {
			t.Errorf("%s: fused = %v, want %v", c.name, got, c.want)
		}
	}
}
