package env

import (
	"math"

	"github.com/kubesim/kubesim/sim"
)

// This file holds the reward terms added for issue 14 ("reward aligned with
// the metrics"): the waiting cost P_wait, the terminal penalty P_unplaced and
// the delta form of R_balance. The package documentation defines them.

// waitCost is P_wait for pending pod-time all (milliseconds, every pod) of
// which high belongs to high-priority pods, each of those weighing wHigh:
// priority-weighted pod-minutes.
func waitCost(all, high int64, wHigh float64) float64 {
	return (float64(all-high) + wHigh*float64(high)) / float64(sim.Minute)
}

// unplacedCost is P_unplaced for pending pods of which high are of high
// priority, each of those weighing wHigh.
func unplacedCost(pending, high int, wHigh float64) float64 {
	return float64(pending-high) + wHigh*float64(high)
}

// signalStd is the population standard deviation over nodes of the
// balance signal: requested CPU over allocatable capped at 1 (Requested), or
// actual CPU use capped at allocatable, over allocatable (Used); 0 without
// nodes. The delta form of R_balance measures it just before and just after
// a decision.
func signalStd(nodes []sim.Node, signal BalanceSignal) float64 {
	if len(nodes) == 0 {
		return 0
	}
	var sum, sumSq float64
	for i := range nodes {
		n := &nodes[i]
		var u float64
		if signal == Requested {
			u = min(float64(n.Requested.CPU)/float64(n.Alloc.CPU), 1)
		} else {
			u = float64(min(n.Used.CPU, n.Alloc.CPU)) / float64(n.Alloc.CPU)
		}
		sum += u
		sumSq += u * u
	}
	mean := sum / float64(len(nodes))
	return math.Sqrt(max(0, sumSq/float64(len(nodes))-mean*mean))
}
