package sched

import (
	"math/rand/v2"

	"github.com/kubesim/kubesim/sim"
)

// gpuRandom is the paper's Random policy: a node drawn uniformly from the
// feasible ones (the artifact's RandomScore gives it the maximum score and
// every other node the minimum), and on it, for a GPU share, a device drawn
// uniformly from those it fits (the artifact's "random" GPU selection);
// whole GPUs take the lowest-indexed idle devices.
type gpuRandom struct {
	rng *rand.Rand
	// pick is the index, among the feasible nodes, of the node drawn for
	// the current pod; seen counts feasible nodes scored so far.
	pick, seen int
}

func (r *gpuRandom) prepare(c *sim.GPUCluster, _ int, p *sim.GPUPodSpec) {
	n := 0
	for i := range c.Nodes {
		if c.Nodes[i].Fits(p) {
			n++
		}
	}
	r.pick, r.seen = -1, 0
	if n > 0 {
		r.pick = r.rng.IntN(n)
	}
}

func (r *gpuRandom) score(c *sim.GPUCluster, i int, p *sim.GPUPodSpec) int64 {
	k := r.seen
	r.seen++
	if k != r.pick {
		return MinNodeScore
	}
	return MaxNodeScore
}

func (r *gpuRandom) gpus(c *sim.GPUCluster, i int, p *sim.GPUPodSpec) sim.GPUMask {
	g := &c.Nodes[i].GPU
	if !p.GPU.Share() {
		return g.BestFit(p.GPU)
	}
	var m sim.GPUMask
	n := 0
	for d := range int(g.N) {
		if g.Free[d] >= p.GPU.Milli {
			n++
			if r.rng.IntN(n) == 0 {
				m = 1 << uint(d)
			}
		}
	}
	return m
}
