package sched

import (
	"errors"
	"slices"
	"testing"

	"github.com/kubesim/kubesim/sim"
)

// gpuNode builds a GPU node: allocatable CPU (millicores), CPU in use, GPU
// model and free milli per device; memory 64 GiB, none used.
func gpuNode(cpu, cpuUsed int64, model int8, free ...int16) sim.GPUNode {
	g := sim.NewGPUs(len(free), model)
	copy(g.Free[:], free)
	g.Refresh()
	return sim.GPUNode{CPU: cpu, CPUUsed: cpuUsed, Mem: 65536, GPU: g}
}

// threeNodes is the cluster of the hand-computed cases:
//
//	n0: 96 CPUs free, 8 idle GPUs of model 0, no GPU pod
//	n1: 8 of 32 CPUs free, GPUs of model 0 with 1000, 300, 0, 1000 free;
//	    one GPU-sharing pod and one pod of one whole GPU
//	n2: 16 CPUs free, GPUs of model 1 with 500, 1000 free; one sharing pod
func threeNodes() *sim.GPUCluster {
	n0 := gpuNode(96000, 0, 0, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000)
	n1 := gpuNode(32000, 24000, 0, 1000, 300, 0, 1000)
	n1.Tags[0], n1.Tags[1] = 1, 1
	n2 := gpuNode(16000, 0, 1, 500, 1000)
	n2.Tags[0] = 1
	return &sim.GPUCluster{
		Nodes: []sim.GPUNode{n0, n1, n2},
		Rank:  []int32{0, 1, 2},
		// FGD's distribution: GPU shares of 500 m (60%), one whole GPU (40%)
		Types: []sim.TypeShare{
			{PodType: sim.PodType{CPU: 4000, GPU: sim.GPURequest{Count: 1, Milli: 500}}, P: 0.6},
			{PodType: sim.PodType{CPU: 4000, GPU: sim.GPURequest{Count: 1, Milli: 1000}}, P: 0.4},
		},
		TypeOf:   []int32{0, 1, 2, 3},
		NumTypes: 4,
	}
}

var (
	podShare400 = sim.GPUPodSpec{Name: "share400", CPU: 4000, Mem: 1024, GPU: sim.GPURequest{Count: 1, Milli: 400}}
	podWhole1   = sim.GPUPodSpec{Name: "whole1", CPU: 4000, Mem: 1024, GPU: sim.GPURequest{Count: 1, Milli: 1000}}
	podCPU      = sim.GPUPodSpec{Name: "cpu", CPU: 2000, Mem: 1024}
	podShare500 = sim.GPUPodSpec{Name: "share500", CPU: 4000, Mem: 1024, GPU: sim.GPURequest{Count: 1, Milli: 500}}
	podBig      = sim.GPUPodSpec{Name: "big", CPU: 16000, Mem: 1024, GPU: sim.GPURequest{Count: 1, Milli: 1000}}
)

