package sched

import (
	"fmt"
	"strings"

	"github.com/kubesim/kubesim/sim"
)

// lowestSuffix turns a scoring heuristic's random tie-break into the
// lowest node index: "tetris@lowest" scores as tetris and, among the nodes
// of equal highest score, takes the one that comes first in the cluster's
// node order.
//
// Why it exists (docs/suite.md, round 9): kube-scheduler draws among ties at
// random, and so do kubesim's heuristics; a learned policy acting greedily
// takes the first maximum of its logits. A policy whose learned correction
// is still zero over a heuristic's prior is therefore that heuristic with
// ties to the lowest index, not the heuristic itself, and the two can differ
// by several percent of unschedulable pods: empty nodes tie under most
// scores, and taking the first of them packs where a random draw spreads.
const lowestSuffix = "@lowest"

// selectLowest returns the position in total of the highest score, the
// candidate of lowest node index among equal highest scores (cand may start
// anywhere in the node order: the search rotates).
func selectLowest(total []int64, cand []int32) int {
	best := 0
	for j := 1; j < len(total); j++ {
		if total[j] > total[best] || (total[j] == total[best] && cand[j] < cand[best]) {
			best = j
		}
	}
	return best
}

// newLowest builds "HEURISTIC@lowest" for a heuristic that scores nodes and
// draws among ties; ok is false when name has no such suffix.
func newLowest(name string, seed uint64) (s sim.Scheduler, ok bool, err error) {
	base, rest, found := strings.Cut(name, lowestSuffix)
	if !found {
		return nil, false, nil
	}
	if rest != "" {
		return nil, true, fmt.Errorf("%w %q: nothing may follow %q", ErrUnknownScheduler, name, lowestSuffix)
	}
	inner, err := New(base, seed)
	if err != nil {
		return nil, true, err
	}
	f, isFramework := inner.(*Framework)
	if !isFramework || f.prof.Select != SelectBest {
		return nil, true, fmt.Errorf("%w %q: %s does not draw among ties", ErrUnknownScheduler, name, base)
	}
	f.prof.Select = SelectBestLowest
	f.prof.Name = name
	return f, true, nil
}
