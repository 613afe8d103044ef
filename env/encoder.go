package env

import "github.com/kubesim/kubesim/sim"

// Encoder builds observations outside an Env, with the same features,
// domain ids and mask, for a learned policy that acts as a sim.Scheduler
// (evaluation, the scheduler extender). Its Obs is valid until the next
// Encode. It is not safe for concurrent use.
type Encoder struct {
	en encoder
}

// NewEncoder returns an encoder for cfg's reference node, balance signal,
// failure-domain level and prior (Config.Prior: Obs.Prior from the same
// heuristic scores as in an Env).
func NewEncoder(cfg Config) (*Encoder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Encoder{en: newEncoder(cfg)}, nil
}

// newEncoder sets up an encoder for cfg.
func newEncoder(cfg Config) encoder {
	en := encoder{ref: cfg.Reference, signal: cfg.Reward.BalanceOf, prior: newPriorState(cfg.Prior)}
	if cfg.Domain == Rack {
		en.level = 1
	}
	return en
}

// Encode returns the observation of the decision for pod p on cluster c.
func (e *Encoder) Encode(c *sim.Cluster, p *sim.Pod) Obs {
	return e.en.encode(c, p, sim.Resources{})
}
