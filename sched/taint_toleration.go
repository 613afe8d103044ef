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

// Filter keeps the candidates that pass sim.ToleratesTaints. Nodes without
// NoSchedule or NoExecute taints (Node.HardTaints false) pass without the
// call, which is sim.ToleratesTaints' own first test.
func (TaintToleration) Filter(nodes []sim.Node, p *sim.PodSpec, cand []int32) []int32 {
	k := 0
	for _, i := range cand {
		n := &nodes[i]
		ok := !n.HardTaints || sim.ToleratesTaints(n, p)
		cand[k] = i
		if ok {
			k++
		}
	}
	return cand[:k]
}

// Score writes the normalised, reversed count of intolerable
// PreferNoSchedule taints of each candidate.
func (TaintToleration) Score(nodes []sim.Node, p *sim.PodSpec, cand []int32, dst []int64) bool {
	if !sim.MayTolerate(p, sim.PreferNoSchedule) {
		// The count is the node's own, without looking at its taints (and
		// without a call in the loop; see shares). One pass writes the
		// scores for the usual maximum counts, 0 (every node MaxNodeScore)
		// and 1 (MaxNodeScore or 0), which are the same formula.
		var maxCount int64
		for j, i := range cand {
			c := int64(nodes[i].SoftTaints)
			dst[j] = MaxNodeScore - MaxNodeScore*c
			maxCount = max(maxCount, c)
		}
		if maxCount <= 1 {
			return true
		}
	}
	// A tolerating pod, or larger counts (including nodes at
	// MaxSoftTaints): count the taints.
	var maxCount int64
	for j, i := range cand {
		c := sim.CountIntolerablePreferNoSchedule(&nodes[i], p)
		dst[j] = c
		maxCount = max(maxCount, c)
	}
	switch maxCount {
	case 0: // every candidate gets MaxNodeScore
		for j := range dst {
			dst[j] = MaxNodeScore
		}
	case 1: // counts 0 or 1: MaxNodeScore or 0
		for j, c := range dst {
			dst[j] = MaxNodeScore - MaxNodeScore*c
		}
	default:
		NormalizeScore(MaxNodeScore, true, dst)
	}
	return true
}
