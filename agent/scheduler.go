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
	// Err is the last error of the policy (a malformed batch); the decision
	// was then Pending.
	Err error
}

var _ sim.Scheduler = (*Scheduler)(nil)

// NewScheduler wraps pol, whose observations follow cfg (reference node,
// failure-domain level), as a scheduler called name.
func NewScheduler(name string, pol *model.Policy, cfg env.Config) (*Scheduler, error) {
	enc, err := env.NewEncoder(cfg)
	if err != nil {
		return nil, err
	}
	return &Scheduler{name: name, pol: pol, enc: enc}, nil
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
	Fill(&s.b, s.obs[:])
	if err := s.pol.Act(&s.b, true, nil, &s.act); err != nil {
		s.Err = err
		return sim.PendingDecision
	}
	a := s.act.Actions[0]
	if a >= c.Len() {
		return sim.PendingDecision
	}
	return a
}
