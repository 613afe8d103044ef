package sched

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/sim"
)

// Cases ported from kubernetes/kubernetes pkg/scheduler/schedule_one_test.go
// (TestNumFeasibleNodesToFind), plus the bounds.
func TestNumFeasibleNodesToFind(t *testing.T) {
	tests := []struct {
		name       string
		percentage int
		nodes      int
		want       int
	}{
		{"adaptive, 10 nodes: all", 0, 10, 10},
		{"40 percent, 10 nodes: all", 40, 10, 10},
		// 50 - 1000/125 = 42 percent of 1000 = 420
		{"adaptive, 1000 nodes", 0, 1000, 420},
		{"40 percent, 1000 nodes", 40, 1000, 400},
		// 50 - 6000/125 = 2 percent, raised to the minimum 5: 300
		{"adaptive, 6000 nodes", 0, 6000, 300},
		{"40 percent, 6000 nodes", 40, 6000, 2400},
		{"99 nodes: all", 0, 99, 99},
		// 50 - 0 = 50 percent of 100 = 50, raised to the minimum 100
		{"adaptive, 100 nodes", 0, 100, 100},
		// 50 - 1 = 49 percent of 200 = 98, raised to 100
		{"adaptive, 200 nodes", 0, 200, 100},
		// 50 - 2 = 48 percent of 300 = 144
		{"adaptive, 300 nodes", 0, 300, 144},
		{"100 percent", 100, 5000, 5000},
		{"1 percent, minimum 100", 1, 5000, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := numFeasibleNodesToFind(tt.percentage, tt.nodes); got != tt.want {
				t.Errorf("numFeasibleNodesToFind(%d, %d) = %d; want %d", tt.percentage, tt.nodes, got, tt.want)
			}
		})
	}
}

func uniformNodes(n int, cpu, mem int64) []sim.Node {
	nodes := make([]sim.Node, n)
	for i := range nodes {
		nodes[i] = mkNode("n", cpu, mem, 0, 0)
	}
	return nodes
}

// Port of upstream's TestFairEvaluationForNodes (schedule_one_test.go): 500
// feasible nodes, 30 percent to score, so 150 nodes per decision; the start
// index advances by 150 modulo 500 each time, over more than two rounds.
func TestFairEvaluationForNodes(t *testing.T) {
	const n = 500
	c := sim.NewCluster(0, uniformNodes(n, 4000, 8000)...)
	f, err := NewKubeDefault(1, KubeDefaultOptions{PercentageOfNodesToScore: 30})
	if err != nil {
		t.Fatal(err)
	}
	k := numFeasibleNodesToFind(30, n)
	if k != 150 {
		t.Fatalf("nodes to find = %d; want 150", k)
	}
	for i := range 2 * (n/k + 1) {
		start := f.next
		d := f.Schedule(c, mkPod(100, 100))
		// The chosen node lies in the window [start, start+150) modulo 500.
		if off := (d - start + n) % n; off >= k {
			t.Errorf("decision %d: node %d outside the window of %d nodes from %d", i, d, k, start)
		}
		if want := (i + 1) * k % n; f.next != want {
			t.Errorf("decision %d: next start index = %d; want %d", i, f.next, want)
		}
	}
}

// TestStartIndexCountsInfeasibleNodes checks that the start index advances
// past every node examined, feasible or not, up to the first feasible node
// beyond the ones kept (sequential version of upstream's search).
func TestStartIndexCountsInfeasibleNodes(t *testing.T) {
	const n = 400
	nodes := uniformNodes(n, 4000, 8000)
	for i := 1; i < n; i += 2 {
		nodes[i].Requested = sim.Resources{CPU: 4000, Mem: 8000} // full: infeasible
	}
	c := sim.NewCluster(0, nodes...)
	f := newFramework(KubeDefaultProfile(KubeDefaultOptions{}), 1)
	// 50 - 400/125 = 47 percent of 400 = 188 feasible nodes to find.
	// Decision 1 starts at 0; feasible nodes sit at even indices, the 188th
	// at 374 and the 189th at 376, where the search stops: next = 376.
	f.Schedule(c, mkPod(100, 100))
	if f.next != 376 {
		t.Fatalf("after decision 1: next = %d; want 376", f.next)
	}
	// Decision 2 starts at 376: 376..398 hold 12 feasible nodes, then it
	// wraps to 0, 2, ...: the 189th feasible node is the 177th after the
	// wrap, at 352. It examined 24 + 352 = 376 nodes: next = (376+376) % 400 = 352.
	f.Schedule(c, mkPod(100, 100))
	if f.next != 352 {
		t.Fatalf("after decision 2: next = %d; want 352", f.next)
	}
	// A cluster below 100 nodes is searched in full and the index stays.
	small := sim.NewCluster(0, uniformNodes(50, 4000, 8000)...)
	g := newFramework(KubeDefaultProfile(KubeDefaultOptions{}), 1)
	for range 3 {
		g.Schedule(small, mkPod(100, 100))
		if g.next != 0 {
			t.Fatalf("50 nodes: next = %d; want 0", g.next)
		}
	}
}

