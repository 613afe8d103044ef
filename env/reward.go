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

// cpuSignal is node n's balance signal: requested CPU over allocatable,
// capped at 1 (Requested), or actual CPU use capped at allocatable, over
// allocatable (Used). The encoder's node-variance and signalStd both read
// it, so R_balance's level and its delta measure the same thing.
func cpuSignal(n *sim.Node, signal BalanceSignal) float64 {
	if signal == Requested {
		return min(float64(n.Requested.CPU)*(1/float64(n.Alloc.CPU)), 1)
	}
	return float64(min(n.Used.CPU, n.Alloc.CPU)) / float64(n.Alloc.CPU)
}

// signalStd is the population standard deviation over nodes of cpuSignal
// (0 without nodes), computed as the encoder computes Env's balance: the
// delta form of R_balance measures it just after a decision, against the
// encoder's value for the observation the decision was taken on.
func signalStd(nodes []sim.Node, signal BalanceSignal) float64 {
	if len(nodes) == 0 {
		return 0
	}
	var sum, sumSq float64
	for i := range nodes {
		u := cpuSignal(&nodes[i], signal)
		sum += u
		sumSq += u * u
	}
	mean := sum / float64(len(nodes))
	return math.Sqrt(max(0, sumSq/float64(len(nodes))-mean*mean))
}