func TestGPUPoliciesHandComputed(t *testing.T) {
	tests := []struct {
		name   string
		sched  string
		pod    sim.GPUPodSpec
		podIdx int     // index into TypeOf (FGD's cache key)
		rank   []int32 // nil: node order
		scores [3]int64
		node   int
		gpus   sim.GPUMask
	}{
		// dot-product: 100 x (1 - (cpuFree/128000 x cpu/128000 +
		// gpuFree/8000 x gpu/8000)/2), truncated.
		// n0: 0.75 x 0.03125 + 1 x 0.05 = 0.0734375 -> 96.33 -> 96
		// n1: 0.0625 x 0.03125 + 0.2875 x 0.05 = 0.016328125 -> 99.18 -> 99
		// n2: 0.125 x 0.03125 + 0.1875 x 0.05 = 0.01328125 -> 99.34 -> 99
		// n1 and n2 tie at 99: the lower rank, n1; its share goes to the
		// device with the least free that fits: devices 0 and 3 (1000), the
		// lower index 0.
		{"dot-product tie", NameDotProduct, podShare400, 0, nil, [3]int64{96, 99, 99}, 1, 0b0001},
		// the same with n2 ranked first: n2, whose 500 m device fits best
		{"dot-product rank", NameDotProduct, podShare400, 0, []int32{2, 1, 0}, [3]int64{96, 99, 99}, 2, 0b01},
		// 16 CPUs and one GPU: n1 lacks the CPU (not scored, -1 below).
		// n0: 0.75 x 0.125 + 1 x 0.125 = 0.21875 -> 89.06 -> 89
		// n2: 0.125 x 0.125 + 0.1875 x 0.125 = 0.0390625 -> 98.05 -> 98
		{"dot-product big", NameDotProduct, podBig, 0, nil, [3]int64{89, -1, 98}, 2, 0b10},
		// gpu-clustering: u = 25 x (8000 - free)/8000 in integers:
		// n0 free 8000 -> 0, n1 2300 -> 17, n2 1500 -> 20.
		// a share: n0 has no GPU pod: 0+25; n1 has shares among other
		// kinds: 17+50; n2 only shares: 20+75
		{"gpu-clustering share", NameGPUClustering, podShare400, 0, nil, [3]int64{25, 67, 95}, 2, 0b01},
		// one whole GPU: n0 25; n1 has one-GPU pods among others: 67; n2
		// only shares: 20. n1's first idle device is 0.
		{"gpu-clustering whole", NameGPUClustering, podWhole1, 0, nil, [3]int64{25, 67, 20}, 1, 0b0001},
		// a CPU-only pod scores 0 everywhere: the lowest rank, n1 here
		{"gpu-clustering cpu", NameGPUClustering, podCPU, 0, []int32{2, 0, 1}, [3]int64{0, 0, 0}, 1, 0},
		// gpu-packing: n0 is all idle: max(33 - 8, 8) = 25.
		// n1, devices by free ascending 0, 300, 1000, 1000: the share takes
		// an idle one: max(50 - 1, 33) = 49.
		// n2, 500 then 1000: the share fits the used 500: max(100 - 50/10, 50) = 95
		{"gpu-packing share", NameGPUPacking, podShare400, 0, nil, [3]int64{25, 49, 95}, 2, 0b01},
		// one whole GPU takes an idle device on n1 and on n2: 49 each; the
		// tie goes to n1 (lower rank)
		{"gpu-packing whole", NameGPUPacking, podWhole1, 0, nil, [3]int64{25, 49, 49}, 1, 0b0001},
		// best-fit: 100 x (1 - ((cpuFree-cpu)/128000 + (gpuFree-gpu)/8000)/2), truncated
		// n0: (92000/128000 + 7600/8000)/2 = 0.834375 -> 16.56 -> 16
		// n1: (4000/128000 + 1900/8000)/2 = 0.134375 -> 86.56 -> 86
		// n2: (12000/128000 + 1100/8000)/2 = 0.115625 -> 88.44 -> 88
		{"best-fit share", NameBestFit, podShare400, 0, nil, [3]int64{16, 86, 88}, 2, 0b01},
		// a CPU-only pod goes where the fewest GPUs are left too:
		// n0: (94000/128000 + 1)/2 = 0.8671875 -> 13; n1: (6000/128000 +
		// 2300/8000)/2 = 0.1671875 -> 83; n2: (14000/128000 + 1500/8000)/2 =
		// 0.1484375 -> 85
		{"best-fit cpu", NameBestFit, podCPU, 0, nil, [3]int64{13, 83, 85}, 2, 0},
		// kube-default: LeastAllocated + BalancedAllocation over CPU and
		// memory (1 GiB of 64 GiB: mem least 98, fraction 0.015625).
		// n0: cpu (92000x100/96000) = 95, (95+98)/2 = 96; balanced
		//     1 - |0.041667-0.015625|/2 -> 98; 194
		// n1: cpu 4000x100/32000 = 12, (12+98)/2 = 55; 1 - |0.875-0.015625|/2 -> 57; 112
		// n2: cpu 12000x100/16000 = 75, (75+98)/2 = 86; 1 - |0.25-0.015625|/2 -> 88; 174
		{"kube-default", NameKubeDefault, podShare400, 0, nil, [3]int64{194, 112, 174}, 0, 0b00000001},
		// fgd over the types share 500 (0.6) and one GPU (0.4), the pod a
		// share of 500 (type 0). frag = sum p x (fits ? free of the devices
		// short of the type : all free).
		// n0 before: 0 (every device idle). After a device at 500: share
		//   fits, short 0; one GPU fits, short 500: 0.4 x 500 = 200.
		//   delta -200: 100 x sigmoid(-0.2) = 45.0 -> 45 (device 0 first).
		// n1 before: share short 300 (devices at 300, 0): 180; one GPU 120:
		//   300. After device 0 at 500: share 180; one GPU short 800: 320:
		//   500. delta -200 -> 45.
		// n2 before: share 0; one GPU short 500: 200. Device 0 (500) to 0:
		//   share fits on device 1, short 0; one GPU fits, short 0: frag 0,
		//   delta +200 -> 100 x sigmoid(0.2) = 54.98 -> 54. Device 1 to
		//   500: one GPU no longer fits: 0.4 x 1000 = 400, delta -200 -> 45.
		//   So device 0.
		{"fgd share", NameFGD, podShare500, 0, nil, [3]int64{45, 45, 54}, 2, 0b01},
		// fgd-balance: FGD's score minus round(10 x the change in GPUs
		// stranded by CPU), stranded = max(0, free milli - free CPU / r),
		// r = (0.6 x 4000 + 0.4 x 4000) / (0.6 x 500 + 0.4 x 1000) = 4000/700
		// CPU millicores per milli-GPU.
		// n0: 96000/r = 16800 > 8000 free milli, after 92000/r = 16100 >
		//   7500: none stranded, 45.
		// n1: 8000/r = 1400 against 2300 free: 900 stranded; after 4000/r =
		//   700 against 1800: 1100. +200 milli: -2, 43.
		// n2: 16000/r = 2800 > 1500, 12000/r = 2100 > 1000: none, 54.
		{"fgd-balance share", NameFGDBalance, podShare500, 0, nil, [3]int64{45, 43, 54}, 2, 0b01},
		// a CPU-only pod of 2 CPUs changes no type's fit anywhere: FGD ties
		// at 50 on every node, and the rank (n1 first) decides.
		{"fgd cpu-only", NameFGD, podCPU, 0, []int32{1, 0, 2}, [3]int64{50, 50, 50}, 1, 0},
		// fgd-balance: n1 strands 900 -> 6000/r = 1050 against 2300: 1250,
		// +350 milli: round(3.5) = 4, 46; n0 and n2 keep CPU for every
		// free GPU. n0 and n2 tie at 50: n0, ranked before n2.
		{"fgd-balance cpu-only", NameFGDBalance, podCPU, 0, []int32{1, 0, 2}, [3]int64{50, 46, 50}, 0, 0},
		// fgd-tiers: FGD's score / 3 x 2^20 + 2^19 - the change in stranded
		// milli-GPU (above): share 500 in tiers 15, 15, 18, n1 200 more
		// stranded.
		{"fgd-tiers share", NameFGDTiers, podShare500, 0, nil, [3]int64{15<<20 + 1<<19, 15<<20 + 1<<19 - 200, 18<<20 + 1<<19}, 2, 0b01},
		// the CPU-only pod: one tier (50 / 3 = 16); n1 strands 350 more;
		// n0 and n2 tie, n0 by rank. FGD took n1.
		{"fgd-tiers cpu-only", NameFGDTiers, podCPU, 0, []int32{1, 0, 2}, [3]int64{16<<20 + 1<<19, 16<<20 + 1<<19 - 350, 16<<20 + 1<<19}, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := threeNodes()
			if tc.rank != nil {
				c.Rank = tc.rank
			}
			s, err := NewGPU(tc.sched, 1)
			if err != nil {
				t.Fatal(err)
			}
			f := s.(*gpuFramework)
			f.score.prepare(c, tc.podIdx, &tc.pod)
			var got [3]int64
			for i := range c.Nodes {
				got[i] = -1
				if c.Nodes[i].Fits(&tc.pod) {
					got[i] = f.score.score(c, i, &tc.pod)
				}
			}
			if got != tc.scores {
				t.Errorf("scores = %v; want %v", got, tc.scores)
			}
			node, m := s.Schedule(c, tc.podIdx, &tc.pod)
			if node != tc.node || m != tc.gpus {
				t.Errorf("Schedule = node %d GPUs %08b; want node %d GPUs %08b", node, m, tc.node, tc.gpus)
			}
		})
	}
}

