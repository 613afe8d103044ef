package sched

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kubesim/kubesim/sim"
)

// Cases ported from kubernetes/kubernetes
// pkg/scheduler/framework/plugins/noderesources/least_allocated_test.go
// (TestLeastAllocatedScoringStrategy). Upstream states nodes and pods; here
// each case is the resulting vectors: requested = the node's (non-zero)
// requests plus the incoming pod's, in the resource order of weights.
// The extended-resource cases use a third resource.
func TestLeastAllocated(t *testing.T) {
	tests := []struct {
		name                string
		requested, alloc, w []int64
		want                int64
	}{
		// nothing scheduled, nothing requested:
		// cpu (4000-0)*100/4000 = 100, mem (10000-0)*100/10000 = 100; (100+100)/2 = 100
		{"nothing scheduled, nothing requested", []int64{0, 0}, []int64{4000, 10000}, []int64{1, 1}, 100},
		// node1: cpu (4000-3000)*100/4000 = 25, mem (10000-5000)*100/10000 = 50; (25+50)/2 = 37
		{"nothing scheduled, resources requested, node1", []int64{3000, 5000}, []int64{4000, 10000}, []int64{1, 1}, 37},
		// node2: cpu (6000-3000)*100/6000 = 50, mem 50; (50+50)/2 = 50
		{"nothing scheduled, resources requested, node2", []int64{3000, 5000}, []int64{6000, 10000}, []int64{1, 1}, 50},
		// node1: cpu (10000-6000)*100/10000 = 40, mem (20000-0)*100/20000 = 100; (40+100)/2 = 70
		{"no resources requested, pods scheduled with resources, node1", []int64{6000, 0}, []int64{10000, 20000}, []int64{1, 1}, 70},
		// node2: cpu 40, mem (20000-5000)*100/20000 = 75; (40+75)/2 = 57
		{"no resources requested, pods scheduled with resources, node2", []int64{6000, 5000}, []int64{10000, 20000}, []int64{1, 1}, 57},
		// node1: cpu 40, mem (20000-5000)*100/20000 = 75; 57
		{"resources requested, pods scheduled with resources, node1", []int64{6000, 5000}, []int64{10000, 20000}, []int64{1, 1}, 57},
		// node2: cpu 40, mem (20000-10000)*100/20000 = 50; (40+50)/2 = 45
		{"resources requested, pods scheduled with resources, node2", []int64{6000, 10000}, []int64{10000, 20000}, []int64{1, 1}, 45},
		// node2 of the differently sized case: cpu 40, mem (50000-10000)*100/50000 = 80; (40+80)/2 = 60
		{"resources requested, pods scheduled with resources, differently sized nodes", []int64{6000, 10000}, []int64{10000, 50000}, []int64{1, 1}, 60},
		// node1: cpu 6000 > 4000 scores 0, mem 100; (0+100)/2 = 50
		{"requested resources exceed node capacity, node1", []int64{6000, 0}, []int64{4000, 10000}, []int64{1, 1}, 50},
		// node2: cpu 0, mem (10000-5000)*100/10000 = 50; (0+50)/2 = 25
		{"requested resources exceed node capacity, node2", []int64{6000, 5000}, []int64{4000, 10000}, []int64{1, 1}, 25},
		// every allocatable is 0: every resource is skipped, weightSum 0 gives 0
		{"zero node resources", []int64{3000, 5000}, []int64{0, 0}, []int64{1, 1}, 0},
		// weights cpu 1, memory 2; node1: cpu 25, mem 50; (25*1+50*2)/(1+2) = 125/3 = 41
		{"different weight on CPU and memory, node1", []int64{3000, 5000}, []int64{4000, 10000}, []int64{1, 2}, 41},
		// node2: cpu 50, mem 50; (50+100)/3 = 50
		{"different weight on CPU and memory, node2", []int64{3000, 5000}, []int64{6000, 10000}, []int64{1, 2}, 50},
		// resources (ext weight 2, cpu 1, mem 1); the node lacks ext (allocatable 0, skipped):
		// cpu (6000-3000)*100/6000 = 50, mem (10000-4000)*100/10000 = 60; (50+60)/2 = 55
		{"if the node doesn't have a resource", []int64{0, 3000, 4000}, []int64{0, 6000, 10000}, []int64{2, 1, 1}, 55},
		// (cpu, mem, ext) weights 1 each; node1: 50, 50, ext (4-2)*100/4 = 50; 150/3 = 50
		{"honor extended resource if the pod requests, node1", []int64{3000, 5000, 2}, []int64{6000, 10000, 4}, []int64{1, 1, 1}, 50},
		// node2: 50, 50, ext (10-2)*100/10 = 80; 180/3 = 60
		{"honor extended resource if the pod requests, node2", []int64{3000, 5000, 2}, []int64{6000, 10000, 10}, []int64{1, 1, 1}, 60},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := LeastAllocated(tt.requested, tt.alloc, tt.w); got != tt.want {
				t.Errorf("LeastAllocated(%v, %v, %v) = %d; want %d", tt.requested, tt.alloc, tt.w, got, tt.want)
			}
		})
	}
}

