package sched

import (
	"testing"

	"github.com/kubesim/kubesim/sim"
)

// TestHolesByHand: services of 10, 20 and 30 GiB seen (a 50-GiB batch pod
// does not count), so a hole is the median, 20 GiB. A 4-GiB pod costs a hole
// on e (free 60 -> 56: 3 holes -> 2), a (40 -> 36: 2 -> 1) and b (22 -> 18:
// 1 -> 0), none on c (19: no hole) or d (44 -> 40: 2 -> 2). Tetris alone
// takes e, the most free; Holes takes d, the better aligned of c and d.
// Before any service is seen Holes is Tetris.
func TestHolesByHand(t *testing.T) {
	const gib = 1024
	nodes := []sim.Node{
		mkNode("a", 16000, 64*gib, 4000, 24*gib),
		mkNode("b", 16000, 64*gib, 4000, 42*gib),
		mkNode("c", 16000, 64*gib, 4000, 45*gib),
		mkNode("d", 16000, 64*gib, 4000, 20*gib),
		mkNode("e", 16000, 64*gib, 4000, 4*gib),
	}
	pod := mkPod(1000, 4*gib)
	fresh := func() *sim.Cluster { return sim.NewCluster(0, nodes...) }

	c := fresh()
	if got := NewTetris(1).Schedule(c, pod); got != 4 {
		t.Fatalf("tetris chose %d, want 4 (e)", got)
	}
	if got := NewHoles(1).Schedule(c, pod); got != 4 {
		t.Errorf("holes without services chose %d, want 4 (e, as tetris)", got)
	}
	for _, mem := range []int64{10 * gib, 30 * gib, 20 * gib} {
		c.NoteService(&sim.PodSpec{Requests: sim.Resources{CPU: 1000, Mem: mem}})
	}
	c.NoteService(&sim.PodSpec{Requests: sim.Resources{CPU: 1000, Mem: 50 * gib}, Duration: sim.Second})
	if b := c.ServiceMem(0.5); b != 20*gib {
		t.Fatalf("hole size %d MiB, want %d", b, 20*gib)
	}
	if got := NewHoles(1).Schedule(c, pod); got != 3 {
		t.Errorf("holes chose %d, want 3 (d: no hole lost, better aligned than c)", got)
	}
	// every loss by hand, through the plugin
	dst := make([]int64, len(nodes))
	cand := []int32{0, 1, 2, 3, 4}
	Holes{Quantile: 0.5}.ScoreCluster(c, pod, cand, dst)
	for j, lost := range []int64{1, 1, 0, 0, 1} {
		if hole := (1 - lost) * holesTie; dst[j] < hole || dst[j] >= hole+holesTie {
			t.Errorf("node %s: score %d, want a loss of %d (score in [%d, %d))", nodes[j].Spec.Name, dst[j], lost, hole, hole+holesTie)
		}
	}
}
