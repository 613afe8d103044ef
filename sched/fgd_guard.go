package sched

import (
	"math"

	"github.com/kubesim/kubesim/sim"
)

// NameFGDGuard is fgd-tiers that keeps scarce fits (not in the paper).
const NameFGDGuard = "fgd-guard"

// GuardScarce is the share of the cluster's nodes below which a pod type
// counts as scarce for fgd-guard: on the openb node list the 8-GPU pods of
// 120 CPUs fit only the 39 G3 nodes (3% of 1,213). Chosen on validation
// (docs/gpu.md, "Keeping scarce fits").
const GuardScarce = 0.10

// fgdGuard ranks nodes as fgd-tiers does, with one key between FGD's tier
// and the CPU balance: the scarce fits the placement takes away. A pod
// type of FGD's distribution is scarce while fewer than GuardScarce of the
// nodes fit it (CPU and GPUs, as FGD's measure reads them); a placement
// that leaves a node unable to host a scarce type it could host costs
// 1/(the nodes that type fits now), summed over such types. fgd-tiers'
// 3-point tiers flatten the part of FGD's score that keeps such nodes
// clear, and its balance term sees spare CPU on them: on multigpu50 it
// fails the first 120-CPU 8-GPU pod at 67-73% arrived, FGD at 95% or
// later (docs/gpu.md). Scores are tier x 2^40 + (2^19 - the cost x
// 2^12) x 2^20 + 2^19 - the change in stranded milli-GPU: non-negative,
// and not on FGD's 0..100 scale.
type fgdGuard struct {
	fgdTiers
	fits   []int // per type of c.Types: the nodes it fits, this decision
	scarce []int // the types scarce this decision, in index order

	// The fit cache, kept as fgd's score cache is (sim.GPUNode.Gen): fits
	// is updated by recounting only the nodes that changed since the last
	// decision (one per placement), not every node against every type
	// (most of fgd-guard's time before it). A new cluster (a new nodes
	// slice) or other pod types start it again.
	nodes *sim.GPUNode   // &c.Nodes[0] of the cluster the cache counts
	types *sim.TypeShare // and &c.Types[0]
	gen   []uint32       // per node: the Gen+1 its fits were counted at (0: none)
	mask  []uint64       // per node, words bits: the types it fits
	words int
}

func (g *fgdGuard) prepare(c *sim.GPUCluster, pod int, p *sim.GPUPodSpec) {
	g.fgdTiers.prepare(c, pod, p)
	g.scarce = g.scarce[:0]
	if len(c.Types) == 0 || len(c.Nodes) == 0 {
		g.fits, g.nodes, g.types = g.fits[:0], nil, nil
		return
	}
	if g.nodes != &c.Nodes[0] || g.types != &c.Types[0] || len(g.gen) != len(c.Nodes) || len(g.fits) != len(c.Types) {
		g.reset(c)
	}
	for i := range c.Nodes {
		if stamp := c.Nodes[i].Gen + 1; g.gen[i] != stamp {
			g.recount(c, i)
			g.gen[i] = stamp
		}
	}
	for k, f := range g.fits {
		if f > 0 && float64(f) < GuardScarce*float64(len(c.Nodes)) {
			g.scarce = append(g.scarce, k)
		}
	}
}

// reset empties the fit cache for cluster c: no node counted, no type fit.
func (g *fgdGuard) reset(c *sim.GPUCluster) {
	g.nodes, g.types = &c.Nodes[0], &c.Types[0]
	g.fits = append(g.fits[:0], make([]int, len(c.Types))...)
	g.words = (len(c.Types) + 63) / 64
	g.gen = append(g.gen[:0], make([]uint32, len(c.Nodes))...)
	g.mask = append(g.mask[:0], make([]uint64, len(c.Nodes)*g.words)...)
}

// recount updates fits for node i's current state.
func (g *fgdGuard) recount(c *sim.GPUCluster, i int) {
	n := &c.Nodes[i]
	cpu := n.CPUFree()
	m := g.mask[i*g.words : (i+1)*g.words]
	for k := range c.Types {
		w, b := k/64, uint64(1)<<(k%64)
		was, now := m[w]&b != 0, fitsType(cpu, &n.GPU, &c.Types[k])
		switch {
		case now && !was:
			g.fits[k]++
			m[w] |= b
		case was && !now:
			g.fits[k]--
			m[w] &^= b
		}
	}
}

// fitsType reports whether type t fits a node of free CPU cpu and GPUs g.
func fitsType(cpu int64, g *sim.GPUs, t *sim.TypeShare) bool {
	return t.CPU <= cpu && g.Fits(t.GPU)
}

// scarceLoss is the cost of placing p on node i with the GPUs m.
func (g *fgdGuard) scarceLoss(c *sim.GPUCluster, i int, p *sim.GPUPodSpec, m sim.GPUMask) float64 {
	n := &c.Nodes[i]
	after := n.GPU
	if p.GPU.Count > 0 && m != 0 {
		after.Take(p.GPU, m)
	}
	cpu, cpuAfter := n.CPUFree(), n.CPUFree()-p.CPU
	var loss float64
	for _, k := range g.scarce {
		if t := &c.Types[k]; fitsType(cpu, &n.GPU, t) && !fitsType(cpuAfter, &after, t) {
			loss += 1 / float64(g.fits[k])
		}
	}
	return loss
}

func (g *fgdGuard) score(c *sim.GPUCluster, i int, p *sim.GPUPodSpec) int64 {
	s := g.fgd.score(c, i, p)
	loss := min(int64(math.Round(g.scarceLoss(c, i, p, g.fgd.gpus(c, i, p))*(1<<12))), 1<<19)
	return (s/TierWidth)<<40 + (1<<19-loss)<<20 + 1<<19 - int64(math.Round(g.strandedChange(c, i, p)))
}
