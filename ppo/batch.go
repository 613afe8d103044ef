package ppo

import "github.com/kubesim/kubesim/env"

// store keeps a rollout's observations, whose node counts differ, packed
// end to end in slices that are reused from one rollout to the next.
// Transition i has n[i] nodes starting at node row off[i].
type store struct {
	pod    []float64 // i*PodFeatures
	nodes  []float64 // row r at r*NodeFeatures
	domain []int32   // row r
	mask   []bool    // transition i's N+1 entries start at off[i]+i
	prior  []float64 // transition i's plen[i] log-prior terms start at poff[i]
	poff   []int     // -1: transition i has no prior
	plen   []int     // N+1 for one prior, K*(N+1) for a gate over K
	n      []int
	off    []int
}

func (s *store) reset() {
	s.pod, s.nodes, s.domain, s.mask = s.pod[:0], s.nodes[:0], s.domain[:0], s.mask[:0]
	s.prior, s.poff, s.plen = s.prior[:0], s.poff[:0], s.plen[:0]
	s.n, s.off = s.n[:0], s.off[:0]
}

func (s *store) len() int { return len(s.n) }

// add appends a copy of o.
func (s *store) add(o *env.Obs) {
	s.off = append(s.off, len(s.domain))
	s.n = append(s.n, o.N)
	s.pod = append(s.pod, o.Pod...)
	s.nodes = append(s.nodes, o.Nodes...)
	s.domain = append(s.domain, o.Domain...)
	s.mask = append(s.mask, o.Mask...)
	s.plen = append(s.plen, len(o.Prior)) // N+1, or K*(N+1) for a gate
	if o.Prior == nil {
		s.poff = append(s.poff, -1)
	} else {
		s.poff = append(s.poff, len(s.prior))
		s.prior = append(s.prior, o.Prior...)
	}
}

// obs returns a view of transition i (no copy).
func (s *store) obs(i int) env.Obs {
	n, r := s.n[i], s.off[i]
	o := env.Obs{
		N:      n,
		Pod:    s.pod[i*env.PodFeatures : (i+1)*env.PodFeatures],
		Nodes:  s.nodes[r*env.NodeFeatures : (r+n)*env.NodeFeatures],
		Domain: s.domain[r : r+n],
		Mask:   s.mask[r+i : r+i+n+1],
	}
	if p := s.poff[i]; p >= 0 {
		o.Prior = s.prior[p : p+s.plen[i]]
	}
	return o
}
