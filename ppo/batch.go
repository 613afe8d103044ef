package ppo

import (
	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/model"
)

// store keeps a rollout's observations, whose node counts differ, packed
// end to end in slices that are reused from one rollout to the next.
// Transition i has n[i] nodes starting at node row off[i].
type store struct {
	pod    []float64 // i*PodFeatures
	nodes  []float64 // row r at r*NodeFeatures
	domain []int32   // row r
	mask   []bool    // transition i's N+1 entries start at off[i]+i
	n      []int
	off    []int
}

func (s *store) reset() {
	s.pod, s.nodes, s.domain, s.mask = s.pod[:0], s.nodes[:0], s.domain[:0], s.mask[:0]
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
}

// obs returns a view of transition i (no copy).
func (s *store) obs(i int) env.Obs {
	n, r := s.n[i], s.off[i]
	return env.Obs{
		N:      n,
		Pod:    s.pod[i*env.PodFeatures : (i+1)*env.PodFeatures],
		Nodes:  s.nodes[r*env.NodeFeatures : (r+n)*env.NodeFeatures],
		Domain: s.domain[r : r+n],
		Mask:   s.mask[r+i : r+i+n+1],
	}
}

// paddedN is the node count a batch whose largest observation has n nodes
// is padded to: n rounded up to a multiple of 4 (of 16 above 64, of 64 above
// 256). Training graphs are built per (batch size, padded N), so rounding
// keeps the number of shapes (and graph rebuilds) small while wasting little
// work on padding rows.
func paddedN(n int) int {
	step := 4
	switch {
	case n > 256:
		step = 64
	case n > 64:
		step = 16
	}
	return max(step, (n+step-1)/step*step)
}

// fill packs observations into b, padded to paddedN of the largest N with
// invalid nodes (masked, no neighbours). Pending, the last action of each
// observation, moves to index b.N. b's slices are reused when large enough.
func fill(b *model.Batch, obs []env.Obs) {
	maxN := 1
	for i := range obs {
		maxN = max(maxN, obs[i].N)
	}
	n := paddedN(maxN)
	b.B, b.N = len(obs), n
	const d, p = env.NodeFeatures, env.PodFeatures
	b.Nodes = grow(b.Nodes, b.B*n*d)
	b.NodeValid = grow(b.NodeValid, b.B*n)
	b.Pod = grow(b.Pod, b.B*p)
	b.Mask = grow(b.Mask, b.B*(n+1))
	b.Domain = grow(b.Domain, b.B*n)
	for s := range obs {
		o := &obs[s]
		copy(b.Pod[s*p:], o.Pod)
		rows := b.Nodes[s*n*d : (s+1)*n*d]
		copy(rows, o.Nodes)
		clear(rows[o.N*d:])
		valid := b.NodeValid[s*n : (s+1)*n]
		dom := b.Domain[s*n : (s+1)*n]
		mask := b.Mask[s*(n+1) : (s+1)*(n+1)]
		copy(dom, o.Domain)
		copy(mask, o.Mask[:o.N])
		for i := range n {
			valid[i] = i < o.N
			if i >= o.N {
				dom[i] = -1
				mask[i] = false
			}
		}
		mask[n] = true
	}
}

// toModel maps an environment action of an observation with n nodes to the
// batch's action space of padded size pn (Pending n -> pn).
func toModel(a, n, pn int) int {
	if a == n {
		return pn
	}
	return a
}

// toEnv maps a batch action back: pn (Pending) -> n.
func toEnv(a, n, pn int) int {
	if a == pn {
		return n
	}
	return a
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