// TestTieBreak checks that ties are broken from the seed: the same seed
// gives the same sequence, different seeds different sequences, and every
// tied node is drawn about equally often.
func TestTieBreak(t *testing.T) {
	c := sim.NewCluster(0, uniformNodes(10, 4000, 8000)...) // all nodes tie
	seq := func(seed uint64) []int {
		s, err := New(NameKubeDefault, seed)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]int, 50)
		for i := range out {
			out[i] = s.Schedule(c, mkPod(500, 500))
		}
		return out
	}
	a, b, other := seq(7), seq(7), seq(8)
	if !slices.Equal(a, b) {
		t.Errorf("seed 7 twice gave %v and %v; want equal", a, b)
	}
	if slices.Equal(a, other) {
		t.Errorf("seeds 7 and 8 both gave %v; want different sequences", a)
	}
	// 20,000 draws over 10 tied nodes: each count is binomial(20000, 0.1),
	// mean 2000, standard deviation 42; allow 5 standard deviations.
	s := newFramework(KubeDefaultProfile(KubeDefaultOptions{}), 3)
	var counts [10]int
	for range 20000 {
		counts[s.Schedule(c, mkPod(500, 500))]++
	}
	for i, k := range counts {
		if k < 2000-210 || k > 2000+210 {
			t.Errorf("node %d drawn %d times of 20000; want 2000 +- 210 (counts %v)", i, k, counts)
		}
	}
}

// TestSelectBest checks the selection on explicit totals.
func TestSelectBest(t *testing.T) {
	f := newFramework(KubeDefaultProfile(KubeDefaultOptions{}), 1)
	tests := []struct {
		name  string
		total []int64
		want  []int // acceptable positions
	}{
		{"single", []int64{5}, []int{0}},
		{"unique max first", []int64{9, 1, 2}, []int{0}},
		{"unique max last", []int64{1, 2, 9}, []int{2}},
		{"tie", []int64{3, 9, 1, 9, 9}, []int{1, 3, 4}},
		{"negative", []int64{-5, -1, -3}, []int{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen := map[int]bool{}
			for range 200 {
				got := f.selectBest(tt.total)
				if !slices.Contains(tt.want, got) {
					t.Fatalf("selectBest(%v) = %d; want one of %v", tt.total, got, tt.want)
				}
				seen[got] = true
			}
			if len(seen) != len(tt.want) {
				t.Errorf("selectBest(%v) drew %d distinct positions in 200 tries; want all %d of %v", tt.total, len(seen), len(tt.want), tt.want)
			}
		})
	}
}

func TestProfileValidate(t *testing.T) {
	good := KubeDefaultProfile(KubeDefaultOptions{})
	tests := []struct {
		name    string
		mutate  func(p *Profile)
		wantErr string // substring; empty for valid
	}{
		{"kube-default is valid", func(*Profile) {}, ""},
		{"no name", func(p *Profile) { p.Name = "" }, "without a name"},
		{"nil filter", func(p *Profile) { p.Filters = append(p.Filters, nil) }, "filter 3 is nil"},
		{"nil score", func(p *Profile) { p.Scores = append(p.Scores, WeightedScore{}) }, "score 5 is nil"},
		{"zero weight", func(p *Profile) { p.Scores[1].Weight = 0 }, "score 1 (NodeAffinity): weight 0 must be positive"},
		{"percentage too high", func(p *Profile) { p.PercentageOfNodesToScore = 101 }, "percentageOfNodesToScore 101 outside [0, 100]"},
		{"negative percentage", func(p *Profile) { p.PercentageOfNodesToScore = -1 }, "percentageOfNodesToScore -1"},
		{"first fit with scores", func(p *Profile) { p.Select = SelectFirst }, "would ignore its 5 score plugins"},
		{"unknown selection", func(p *Profile) { p.Select = 9 }, "unknown selection 9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := good
			p.Filters = slices.Clone(good.Filters)
			p.Scores = slices.Clone(good.Scores)
			tt.mutate(&p)
			err := p.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("Validate() = %v; want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("Validate() = %v; want an error containing %q", err, tt.wantErr)
			}
			if _, err2 := NewFramework(p, 1); (err2 == nil) != (err == nil) {
				t.Errorf("NewFramework error %v disagrees with Validate error %v", err2, err)
			}
		})
	}
	for _, p := range []Profile{BestFitProfile(), TetrisProfile(), FirstFitProfile(), RandomProfile(), KubeDefaultProfile(KubeDefaultOptions{Strategy: MostAllocatedStrategy})} {
		if err := p.Validate(); err != nil {
			t.Errorf("built-in profile %q: %v", p.Name, err)
		}
	}
}

