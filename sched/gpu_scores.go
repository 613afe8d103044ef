package sched

import (
	"fmt"
	"strings"

	"github.com/kubesim/kubesim/sim"
)

// GPUScoring is a GPU policy's scores and GPU selection for callers that
// choose the node themselves (a learned policy's prior, an environment that
// places the pod on the node a policy picked). Best over Scores is exactly
// the node the policy's Schedule returns.
type GPUScoring struct {
	f *gpuFramework
}

// NewGPUScoring returns the scoring of the named GPU policy (sched.NewGPU's
// names and seeds).
func NewGPUScoring(name string, seed uint64) (*GPUScoring, error) {
	s, err := NewGPU(name, seed)
	if err != nil {
		return nil, err
	}
	f, ok := s.(*gpuFramework)
	if !ok {
		return nil, fmt.Errorf("GPU policy %q: an admission rule has no scores; name the policy alone (%s)", name, strings.Join(GPUNames(), ", "))
	}
	return &GPUScoring{f: f}, nil
}

// Name returns the policy's name.
func (s *GPUScoring) Name() string { return s.f.name }

// Scores writes the policy's score (0..100; fgd-tiers' are larger, see
// fgdTiers) of each node for pod p (index
// pod in the workload's pods) into dst, -1 for a node that fails the
// filters, and returns it (dst grown when short). It runs the policy's
// per-decision preparation first, as Schedule does, and must be called once
// per decision, before GPUs.
func (s *GPUScoring) Scores(c *sim.GPUCluster, pod int, p *sim.GPUPodSpec, dst []int64) []int64 {
	if cap(dst) < len(c.Nodes) {
		dst = make([]int64, len(c.Nodes))
	}
	dst = dst[:len(c.Nodes)]
	s.f.score.prepare(c, pod, p)
	for i := range c.Nodes {
		if c.Nodes[i].Fits(p) {
			dst[i] = s.f.score.score(c, i, p)
		} else {
			dst[i] = -1
		}
	}
	return dst
}

// Best returns the node Schedule would pick from scores (Scores' output):
// the highest score, ties to the lowest rank (sim.GPUCluster.Rank); -1 when
// no node is feasible.
func (s *GPUScoring) Best(c *sim.GPUCluster, scores []int64) int {
	best := -1
	for i, v := range scores {
		if v < 0 {
			continue
		}
		if best < 0 || v > scores[best] || v == scores[best] && c.Rank[i] < c.Rank[best] {
			best = i
		}
	}
	return best
}

// GPUs returns the GPUs the policy selects for p on node i, a node that
// passes the filters, after Scores for this decision.
func (s *GPUScoring) GPUs(c *sim.GPUCluster, i int, p *sim.GPUPodSpec) sim.GPUMask {
	return s.f.score.gpus(c, i, p)
}
