package sched

import "github.com/kubesim/kubesim/sim"

// Tetris scores nodes by the alignment of Grandl et al., "Multi-resource
// Packing for Cluster Schedulers" (SIGCOMM 2014): the dot product of the
// pod's demand vector and the node's free-resource vector, both normalised by
// the node's allocatable. With allocatable A, requested R (bound pods) and
// pod requests D, in units of 1/FineScale,
//
//	d_r = D_r * FineScale / A_r            f_r = (A_r - R_r) * FineScale / A_r
//	score = d_cpu*f_cpu + d_mem*f_mem      (0..2*FineScale^2)
//
// and the highest alignment wins: the pod goes where the free resources lie
// in the same direction as its demand, which packs complementary pods
// together. Free resources are taken before placement, as in the paper.
type Tetris struct{}

var _ ScorePlugin = Tetris{}

// TetrisName is the plugin's name.
const TetrisName = "Tetris"

// Name returns TetrisName.
func (Tetris) Name() string { return TetrisName }

// Score writes the alignment of each candidate.
func (Tetris) Score(nodes []sim.Node, p *sim.PodSpec, cand []int32, dst []int64) bool {
	for j, i := range cand {
		dst[j] = alignment(&nodes[i], p.Requests)
	}
	return true
}

// alignment is Tetris's score of demand d on node n (0..2*FineScale^2).
func alignment(n *sim.Node, d sim.Resources) int64 {
	return share(d.CPU, n.Alloc.CPU)*share(n.Alloc.CPU-n.Requested.CPU, n.Alloc.CPU) +
		share(d.Mem, n.Alloc.Mem)*share(n.Alloc.Mem-n.Requested.Mem, n.Alloc.Mem)
}