func TestNewKubeDefaultOptions(t *testing.T) {
	if _, err := NewKubeDefault(1, KubeDefaultOptions{PercentageOfNodesToScore: 150}); err == nil || !strings.Contains(err.Error(), "percentageOfNodesToScore 150") {
		t.Errorf("percentage 150: err = %v; want an error naming percentageOfNodesToScore 150", err)
	}
	if _, err := NewKubeDefault(1, KubeDefaultOptions{Strategy: 7}); err == nil || !strings.Contains(err.Error(), "unknown scoring strategy 7") {
		t.Errorf("strategy 7: err = %v; want an error naming the strategy", err)
	}
	for _, c := range []struct {
		o      KubeDefaultOptions
		name   string
		scores int
	}{
		{KubeDefaultOptions{}, NameKubeDefault, 5},
		{KubeDefaultOptions{NoSpread: true}, NameKubeDefaultNoSpread, 4},
		{KubeDefaultOptions{Strategy: MostAllocatedStrategy, NoSpread: true}, NameMostAllocated, 4},
		{KubeDefaultOptions{Strategy: MostAllocatedStrategy}, "most-allocated-spread", 5},
	} {
		f, err := NewKubeDefault(1, c.o)
		if err != nil || f.Name() != c.name || len(f.Profile().Scores) != c.scores {
			t.Errorf("%+v: name %q, err %v, %d scores; want %q, nil, %d", c.o, f.Name(), err, len(f.Profile().Scores), c.name, c.scores)
		}
	}
}

// TestPendingWhenNothingFits checks every scheduler on an empty cluster, a
// cluster where the pod fits nowhere, and a nil pod.
func TestPendingWhenNothingFits(t *testing.T) {
	full := sim.NewCluster(0, mkNode("a", 1000, 1000, 900, 0), mkNode("b", 1000, 1000, 0, 900))
	empty := sim.NewCluster(0)
	for _, name := range Names() {
		s, err := New(name, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Schedule(full, mkPod(200, 200)); got != sim.PendingDecision {
			t.Errorf("%s on a full cluster = %d; want PendingDecision", name, got)
		}
		if got := s.Schedule(empty, mkPod(1, 1)); got != sim.PendingDecision {
			t.Errorf("%s on an empty cluster = %d; want PendingDecision", name, got)
		}
		if got := s.Schedule(full, nil); got != sim.PendingDecision {
			t.Errorf("%s with a nil pod = %d; want PendingDecision", name, got)
		}
	}
}

// TestScoresMarksInfeasible checks Scores' contract: -1 for infeasible
// nodes, totals elsewhere, and no effect on later decisions.
func TestScoresMarksInfeasible(t *testing.T) {
	c := sim.NewCluster(0,
		mkNode("full", 4000, 8000, 4000, 0),
		mkNode("free", 4000, 8000, 0, 0),
		mkNode("tainted", 4000, 8000, 0, 0, taints(sim.Taint{Key: "k", Effect: sim.NoSchedule})),
	)
	f := newFramework(KubeDefaultProfile(KubeDefaultOptions{}), 1)
	got := f.Scores(c, mkPod(1000, 2000), nil)
	// free: least cpu (4000-1000)*100/4000 = 75, mem (8000-2000)*100/8000 = 75 -> 75;
	// balanced 0.25/0.25 -> 100; taint 100*3 = 300; affinity skipped. 75+100+300 = 475.
	if want := []int64{-1, 475, -1}; !slices.Equal(got, want) {
		t.Errorf("Scores = %v; want %v", got, want)
	}
}