func TestGPURandomPicksFeasibleNodesAndDevices(t *testing.T) {
	// one whole GPU with 16 CPUs: n1 lacks the CPU, so only n0 and n2 are
	// feasible; a share of 600 fits n0's idle devices and n2's device 1
	// only (500 < 600)
	seen := map[int]int{}
	for seed := range uint64(200) {
		c := threeNodes()
		s, _ := NewGPU(NameRandom, seed)
		node, m := s.Schedule(c, 0, &podBig)
		if node != 0 && node != 2 {
			t.Fatalf("seed %d: node %d; want 0 or 2", seed, node)
		}
		seen[node]++
		share := sim.GPUPodSpec{CPU: 1000, GPU: sim.GPURequest{Count: 1, Milli: 600}}
		node, m = s.Schedule(c, 0, &share)
		if !c.Nodes[node].GPU.CanTake(share.GPU, m) || node == 2 && m != 0b10 {
			t.Fatalf("seed %d: share on node %d GPUs %08b", seed, node, m)
		}
	}
	if seen[0] == 0 || seen[2] == 0 {
		t.Errorf("over 200 seeds the picks were %v; want both feasible nodes", seen)
	}
}

func TestGPUSchedulerNoFit(t *testing.T) {
	// nine whole GPUs fit nowhere
	p := sim.GPUPodSpec{CPU: 1, GPU: sim.GPURequest{Count: 8, Milli: 1000}}
	c := threeNodes()
	c.Nodes[0].GPU.Take(sim.GPURequest{Count: 1, Milli: 1000}, 1)
	for _, name := range GPUNames() {
		s, _ := NewGPU(name, 1)
		if node, m := s.Schedule(c, 0, &p); node != -1 || m != 0 {
			t.Errorf("%s: node %d GPUs %08b; want -1, 0", name, node, m)
		}
	}
}

