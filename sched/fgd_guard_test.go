package sched

import (
	"slices"
	"testing"

	"github.com/kubesim/kubesim/internal/openbtest"
	"github.com/kubesim/kubesim/sim"
)

// guardCluster: n0 has 128 CPUs and 8 idle GPUs, the only node a type of
// 100 CPUs and 8 GPUs fits; n1-n10 have 96 CPUs and 8 idle GPUs. FGD's
// distribution: that big type (0.5%, so that FGD's score keeps n0 in
// the same 3-point tier) and one whole GPU with 4 CPUs (99.5%).
func guardCluster(withBig bool) *sim.GPUCluster {
	c := &sim.GPUCluster{}
	for i := range 11 {
		cpu := int64(96000)
		if i == 0 {
			cpu = 128000
		}
		c.Nodes = append(c.Nodes, gpuNode(cpu, 0, 0, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000))
		c.Rank = append(c.Rank, int32(i))
	}
	c.Types = []sim.TypeShare{{PodType: sim.PodType{CPU: 4000, GPU: sim.GPURequest{Count: 1, Milli: 1000}}, P: 0.995}}
	if withBig {
		c.Types = append(c.Types, sim.TypeShare{PodType: sim.PodType{CPU: 100000, GPU: sim.GPURequest{Count: 8, Milli: 1000}}, P: 0.005})
	}
	c.TypeOf, c.NumTypes = []int32{0}, 1
	return c
}

// TestFGDGuardKeepsScarceFit: a CPU-only pod of 40 CPUs. fgd-tiers puts
// it on n0, where it strands the fewest GPUs (88 CPUs left for 8 GPUs,
// against 56 elsewhere), and so n0 can no longer host the big type, which
// no other node can: fgd-guard, for which that costs 1/1, goes elsewhere.
// Without the big type in the distribution nothing is scarce, and
// fgd-guard takes fgd-tiers' node.
func TestFGDGuardKeepsScarceFit(t *testing.T) {
	pod := &sim.GPUPodSpec{Name: "cpu40", CPU: 40000, Mem: 1024}
	pick := func(name string, withBig bool) int {
		s, err := NewGPU(name, 0)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := s.Schedule(guardCluster(withBig), 0, pod)
		return n
	}
	if n := pick(NameFGDTiers, true); n != 0 {
		t.Fatalf("fgd-tiers chose n%d; the case needs n0", n)
	}
	if n := pick(NameFGDGuard, true); n == 0 || n < 0 {
		t.Errorf("fgd-guard chose n%d; want a node other than n0", n)
	}
	if a, b := pick(NameFGDTiers, false), pick(NameFGDGuard, false); a != b {
		t.Errorf("nothing scarce: fgd-guard chose n%d, fgd-tiers n%d", b, a)
	}
	g := &fgdGuard{}
	c := guardCluster(true)
	g.prepare(c, 0, pod)
	if g.fits[1] != 1 || g.fits[0] != 11 {
		t.Errorf("fits %v; want the whole GPU on 11 nodes, the big type on 1", g.fits)
	}
	if l := g.scarceLoss(c, 0, pod, 0); l != 1 {
		t.Errorf("loss on n0 = %v, want 1", l)
	}
	if l := g.scarceLoss(c, 1, pod, 0); l != 0 {
		t.Errorf("loss on n1 = %v, want 0", l)
	}
}

// naiveFits counts, for every type of c.Types, the nodes it fits, and
// lists the scarce types: what fgdGuard's cache must equal.
func naiveFits(c *sim.GPUCluster) (fits []int, scarce []int) {
	fits = make([]int, len(c.Types))
	for i := range c.Nodes {
		n := &c.Nodes[i]
		for k := range c.Types {
			if fitsType(n.CPUFree(), &n.GPU, &c.Types[k]) {
				fits[k]++
			}
		}
	}
	for k, f := range fits {
		if f > 0 && float64(f) < GuardScarce*float64(len(c.Nodes)) {
			scarce = append(scarce, k)
		}
	}
	return fits, scarce
}

// TestFGDGuardFitCache: through runs of the default list, fgd-guard's
// incrementally kept fit counts and scarce types equal a count of every
// node against every type at every decision. One scheduler serves three
// runs in turn on copies of one cluster, which share its pod types as
// sim.RunGPUOrder's do: a run on 120 nodes, the first 40% of another on
// them (stopped while the nodes still fit many types) and a run on the
// first 80, which must not count the other 40 nodes' last fits.
func TestFGDGuardFitCache(t *testing.T) {
	w := openbtest.Default(t, 120)
	_, rank := sim.GPUArrivals(w, 1.3, 1)
	base := sim.NewGPUCluster(w, rank)
	g := &fgdGuard{}
	s, err := NewGPU(NameFGDGuard, 0)
	if err != nil {
		t.Fatal(err)
	}
	var checked, scarce int
	for _, run := range []struct {
		nodes int
		seed  uint64
		part  float64
	}{{120, 3, 1}, {120, 1, 0.4}, {80, 2, 1}} {
		order, _ := sim.GPUArrivals(w, 1.3, run.seed)
		c := *base
		c.Nodes = append([]sim.GPUNode(nil), base.Nodes[:run.nodes]...)
		c.Rank = base.Rank[:run.nodes]
		for _, k := range order[:int(run.part*float64(len(order)))] {
			p := &w.Pods[k]
			g.prepare(&c, int(k), p)
			wantFits, wantScarce := naiveFits(&c)
			if !slices.Equal(g.fits, wantFits) || !slices.Equal(g.scarce, wantScarce) {
				t.Fatalf("%d nodes, seed %d, decision %d: fits %v scarce %v; counted %v %v", run.nodes, run.seed, checked, g.fits, g.scarce, wantFits, wantScarce)
			}
			checked++
			scarce += len(wantScarce)
			// place as fgd-guard does, so that the states move as in its run
			if i, m := s.Schedule(&c, int(k), p); i >= 0 {
				c.Place(i, p, m)
			}
		}
	}
	if scarce == 0 {
		t.Fatal("no type was ever scarce: the check cannot tell a wrong scarce list")
	}
	t.Logf("%d decisions checked, %d scarce types seen", checked, scarce)
}
