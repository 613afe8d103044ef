package sched

import (
	"slices"
	"testing"

	"github.com/kubesim/kubesim/sim"
)

func TestBestFit(t *testing.T) {
	// Pod 1000m/2000Mi on 4000m/8000Mi nodes. Leftover shares after placement
	// in units of 1/10000; score = 2*10000^2 - (l_cpu^2 + l_mem^2).
	// tight-cpu (3000/2000 -> leftover 0m/4000Mi): l = (0, 5000); 2e8 - 25e6 = 175,000,000
	// even (1800/3600 -> leftover 1200m/2400Mi): l = (3000, 3000); 2e8 - 18e6 = 182,000,000
	// empty (0/0 -> 3000m/6000Mi): l = (7500, 7500); 2e8 - 112.5e6 = 87,500,000
	// even wins: a smaller leftover vector although tight-cpu leaves less in sum
	// (MostAllocated would rank tight-cpu first: 87 against 70).
	c := sim.NewCluster(0, mkNode("tight-cpu", 4000, 8000, 3000, 2000), mkNode("even", 4000, 8000, 1800, 3600), mkNode("empty", 4000, 8000, 0, 0))
	f := NewBestFit(1)
	p := mkPod(1000, 2000)
	if got, want := f.Scores(c, p, nil), []int64{175_000_000, 182_000_000, 87_500_000}; !slices.Equal(got, want) {
		t.Errorf("Scores = %v; want %v", got, want)
	}
	if got := f.Schedule(c, p); got != 1 {
		t.Errorf("Schedule = %d; want 1 (even)", got)
	}
	// A node left exactly full scores the maximum 2*10000^2.
	exact := sim.NewCluster(0, mkNode("exact", 4000, 8000, 3000, 6000), mkNode("empty", 4000, 8000, 0, 0))
	if got := f.Scores(exact, p, nil)[0]; got != 200_000_000 {
		t.Errorf("exactly full node scores %d; want 200000000", got)
	}
}

func TestTetris(t *testing.T) {
	// Pod 1000m/500Mi on 4000m/8000Mi nodes: demand shares d = (2500, 625).
	// cpu-rich (1000/7000 used, free 3000m/1000Mi): f = (7500, 1250);
	//   2500*7500 + 625*1250 = 18,750,000 + 781,250 = 19,531,250
	// mem-rich (3000/1000 used, free 1000m/7000Mi): f = (2500, 8750);
	//   2500*2500 + 625*8750 = 6,250,000 + 5,468,750 = 11,718,750
	// half (2000/4000 used): f = (5000, 5000); 12,500,000 + 3,125,000 = 15,625,000
	// The CPU-heavy pod goes where free CPU dominates.
	c := sim.NewCluster(0, mkNode("cpu-rich", 4000, 8000, 1000, 7000), mkNode("mem-rich", 4000, 8000, 3000, 1000), mkNode("half", 4000, 8000, 2000, 4000))
	f := NewTetris(1)
	p := mkPod(1000, 500)
	if got, want := f.Scores(c, p, nil), []int64{19_531_250, 11_718_750, 15_625_000}; !slices.Equal(got, want) {
		t.Errorf("Scores = %v; want %v", got, want)
	}
	if got := f.Schedule(c, p); got != 0 {
		t.Errorf("Schedule = %d; want 0 (cpu-rich)", got)
	}
}

func TestFirstFit(t *testing.T) {
	c := sim.NewCluster(0,
		mkNode("full", 4000, 8000, 4000, 0),
		mkNode("tainted", 4000, 8000, 0, 0, taints(sim.Taint{Key: "k", Effect: sim.NoSchedule})),
		mkNode("fits", 4000, 8000, 3000, 0),
		mkNode("roomier", 4000, 8000, 0, 0),
	)
	f := NewFirstFit()
	for i := range 5 { // no rotation: always the first feasible node
		if got := f.Schedule(c, mkPod(1000, 1000)); got != 2 {
			t.Fatalf("decision %d: Schedule = %d; want 2", i, got)
		}
	}
	// With the toleration the tainted node comes first.
	if got := f.Schedule(c, withTolerations(mkPod(1000, 1000), sim.Toleration{Key: "k", Exists: true})); got != 1 {
		t.Errorf("with toleration: Schedule = %d; want 1", got)
	}
	// First-fit over more nodes than a filter batch: the first feasible node
	// is in the third batch.
	nodes := uniformNodes(300, 4000, 8000)
	for i := range 200 {
		nodes[i].Requested = sim.Resources{CPU: 4000}
	}
	if got := f.Schedule(sim.NewCluster(0, nodes...), mkPod(1000, 1000)); got != 200 {
		t.Errorf("300 nodes, first 200 full: Schedule = %d; want 200", got)
	}
}

func TestRandom(t *testing.T) {
	// Nodes 0 and 3 cannot hold the pod; 1, 2 and 4 can. 30,000 draws: each
	// feasible count is binomial(30000, 1/3), mean 10000, standard
	// deviation 82; allow 5 standard deviations.
	c := sim.NewCluster(0,
		mkNode("full", 4000, 8000, 4000, 0),
		mkNode("a", 4000, 8000, 0, 0),
		mkNode("b", 4000, 8000, 2000, 0),
		mkNode("tainted", 4000, 8000, 0, 0, taints(sim.Taint{Key: "k", Effect: sim.NoExecute})),
		mkNode("c", 4000, 8000, 0, 7000),
	)
	f := NewRandom(5)
	var counts [5]int
	for range 30000 {
		counts[f.Schedule(c, mkPod(1000, 1000))]++
	}
	if counts[0] != 0 || counts[3] != 0 {
		t.Errorf("infeasible nodes drawn: counts %v", counts)
	}
	for _, i := range []int{1, 2, 4} {
		if counts[i] < 10000-410 || counts[i] > 10000+410 {
			t.Errorf("node %d drawn %d times of 30000; want 10000 +- 410 (counts %v)", i, counts[i], counts)
		}
	}
}
