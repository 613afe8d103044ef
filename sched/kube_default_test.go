package sched

import (
	"slices"
	"testing"

	"github.com/kubesim/kubesim/sim"
)

// TestKubeDefaultHandComputed checks kube-default's total scores and choice
// on small clusters against hand computations. Every node has 4000m/8000Mi
// allocatable unless stated. Totals are
//
//	3*TaintToleration + 2*NodeAffinity + 1*NodeResourcesFit(LeastAllocated) + 1*BalancedAllocation
//
// where TaintToleration is 100 on every node when no candidate has an
// intolerable PreferNoSchedule taint, and NodeAffinity is skipped (0) for pods
// without preferred terms.
func TestKubeDefaultHandComputed(t *testing.T) {
	spot := sim.Taint{Key: "spot", Value: "true", Effect: sim.PreferNoSchedule}
	tests := []struct {
		name     string
		strategy ScoringStrategy
		nodes    []sim.Node
		pod      *sim.Pod
		want     []int64 // total per node
		pick     int
	}{
		{
			// Pod 1000m/2000Mi.
			// x (0/4000 -> 1000/6000): least cpu 3000*100/4000 = 75, mem 2000*100/8000 = 25 -> 50;
			//   balanced 0.25 vs 0.75: std 0.25 -> 75; 50+75+300 = 425
			// y (1200/2400 -> 2200/4400): least cpu 1800*100/4000 = 45, mem 3600*100/8000 = 45 -> 45;
			//   balanced 0.55 vs 0.55: std 0 -> 100; 45+100+300 = 445
			// z (3000/1000 -> 4000/3000): least cpu 0, mem 5000*100/8000 = 62 -> 31;
			//   balanced 1 vs 0.375: std 0.3125 -> 68.75 -> 68; 31+68+300 = 399
			// y wins although x has more free resources: balance decides.
			name:     "balanced allocation outweighs free space",
			strategy: LeastAllocatedStrategy,
			nodes:    []sim.Node{mkNode("x", 4000, 8000, 0, 4000), mkNode("y", 4000, 8000, 1200, 2400), mkNode("z", 4000, 8000, 3000, 1000)},
			pod:      mkPod(1000, 2000),
			want:     []int64{425, 445, 399},
			pick:     1,
		},
		{
			// Pod 500m/1000Mi without tolerations.
			// p (empty, tainted spot:PreferNoSchedule -> 500/1000): least 3500*100/4000 = 87, 7000*100/8000 = 87 -> 87;
			//   balanced 0.125 vs 0.125 -> 100; intolerable taints 1 of max 1: reversed 0; 87+100+0 = 187
			// q (3000/6000 -> 3500/7000): least 500*100/4000 = 12, 1000*100/8000 = 12 -> 12;
			//   balanced 0.875 vs 0.875 -> 100; no taint: 100*3 = 300; 12+100+300 = 412
			name:     "an intolerable PreferNoSchedule taint outweighs free space",
			strategy: LeastAllocatedStrategy,
			nodes:    []sim.Node{mkNode("p", 4000, 8000, 0, 0, taints(spot)), mkNode("q", 4000, 8000, 3000, 6000)},
			pod:      mkPod(500, 1000),
			want:     []int64{187, 412},
			pick:     1,
		},
		{
			// The same with a toleration for spot: no candidate has an intolerable
			// taint, every node gets 300; p: 87+100+300 = 487, q: 412.
			name:     "a tolerated PreferNoSchedule taint does not matter",
			strategy: LeastAllocatedStrategy,
			nodes:    []sim.Node{mkNode("p", 4000, 8000, 0, 0, taints(spot)), mkNode("q", 4000, 8000, 3000, 6000)},
			pod:      withTolerations(mkPod(500, 1000), sim.Toleration{Key: "spot", Exists: true}),
			want:     []int64{487, 412},
			pick:     0,
		},
		{
			// Pod 1000m/2000Mi preferring zone a with weight 10.
			// r (zone a, 2000/4000 -> 3000/6000): least 25, 25 -> 25; balanced 100; taint 300;
			//   affinity 10 of max 10 -> 100, *2 = 200; 25+100+300+200 = 625
			// s (zone b, empty -> 1000/2000): least 75, 75 -> 75; balanced 100; taint 300; affinity 0; 475
			name:     "preferred node affinity outweighs free space",
			strategy: LeastAllocatedStrategy,
			nodes: []sim.Node{
				mkNode("r", 4000, 8000, 2000, 4000, labels(sim.LabelZone, "a")),
				mkNode("s", 4000, 8000, 0, 0, labels(sim.LabelZone, "b")),
			},
			pod: withAffinity(mkPod(1000, 2000), &sim.Affinity{Preferred: []sim.PreferredTerm{
				{Weight: 10, Term: sim.Term{{Key: sim.LabelZone, Op: sim.OpIn, Values: []string{"a"}}}},
			}}),
			want: []int64{625, 475},
			pick: 0,
		},
		{
			// A request-less pod on 1000m/1000Mi nodes: NodeResourcesFit counts it
			// as 100m/200Mi and BalancedAllocation skips it.
			// e (empty -> 100/200): least 900*100/1000 = 90, 800*100/1000 = 80 -> 85; 85+300 = 385
			// f (500/0 -> 600/200): least 40, 80 -> 60; 60+300 = 360
			name:     "non-zero default requests of a request-less pod",
			strategy: LeastAllocatedStrategy,
			nodes:    []sim.Node{mkNode("e", 1000, 1000, 0, 0), mkNode("f", 1000, 1000, 500, 0)},
			pod:      mkPod(0, 0),
			want:     []int64{385, 360},
			pick:     0,
		},
		{
			// Pod 500m/1000Mi on two balanced nodes.
			// m (1000/2000 -> 1500/3000): least 2500*100/4000 = 62, 5000*100/8000 = 62 -> 62; balanced 100; 462
			// n (3000/6000 -> 3500/7000): least 12, 12 -> 12; balanced 100; 412
			name:     "least allocated spreads",
			strategy: LeastAllocatedStrategy,
			nodes:    []sim.Node{mkNode("m", 4000, 8000, 1000, 2000), mkNode("n", 4000, 8000, 3000, 6000)},
			pod:      mkPod(500, 1000),
			want:     []int64{462, 412},
			pick:     0,
		},
		{
			// The same with MostAllocated:
			// m: most 1500*100/4000 = 37, 3000*100/8000 = 37 -> 37; 37+100+300 = 437
			// n: most 3500*100/4000 = 87, 7000*100/8000 = 87 -> 87; 87+100+300 = 487
			name:     "most allocated packs",
			strategy: MostAllocatedStrategy,
			nodes:    []sim.Node{mkNode("m", 4000, 8000, 1000, 2000), mkNode("n", 4000, 8000, 3000, 6000)},
			pod:      mkPod(500, 1000),
			want:     []int64{437, 487},
			pick:     1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := sim.NewCluster(0, tt.nodes...)
			f, err := NewKubeDefault(1, KubeDefaultOptions{Strategy: tt.strategy})
			if err != nil {
				t.Fatal(err)
			}
			if got := f.Scores(c, tt.pod, nil); !slices.Equal(got, tt.want) {
				t.Errorf("Scores = %v; want %v", got, tt.want)
			}
			if got := f.Schedule(c, tt.pod); got != tt.pick {
				t.Errorf("Schedule = %d; want %d", got, tt.pick)
			}
		})
	}
}