// Cases ported from kubernetes/kubernetes
// pkg/scheduler/framework/plugins/noderesources/most_allocated_test.go
// (TestMostAllocatedScoringStrategy), as vectors like TestLeastAllocated.
func TestMostAllocated(t *testing.T) {
	tests := []struct {
		name                string
		requested, alloc, w []int64
		want                int64
	}{
		// cpu 0*100/4000 = 0, mem 0; 0
		{"nothing scheduled, nothing requested", []int64{0, 0}, []int64{4000, 10000}, []int64{1, 1}, 0},
		// node1: cpu 3000*100/4000 = 75, mem 5000*100/10000 = 50; (75+50)/2 = 62
		{"nothing scheduled, resources requested, node1", []int64{3000, 5000}, []int64{4000, 10000}, []int64{1, 1}, 62},
		// node2: cpu 3000*100/6000 = 50, mem 50; 50
		{"nothing scheduled, resources requested, node2", []int64{3000, 5000}, []int64{6000, 10000}, []int64{1, 1}, 50},
		// node1: cpu 6000*100/10000 = 60, mem 0; 30
		{"no resources requested, pods scheduled with resources, node1", []int64{6000, 0}, []int64{10000, 20000}, []int64{1, 1}, 30},
		// node2: cpu 60, mem 5000*100/20000 = 25; (60+25)/2 = 42
		{"no resources requested, pods scheduled with resources, node2", []int64{6000, 5000}, []int64{10000, 20000}, []int64{1, 1}, 42},
		// node1: cpu 60, mem 25; 42
		{"resources requested, pods scheduled with resources, node1", []int64{6000, 5000}, []int64{10000, 20000}, []int64{1, 1}, 42},
		// node2: cpu 60, mem 10000*100/20000 = 50; 55
		{"resources requested, pods scheduled with resources, node2", []int64{6000, 10000}, []int64{10000, 20000}, []int64{1, 1}, 55},
		// node1: cpu 5000*100/5000 = 100, mem 9000*100/10000 = 90; 95
		{"resources requested equal node capacity, node1", []int64{5000, 9000}, []int64{5000, 10000}, []int64{1, 1}, 95},
		// node2: cpu 5000*100/10000 = 50, mem 9000*100/9000 = 100; 75
		{"resources requested equal node capacity, node2", []int64{5000, 9000}, []int64{10000, 9000}, []int64{1, 1}, 75},
		// weights cpu 1, memory 2; node1: cpu 75, mem 50; (75+100)/3 = 58
		{"different weight on CPU and memory, node1", []int64{3000, 5000}, []int64{4000, 10000}, []int64{1, 2}, 58},
		// node2: 50, 50; 50
		{"different weight on CPU and memory, node2", []int64{3000, 5000}, []int64{6000, 10000}, []int64{1, 2}, 50},
		// 250m/1000Mi nodes; node1 holds two request-less pods, so with the
		// incoming one it counts 3 x (100m, 200Mi) = 300m/600Mi: cpu capped
		// at 250 gives 100, mem 600*100/1000 = 60; (100+60)/2 = 80
		{"nonzero request for resource, node1", []int64{300, 600}, []int64{250, 1000}, []int64{1, 1}, 80},
		// node2: only the incoming pod, 100m/200Mi: cpu 40, mem 20; 30
		{"nonzero request for resource, node2", []int64{100, 200}, []int64{250, 1000}, []int64{1, 1}, 30},
		// (cpu, mem, ext); node1: 3000*100/6000 = 50, 50, ext 2*100/4 = 50; 50
		{"honor extended resource if the pod request, node1", []int64{3000, 5000, 2}, []int64{6000, 10000, 4}, []int64{1, 1, 1}, 50},
		// node2: 50, 50, ext 2*100/10 = 20; 120/3 = 40
		{"honor extended resource if the pod request, node2", []int64{3000, 5000, 2}, []int64{6000, 10000, 10}, []int64{1, 1, 1}, 40},
		// (ext weight 2, cpu, mem); ext skipped: cpu 3000*100/6000 = 50, mem 4000*100/10000 = 40; 45
		{"if the node doesn't have a resource", []int64{0, 3000, 4000}, []int64{0, 6000, 10000}, []int64{2, 1, 1}, 45},
		// no allocatable at all
		{"zero node resources", []int64{3000, 5000}, []int64{0, 0}, []int64{1, 1}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MostAllocated(tt.requested, tt.alloc, tt.w); got != tt.want {
				t.Errorf("MostAllocated(%v, %v, %v) = %d; want %d", tt.requested, tt.alloc, tt.w, got, tt.want)
			}
		})
	}
}

