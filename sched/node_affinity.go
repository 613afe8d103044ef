package sched

import "github.com/kubesim/kubesim/sim"

// NodeAffinity is kube-scheduler's NodeAffinity plugin.
//
// As a filter it keeps the nodes that match at least one of the pod's
// required node-affinity terms, or every node when the pod has none
// (sim.MatchesAffinity). As a score it sums the weights of the pod's
// preferred terms that the node matches (sim.PreferredAffinityWeight) and
// normalises the sums with NormalizeScore, so the best-matching candidate gets
// MaxNodeScore. A pod without preferred terms is skipped, as upstream.
type NodeAffinity struct{}

var (
	_ FilterPlugin = NodeAffinity{}
	_ ScorePlugin  = NodeAffinity{}
)

// NodeAffinityName is the upstream plugin name.
const NodeAffinityName = "NodeAffinity"

// Name returns NodeAffinityName.
func (NodeAffinity) Name() string { return NodeAffinityName }

// Filter keeps the candidates that pass sim.MatchesAffinity.
func (NodeAffinity) Filter(nodes []sim.Node, p *sim.PodSpec, cand []int32) []int32 {
	if p.Affinity == nil || len(p.Affinity.Required) == 0 {
		return cand // sim.MatchesAffinity is true on every node
	}
	k := 0
	for _, i := range cand {
		if sim.MatchesAffinity(&nodes[i], p) {
			cand[k] = i
			k++
		}
	}
	return cand[:k]
}

// Score writes the normalised preferred-affinity weight of each candidate,
// or returns false when the pod has no preferred terms.
func (NodeAffinity) Score(nodes []sim.Node, p *sim.PodSpec, cand []int32, dst []int64) bool {
	if p.Affinity == nil || len(p.Affinity.Preferred) == 0 {
		return false
	}
	for j, i := range cand {
		dst[j] = sim.PreferredAffinityWeight(&nodes[i], p)
	}
	NormalizeScore(MaxNodeScore, false, dst)
	return true
}
