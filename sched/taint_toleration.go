package sched

import "github.com/kubesim/kubesim/sim"

// TaintToleration is kube-scheduler's TaintToleration plugin.
//
// As a filter it keeps the nodes whose NoSchedule and NoExecute taints the pod
// all tolerates (sim.ToleratesTaints). As a score it counts the node's
// PreferNoSchedule taints that the pod does not tolerate
// (sim.CountIntolerablePreferNoSchedule) and normalises the counts with
// NormalizeScore reversed, so the node with the fewest intolerable taints
// gets MaxNodeScore and, when no candidate has any, every node gets
// MaxNodeScore.
type TaintToleration struct{}

var (
	_ FilterPlugin = TaintToleration{}
	_ ScorePlugin  = TaintToleration{}
)

// TaintTolerationName is the upstream plugin name.
const TaintTolerationName = "TaintToleration"

// Name returns TaintTolerationName.
func (TaintToleration) Name() string { return TaintTolerationName }

// Filter keeps the candidates that pass sim.ToleratesTaints.
func (TaintToleration) Filter(nodes []sim.Node, p *sim.PodSpec, cand []int32) []int32 {
	k := 0
	for _, i := range cand {
		if sim.ToleratesTaints(&nodes[i], p) {
			cand[k] = i
			k++
		}
	}
	return cand[:k]
}

// Score writes the normalised, reversed count of intolerable
// PreferNoSchedule taints of each candidate.
func (TaintToleration) Score(nodes []sim.Node, p *sim.PodSpec, cand []int32, dst []int64) bool {
	for j, i := range cand {
		dst[j] = sim.CountIntolerablePreferNoSchedule(&nodes[i], p)
	}
	NormalizeScore(MaxNodeScore, true, dst)
	return true
}
