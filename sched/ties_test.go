package sched

import (
	"errors"
	"slices"
	"testing"

	"github.com/kubesim/kubesim/sim"
)

// TestLowestByHand: nodes 0 and 2 are empty, 1 and 3 half used, all alike
// otherwise. Tetris prefers the emptier nodes and ties 0 with 2; best-fit
// prefers the fuller ones and ties 1 with 3. With random ties both nodes of
// the pair are drawn over 16 seeds; with "@lowest" the lower one always.
func TestLowestByHand(t *testing.T) {
	nodes := []sim.Node{
		mkNode("a", 4000, 8000, 0, 0),
		mkNode("b", 4000, 8000, 2000, 4000),
		mkNode("c", 4000, 8000, 0, 0),
		mkNode("d", 4000, 8000, 2000, 4000),
	}
	c := sim.NewCluster(0, nodes...)
	for _, tc := range []struct {
		name string
		pair [2]int
	}{{NameTetris, [2]int{0, 2}}, {NameBestFit, [2]int{1, 3}}} {
		seen := map[int]bool{}
		for seed := range uint64(16) {
			s, err := New(tc.name, seed)
			if err != nil {
				t.Fatal(err)
			}
			seen[s.Schedule(c, mkPod(1000, 2000))] = true
			lo, err := New(tc.name+"@lowest", seed)
			if err != nil {
				t.Fatal(err)
			}
			if d := lo.Schedule(c, mkPod(1000, 2000)); d != tc.pair[0] {
				t.Errorf("%s@lowest seed %d chose node %d, want %d", tc.name, seed, d, tc.pair[0])
			}
		}
		if len(seen) != 2 || !seen[tc.pair[0]] || !seen[tc.pair[1]] {
			t.Errorf("%s with random ties chose %v over 16 seeds, want both of %v", tc.name, seen, tc.pair)
		}
	}
}

// TestSelectLowest: the candidates of a rotated search start anywhere in
// the node order; among equal highest scores the lowest node index wins,
// and a strictly higher score wins whatever its index.
func TestSelectLowest(t *testing.T) {
	cand := []int32{498, 499, 0, 1, 7}
	if got := selectLowest([]int64{5, 5, 5, 5, 4}, cand); got != 2 {
		t.Errorf("tie over 498, 499, 0, 1: position %d, want 2 (node 0)", got)
	}
	if got := selectLowest([]int64{5, 6, 5, 6, 4}, cand); got != 3 {
		t.Errorf("tie over 499 and 1: position %d, want 3 (node 1)", got)
	}
	if got := selectLowest([]int64{5, 5, 5, 5, 9}, cand); got != 4 {
		t.Errorf("a higher score at node 7: position %d, want 4", got)
	}
}

// TestLowestNames: the name is kept, the variant is not in Names(), and a
// heuristic that does not draw among scored ties, an unknown one or a
// suffix followed by anything is an error wrapping ErrUnknownScheduler. A
// cap may follow ("NAME@lowest@capGIB").
func TestLowestNames(t *testing.T) {
	for _, name := range []string{"tetris@lowest", "kube-default@lowest", "holes@lowest@cap30"} {
		s, err := New(name, 1)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if s.Name() != name {
			t.Errorf("Name() = %q, want %q", s.Name(), name)
		}
		if !Variant(name) || slices.Contains(Names(), name) {
			t.Errorf("%s: Variant %v, in Names() %v", name, Variant(name), slices.Contains(Names(), name))
		}
	}
	for _, name := range []string{"first-fit@lowest", "nope@lowest", "tetris@lowestx", "tetris@lowest@lowest", "@lowest"} {
		if _, err := New(name, 1); !errors.Is(err, ErrUnknownScheduler) {
			t.Errorf("%s: error %v, want ErrUnknownScheduler", name, err)
		}
	}
}
