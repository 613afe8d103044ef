package sched

import (
	"slices"
	"testing"

	"github.com/kubesim/kubesim/sim"
)

// Cases ported from kubernetes/kubernetes
// pkg/scheduler/framework/plugins/noderesources/balanced_allocation_test.go
// (TestNodeResourcesBalancedAllocation), as vectors: requested = the node's
// requests plus the incoming pod's (plain requests, no defaults). A resource
// the pod does not request and the node does not have is passed with
// allocatable 0, as upstream's resource_allocation.go does.
func TestBalancedAllocation(t *testing.T) {
	tests := []struct {
		name             string
		requested, alloc []int64
		want             int64
	}{
		// node1: cpu 3000/4000 = 0.75, mem 5000/10000 = 0.5; std (0.75-0.5)/2 = 0.125; (1-0.125)*100 = 87.5 -> 87
		{"nothing scheduled, resources requested, node1", []int64{3000, 5000}, []int64{4000, 10000}, 87},
		// node2: 3000/6000 = 0.5, 0.5; std 0 -> 100
		{"nothing scheduled, resources requested, node2", []int64{3000, 5000}, []int64{6000, 10000}, 100},
		// node1: 6000/10000 = 0.6, 5000/20000 = 0.25; std 0.175; 82.5 -> 82
		{"resources requested, pods scheduled with resources, node1", []int64{6000, 5000}, []int64{10000, 20000}, 82},
		// node2: 0.6, 10000/20000 = 0.5; std 0.05; 95
		{"resources requested, pods scheduled with resources, node2", []int64{6000, 10000}, []int64{10000, 20000}, 95},
		// node2 differently sized: 0.6, 10000/50000 = 0.2; std 0.2; 80
		{"differently sized nodes, node2", []int64{6000, 10000}, []int64{10000, 50000}, 80},
		// node1: 6000/6000 = 1, 0/10000 = 0; std 0.5; 50
		{"requested resources at node capacity, node1", []int64{6000, 0}, []int64{6000, 10000}, 50},
		// node2: 1, 5000/10000 = 0.5; std 0.25; 75
		{"requested resources at node capacity, node2", []int64{6000, 5000}, []int64{6000, 10000}, 75},
		// (cpu, mem, gpu) node1: 3000/3500 = 0.8571, 5000/40000 = 0.125, 4/8 = 0.5;
		// mean 0.4940; std sqrt((0.3631^2 + 0.3690^2 + 0.0060^2)/3) = 0.2989; (1-0.2989)*100 = 70.1 -> 70
		{"include scalar resource, node1", []int64{3000, 5000, 4}, []int64{3500, 40000, 8}, 70},
		// node2: 0.8571, 0.125, 1/8 = 0.125; mean 0.3690;
		// std sqrt((0.4881^2 + 0.2440^2 + 0.2440^2)/3) = 0.3451; 65.5 -> 65
		{"include scalar resource, node2", []int64{3000, 5000, 1}, []int64{3500, 40000, 8}, 65},
		// the pod does not request the scalar resource: it is skipped (allocatable 0);
		// 0.8571, 0.125; std 0.3661; 63.4 -> 63
		{"node without the scalar resource should skip it", []int64{3000, 5000, 0}, []int64{3500, 40000, 0}, 63},
		// DRA-backed resource, node1: 3000/3500 = 0.8571, 0/40000 = 0, 1/8 = 0.125; mean 0.3274;
		// std sqrt((0.5298^2 + 0.3274^2 + 0.2024^2)/3) = 0.3780; 62.2 -> 62
		{"include DRA resource, node1", []int64{3000, 0, 1}, []int64{3500, 40000, 8}, 62},
		// node2 has no device: 0.8571, 0.125; 63
		{"include DRA resource, node2", []int64{3000, 5000, 0}, []int64{3500, 40000, 0}, 63},
		// one resource left: std 0; 100
		{"single resource", []int64{3000, 0}, []int64{3500, 0}, 100},
		// over-commitment caps each fraction at 1: 1 and 1; 100
		{"both over capacity", []int64{9000, 9000}, []int64{3000, 3000}, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := BalancedAllocation(tt.requested, tt.alloc); got != tt.want {
				t.Errorf("BalancedAllocation(%v, %v) = %d; want %d", tt.requested, tt.alloc, got, tt.want)
			}
		})
	}
}

func TestBalancedAllocationScore(t *testing.T) {
	nodes := []sim.Node{
		mkNode("node1", 10000, 20000, 3000, 0),    // holds upstream's cpuOnly pod
		mkNode("node2", 10000, 20000, 3000, 5000), // holds upstream's cpuAndMemory pod
	}
	pl := NodeResourcesBalancedAllocation{}
	dst := make([]int64, 2)
	// Upstream "resources requested, pods scheduled with resources": the
	// pod asks 3000m/5000Mi; node1 0.6/0.25 -> 82, node2 0.6/0.5 -> 95.
	if !pl.Score(nodes, mkPod(3000, 5000).Spec, allCand(2), dst) {
		t.Fatal("Score returned false for a pod with requests; want true")
	}
	if want := []int64{82, 95}; !slices.Equal(dst, want) {
		t.Errorf("scores = %v; want %v", dst, want)
	}
	// Upstream "nothing scheduled, nothing requested, skip in PreScore":
	// best-effort pods are skipped.
	if pl.Score(nodes, mkPod(0, 0).Spec, allCand(2), dst) {
		t.Error("Score returned true for a best-effort pod; want false (skip)")
	}
}