func TestNewGPUUnknown(t *testing.T) {
	if _, err := NewGPU("tetris", 1); !errors.Is(err, ErrUnknownScheduler) {
		t.Errorf("NewGPU(tetris) = %v; want ErrUnknownScheduler", err)
	}
	want := []string{"random", "dot-product", "gpu-clustering", "gpu-packing", "best-fit", "fgd", "kube-default", "fgd-balance", "fgd-tiers", "fgd-guard"}
	if got := GPUNames(); !slices.Equal(got, want) {
		t.Errorf("GPUNames = %v; want %v", got, want)
	}
}

// TestFGDCacheMatchesRecompute checks that FGD's cache gives the scores
// of a fresh computation after placements change nodes.
func TestFGDCacheMatchesRecompute(t *testing.T) {
	c := threeNodes()
	s, _ := NewGPU(NameFGD, 1)
	// the pod index passed is one per pod type (TypeOf is the identity)
	pods := []sim.GPUPodSpec{podShare500, podWhole1, podShare400, podCPU, podShare500, podShare500, podWhole1}
	types := []int{0, 1, 2, 3, 0, 0, 1}
	for k, p := range pods {
		idx := types[k]
		node, m := s.Schedule(c, idx, &p)
		fresh, _ := NewGPU(NameFGD, 1)
		if n2, m2 := fresh.Schedule(c, idx, &p); n2 != node || m2 != m {
			t.Fatalf("pod %d: cached decision node %d %08b, fresh %d %08b", k, node, m, n2, m2)
		}
		if node >= 0 && !c.Place(node, &p, m) {
			t.Fatalf("pod %d: does not fit where FGD put it", k)
		}
	}
}

// TestGPUScheduleAllocatesNothing: a decision allocates nothing once a
// scheduler's buffers (FGD's cache) exist.
func TestGPUScheduleAllocatesNothing(t *testing.T) {
	for _, name := range GPUNames() {
		c := threeNodes()
		s, _ := NewGPU(name, 1)
		s.Schedule(c, 0, &podShare400)
		if n := testing.AllocsPerRun(50, func() { s.Schedule(c, 0, &podShare400) }); n != 0 {
			t.Errorf("%s: %v allocations a decision; want 0", name, n)
		}
	}
}
