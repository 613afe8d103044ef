package agent

import (
	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/model"
	"github.com/kubesim/kubesim/sim"
)

// Scheduler is a learned policy acting greedily as a sim.Scheduler, so that
// evaluation treats it exactly like a heuristic: it encodes the decision as
// the environment would, masks infeasible nodes and picks the most probable
// action. It is not safe for concurrent use.
type Scheduler struct {
	name string
	pol  *model.Policy
	enc  *env.Encoder
	b    model.Batch
	act  model.ActResult
	obs  [1]env.Obs
	// gate names the priors a gated policy mixes (env.Prior.Names); gateSum
	// sums their weights over the decisions taken, gateN counts those.
	gate    []string
	gateSum []float64
	gateN   int
	// Err is the last error of the policy (a malformed batch); the decision
	// was then Pending.
	Err error
}

var (
	_ sim.Scheduler     = (*Scheduler)(nil)
	_ sim.StatsReporter = (*Scheduler)(nil)
)

// NewScheduler wraps pol, whose observations follow cfg (reference node,
// failure-domain level), as a scheduler called name.
func NewScheduler(name string, pol *model.Policy, cfg env.Config) (*Scheduler, error) {
	enc, err := env.NewEncoder(cfg)
	if err != nil {
		return nil, err
	}
	s := &Scheduler{name: name, pol: pol, enc: enc}
	if cfg.Prior.Gate() > 0 && pol.Config().Gate == cfg.Prior.Gate() {
		s.gate = cfg.Prior.Names()
		s.gateSum = make([]float64, len(s.gate))
	}
	return s, nil
}

// Stats reports, for a policy with a learned gate over K priors, the mean
// weight the gate gave each prior over the decisions taken so far, keyed
// "gate.<heuristic>", and their number, "gate.decisions" (sim.StatsReporter:
// a replay's Result.SchedulerStats). Nil without a gate or a decision.
func (s *Scheduler) Stats() map[string]float64 {
	if s.gateN == 0 {
		return nil
	}
	m := map[string]float64{"gate.decisions": float64(s.gateN)}
	for i, name := range s.gate {
		m["gate."+name] = s.gateSum[i] / float64(s.gateN)
	}
	return m
}

// Name returns the scheduler's name.
func (s *Scheduler) Name() string { return s.name }

// Schedule returns the policy's greedy choice for p: a node index or
// sim.PendingDecision.
func (s *Scheduler) Schedule(c *sim.Cluster, p *sim.Pod) int {
	if c.Len() == 0 {
		return sim.PendingDecision
	}
	s.obs[0] = s.enc.Encode(c, p)
	if len(s.gateSum) == 0 && Forced(&s.obs[0]) {
		// no node fits: Pending is the only action, the one a greedy Act
		// would return, without its forward pass (in an overloaded window
		// most attempts are retries of pods that fit nowhere). A gated
		// policy still runs, so that its gate statistics count every
		// decision as before.
		return sim.PendingDecision
	}
	Fill(&s.b, s.obs[:])
	if err := s.pol.Act(&s.b, true, nil, &s.act); err != nil {
		s.Err = err
		return sim.PendingDecision
	}
	if len(s.gateSum) > 0 && len(s.act.Gate) == len(s.gateSum) {
		for i, w := range s.act.Gate {
			s.gateSum[i] += w
		}
		s.gateN++
	}
	a := s.act.Actions[0]
	if a >= c.Len() {
		return sim.PendingDecision
	}
	return a
}

// Forced reports whether o leaves a policy no choice: no node is feasible,
// so Pending is the only unmasked action, and a greedy policy picks it
// whatever its weights.
func Forced(o *env.Obs) bool {
	for _, ok := range o.Mask[:o.N] {
		if ok {
			return false
		}
	}
	return true
}
