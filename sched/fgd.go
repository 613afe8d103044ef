package sched

import (
	"math"

	"github.com/kubesim/kubesim/sim"
)

// fgd is the paper's FGD policy, Fragmentation Gradient Descent (the
// artifact's FGDScore with its own GPU selection): the pod goes where it
// increases the node's fragmentation (sim.GPUFrag over the workload's
// pod-type distribution) least. A node scores
// int(100 x sigmoid((frag before - frag after) / 1000)), frag in milli-GPU;
// for a GPU share every device it fits is tried and the first device with
// the highest score is the one it takes; whole GPUs take the
// lowest-indexed idle devices; a CPU-only pod changes only the free CPU.
//
// Speed: a node's score for a pod depends only on the node's state and the
// pod's type, so fgd keeps, per node, its fragmentation and the score and
// GPUs of each pod type computed since the node last changed
// (sim.GPUNode.Gen). A placement changes one node, so a decision
// recomputes one node's entries for the pod's type and reads the cache for
// every other node.
type fgd struct {
	types []sim.TypeShare
	nt    int // pod types
	// per node: the Gen its entries are for (+1, 0: none) and its frag
	gen  []uint32
	frag []float64
	// per (node, type): the Gen+1 the entry is for, the score and the GPUs
	cgen []uint32
	pts  []int8
	mask []sim.GPUMask
	t    int // the current pod's type
	// nodes is the first node of the cluster the cache is for: a new run
	// (a new cluster, whose nodes slice is new) starts an empty cache. A
	// cluster whose nodes are reset in place needs a fresh scheduler.
	nodes *sim.GPUNode
}

func (f *fgd) prepare(c *sim.GPUCluster, pod int, _ *sim.GPUPodSpec) {
	if len(c.Nodes) == 0 {
		return
	}
	if f.nodes != &c.Nodes[0] || len(f.gen) != len(c.Nodes) || f.nt != c.NumTypes {
		// a new run: an empty cache (the buffers reused when the sizes match)
		n, nt := len(c.Nodes), c.NumTypes
		f.nodes, f.types = &c.Nodes[0], c.Types
		if len(f.gen) == n && f.nt == nt {
			clear(f.gen)
			clear(f.cgen)
		} else {
			f.nt = nt
			f.gen, f.frag = make([]uint32, n), make([]float64, n)
			f.cgen, f.pts, f.mask = make([]uint32, n*nt), make([]int8, n*nt), make([]sim.GPUMask, n*nt)
		}
	}
	f.t = int(c.TypeOf[pod])
}

func (f *fgd) score(c *sim.GPUCluster, i int, p *sim.GPUPodSpec) int64 {
	n := &c.Nodes[i]
	stamp := n.Gen + 1
	k := f.t*len(f.gen) + i // type-major: one decision reads one contiguous row
	if f.cgen[k] == stamp {
		return int64(f.pts[k])
	}
	if f.gen[i] != stamp {
		f.gen[i], f.frag[i] = stamp, sim.GPUFrag(n.CPUFree(), &n.GPU, f.types)
	}
	s, m := FGDScore(f.frag[i], n, p, f.types)
	f.cgen[k], f.pts[k], f.mask[k] = stamp, int8(s), m
	return s
}

// gpus returns the GPUs FGD's score chose on node i (score ran for it in
// this decision, so the entry is current).
func (f *fgd) gpus(c *sim.GPUCluster, i int, p *sim.GPUPodSpec) sim.GPUMask {
	f.score(c, i, p)
	return f.mask[f.t*len(f.gen)+i]
}

// FGDScore is FGD's score of placing p on n, whose current fragmentation
// is before (sim.GPUFrag of n), and the GPUs p takes there. It is exported
// for tests and benchmarks; the scheduler caches it.
func FGDScore(before float64, n *sim.GPUNode, p *sim.GPUPodSpec, types []sim.TypeShare) (int64, sim.GPUMask) {
	cpu := n.CPUFree() - p.CPU
	g := n.GPU
	if !p.GPU.Share() {
		m := g.BestFit(p.GPU) // whole GPUs: the lowest-indexed idle ones
		g.Take(p.GPU, m)
		return fgdPoints(before - sim.GPUFrag(cpu, &g, types)), m
	}
	best, bestMask := int64(-1), sim.GPUMask(0)
	for d := range int(g.N) {
		if g.Free[d] < p.GPU.Milli {
			continue
		}
		m := sim.GPUMask(1) << uint(d)
		g.Free[d] -= p.GPU.Milli
		s := fgdPoints(before - sim.GPUFrag(cpu, &g, types))
		g.Free[d] += p.GPU.Milli
		if s > best {
			best, bestMask = s, m
		}
	}
	return best, bestMask
}

// fgdPoints maps a fragmentation decrease (milli-GPU) to the 0..100 score.
func fgdPoints(delta float64) int64 {
	return int64(1 / (1 + math.Exp(-delta/1000)) * float64(MaxNodeScore))
}
