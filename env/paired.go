package env

import (
	"fmt"
	"slices"

	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

// pairedRun is the prior heuristic's replay of an episode's workload, under
// the episode's simulator seed, that Reward.Paired subtracts from the
// agent's reward (a per-workload baseline, as the greedy-rollout baseline
// of attention-model routing policies, Kool et al., ICLR 2019). It keeps,
// at each of the replay's decisions (and at its end), the waiting cost
// accrued so far, so that a step of the agent can subtract what the replay
// accrued over the same simulated interval: the workload's own difficulty
// (a burst, a heavy window) then cancels, and what is left is what the
// agent's decisions changed. The replay does not depend on the agent's
// actions, so the subtraction leaves the policy gradient unbiased.
type pairedRun struct {
	at       []sim.Time // decision times, then the end; non-decreasing
	cost     []float64  // P_wait accrued from the start to at[i]
	unplaced float64    // P_unplaced at the replay's end
}

// replayPaired replays w under cfg with the named heuristic, whose random
// tie-breaks draw from seed, weighting high-priority pods by wHigh.
func replayPaired(w *sim.Workload, cfg sim.Config, heuristic string, seed uint64, wHigh float64) (*pairedRun, error) {
	eng, err := sim.New(w, cfg)
	if err != nil {
		return nil, fmt.Errorf("paired replay: %w", err)
	}
	s, err := sched.New(heuristic, seed)
	if err != nil {
		return nil, fmt.Errorf("paired replay: %w", err)
	}
	r := &pairedRun{}
	note := func() {
		c := eng.Counters()
		r.at = append(r.at, eng.Now())
		r.cost = append(r.cost, waitCost(c.PendingMs, c.PendingHighMs, wHigh))
	}
	for {
		p, ok := eng.Next()
		note()
		if !ok {
			break
		}
		eng.Decide(s.Schedule(eng.Cluster(), p))
	}
	r.unplaced = unplacedCost(eng.Pending(), eng.PendingHigh(), wHigh)
	return r, nil
}

// costAt is the waiting cost the replay had accrued at its last recorded
// point at or before t (0 before the first). Times are whole milliseconds,
// so the points at or before t are those before t+1.
func (r *pairedRun) costAt(t sim.Time) float64 {
	i, _ := slices.BinarySearch(r.at, t+1)
	if i == 0 {
		return 0
	}
	return r.cost[i-1]
}