// TestResourceScoresTwoDimMatchSlices checks that the (cpu, memory) versions
// the score loops fall back on, allocated2 and balanced2, agree with the
// exported functions, over random inputs including zero allocatable and
// over-commitment.
func TestResourceScoresTwoDimMatchSlices(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	edges := []int64{1, 2, 3, percentFloatLimit - 1, percentFloatLimit, percentFloatLimit + 1, 1 << 50}
	val := func() int64 {
		switch r.IntN(12) {
		case 0:
			return 0
		case 1:
			return r.Int64N(1 << 40)
		case 2:
			return edges[r.IntN(len(edges))]
		case 3: // small values make exact integer percentages and ties common
			return 1 + r.Int64N(20)
		}
		return r.Int64N(200000)
	}
	for i := range 100000 {
		req := sim.Resources{CPU: val(), Mem: val()}
		alloc := sim.Resources{CPU: val(), Mem: val()}
		w := [2]int64{1 + r.Int64N(100), 1 + r.Int64N(100)}
		rs, as, ws := []int64{req.CPU, req.Mem}, []int64{alloc.CPU, alloc.Mem}, w[:]
		if got, want := allocated2(false, req, alloc, w), LeastAllocated(rs, as, ws); got != want {
			t.Fatalf("case %d: allocated2(least, %v, %v, %v) = %d; LeastAllocated = %d", i, req, alloc, w, got, want)
		}
		if got, want := allocated2(true, req, alloc, w), MostAllocated(rs, as, ws); got != want {
			t.Fatalf("case %d: allocated2(most, %v, %v, %v) = %d; MostAllocated = %d", i, req, alloc, w, got, want)
		}
		if got, want := balanced2(req, alloc), BalancedAllocation(rs, as); got != want {
			t.Fatalf("case %d: balanced2(%v, %v) = %d; BalancedAllocation = %d", i, req, alloc, got, want)
		}
	}
}

func TestNonZeroRequests(t *testing.T) {
	tests := []struct {
		name string
		in   sim.Resources
		want sim.Resources
	}{
		{"both set", sim.Resources{CPU: 250, Mem: 512}, sim.Resources{CPU: 250, Mem: 512}},
		{"no cpu", sim.Resources{CPU: 0, Mem: 512}, sim.Resources{CPU: 100, Mem: 512}},
		{"no memory", sim.Resources{CPU: 250, Mem: 0}, sim.Resources{CPU: 250, Mem: 200}},
		{"best effort", sim.Resources{}, sim.Resources{CPU: 100, Mem: 200}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NonZeroRequests(tt.in); got != tt.want {
				t.Errorf("NonZeroRequests(%v) = %v; want %v", tt.in, got, tt.want)
			}
		})
	}
}

// TestNodeResourcesFitScore runs the plugin itself on sim nodes, including
// the non-zero defaults for a request-less pod.
func TestNodeResourcesFitScore(t *testing.T) {
	tests := []struct {
		name     string
		strategy ScoringStrategy
		nodes    []sim.Node
		pod      *sim.Pod
		want     []int64
	}{
		{
			// node1 (4000m/10000Mi): cpu (4000-3000)*100/4000 = 25, mem (10000-5000)*100/10000 = 50 -> 37
			// node2 (6000m/10000Mi): cpu 50, mem 50 -> 50
			name:     "least allocated, differently sized nodes",
			strategy: LeastAllocatedStrategy,
			nodes:    []sim.Node{mkNode("node1", 4000, 10000, 0, 0), mkNode("node2", 6000, 10000, 0, 0)},
			pod:      mkPod(3000, 5000),
			want:     []int64{37, 50},
		},
		{
			// As upstream's "nonzero request for resource" case, with node1's
			// two request-less pods already counted at 100m/200Mi each: the
			// incoming request-less pod adds 100m/200Mi.
			// node1: 300m capped at 250 -> 100, 600/1000 -> 60; 80
			// node2: 100/250 -> 40, 200/1000 -> 20; 30
			name:     "most allocated, non-zero defaults for a request-less pod",
			strategy: MostAllocatedStrategy,
			nodes:    []sim.Node{mkNode("node1", 250, 1000, 200, 400), mkNode("node2", 250, 1000, 0, 0)},
			pod:      mkPod(0, 0),
			want:     []int64{80, 30},
		},
		{
			// A pod with a CPU request only: memory counts as 200Mi.
			// least: cpu (1000-500)*100/1000 = 50, mem (1000-200)*100/1000 = 80; 65
			name:     "least allocated, memory default only",
			strategy: LeastAllocatedStrategy,
			nodes:    []sim.Node{mkNode("node1", 1000, 1000, 0, 0)},
			pod:      mkPod(500, 0),
			want:     []int64{65},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl := NewNodeResourcesFit(tt.strategy)
			dst := make([]int64, len(tt.nodes))
			if !pl.Score(tt.nodes, tt.pod.Spec, allCand(len(tt.nodes)), dst) {
				t.Fatal("Score returned false; want true")
			}
			if !slices.Equal(dst, tt.want) {
				t.Errorf("scores = %v; want %v", dst, tt.want)
			}
		})
	}
}

func TestNodeResourcesFitFilter(t *testing.T) {
	full := mkNode("full-pods", 4000, 4000, 0, 0)
	full.Pods, full.MaxPods = 10, 10
	almost := mkNode("one-slot", 4000, 4000, 0, 0)
	almost.Pods, almost.MaxPods = 9, 10
	tests := []struct {
		name string
		node sim.Node
		pod  *sim.Pod
		want bool
	}{
		{"fits exactly", mkNode("n", 4000, 4000, 3000, 3000), mkPod(1000, 1000), true},
		{"cpu short by 1m", mkNode("n", 4000, 4000, 3001, 0), mkPod(1000, 1000), false},
		{"memory short by 1Mi", mkNode("n", 4000, 4000, 0, 3001), mkPod(1000, 1000), false},
		{"pod-count limit reached", full, mkPod(1, 1), false},
		{"last pod slot", almost, mkPod(1, 1), true},
		{"zero request on a full node", mkNode("n", 4000, 4000, 4000, 4000), mkPod(0, 0), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.node.MaxPods == 0 {
				tt.node.MaxPods = sim.DefaultMaxPods
			}
			got := len(NewNodeResourcesFit(LeastAllocatedStrategy).Filter([]sim.Node{tt.node}, tt.pod.Spec, []int32{0})) == 1
			if got != tt.want {
				t.Errorf("Filter kept the node = %v; want %v", got, tt.want)
			}
			if want := sim.FitsResources(&tt.node, tt.pod.Spec); got != want {
				t.Errorf("Filter = %v disagrees with sim.FitsResources = %v", got, want)
			}
		})
	}
}
