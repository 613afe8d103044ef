package env

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

// PriorNorm is how a heuristic's scores become Obs.Prior.
type PriorNorm string

// Prior normalisations. With s_i the heuristic's total score of feasible
// node i and max_s, min_s the largest and smallest over feasible nodes:
const (
	// Ratio is scale*(s_i/max_s - 1): the best node 0, a node scoring 0
	// -scale. Used when max_s > 0; otherwise Range applies.
	Ratio PriorNorm = "ratio"
	// Range is scale*(s_i - max_s)/(max_s - min_s): the best node 0, the
	// worst exactly -scale (all 0 when every feasible node ties).
	Range PriorNorm = "range"
)

// Prior configures Obs.Prior, an additive log-prior over the actions that a
// policy adds to its logits (YAML key "prior" of the env config). With
// Heuristic empty (the default) there is no prior and Obs.Prior is nil.
//
// Otherwise Obs.Prior has N+1 entries: for a feasible node i (Mask[i]),
// with s_i the named heuristic's total weighted score
// (sched.Framework.Scores, every feasible node scored),
//
//	ratio: Prior[i] = max(scale*(s_i/max_s - 1), -scale)   when max_s > 0
//	range: Prior[i] = scale*(s_i - max_s)/(max_s - min_s)  (0 when max_s = min_s)
//
// (ratio falls back to range when max_s <= 0), 0 for an infeasible node
// (masked anyway) and Pending for the Pending token. The best feasible node
// gets exactly 0, so a policy whose learned correction is zero picks,
// greedily, a node the heuristic scores highest.
//
// With Heuristics (K >= 2 names) instead of Heuristic, Obs.Prior holds K
// such priors one after the other (K*(N+1) entries, heuristic k's at
// k*(N+1)), each normalised alike, for a policy whose learned gate mixes
// them (model.Config.Gate).
type Prior struct {
	// Heuristic names a scoring scheduler of package sched: one of
	// PriorHeuristics(). Empty: no prior.
	Heuristic string `yaml:"heuristic" json:"heuristic"`
	// Heuristics names 2 or more distinct scoring schedulers for a gated
	// policy, instead of Heuristic.
	Heuristics []string `yaml:"heuristics" json:"heuristics"`
	// Scale is the prior's spread over feasible nodes; positive when
	// Heuristic is set.
	Scale float64 `yaml:"scale" json:"scale"`
	// Pending is the prior of the Pending token (negative discourages
	// deferral); any finite number.
	Pending float64 `yaml:"pending" json:"pending"`
	// Normalize is "ratio" (the default when empty) or "range".
	Normalize PriorNorm `yaml:"normalize" json:"normalize"`
}

// PriorHeuristics returns the heuristics a Prior may name: the schedulers of
// sched.Names that rank nodes by a score (not first-fit or random).
func PriorHeuristics() []string {
	var names []string
	for _, name := range sched.Names() {
		if _, err := priorFramework(name); err == nil {
			names = append(names, name)
		}
	}
	return names
}

// errNoScores is priorFramework's error for a scheduler that scores nothing.
var errNoScores = errors.New("does not score nodes")

// priorFramework returns a fresh instance of the named scoring heuristic.
func priorFramework(name string) (*sched.Framework, error) {
	s, err := sched.New(name, 0)
	if err != nil {
		return nil, err
	}
	f, ok := s.(*sched.Framework)
	if !ok || len(f.Profile().Scores) == 0 || f.Profile().Select != sched.SelectBest {
		return nil, fmt.Errorf("%q %w", name, errNoScores)
	}
	return f, nil
}

// validate reports the first bad value, naming its YAML key under "prior".
func (p *Prior) validate() error {
	bad := func(key string, v any, why string) error {
		return fmt.Errorf("%w: prior.%s = %v: %s", ErrConfig, key, v, why)
	}
	if p.Heuristic != "" && len(p.Heuristics) > 0 {
		return bad("heuristics", p.Heuristics, "set either heuristic (one prior) or heuristics (a gate over several), not both")
	}
	if p.Heuristic == "" && len(p.Heuristics) == 0 {
		if p.Scale != 0 || p.Pending != 0 || p.Normalize != "" {
			return bad("heuristic", `""`, "must name a heuristic when scale, pending or normalize is set")
		}
		return nil
	}
	if p.Heuristic != "" {
		if _, err := priorFramework(p.Heuristic); err != nil {
			return bad("heuristic", p.Heuristic, "must be one of "+strings.Join(PriorHeuristics(), ", "))
		}
	}
	if len(p.Heuristics) == 1 {
		return bad("heuristics", p.Heuristics, "a gate needs 2 or more heuristics (one prior is prior.heuristic)")
	}
	for i, h := range p.Heuristics {
		if _, err := priorFramework(h); err != nil {
			return bad(fmt.Sprintf("heuristics[%d]", i), h, "must be one of "+strings.Join(PriorHeuristics(), ", "))
		}
		if slices.Contains(p.Heuristics[:i], h) {
			return bad(fmt.Sprintf("heuristics[%d]", i), h, "is listed twice")
		}
	}
	switch {
	case !(p.Scale > 0) || math.IsInf(p.Scale, 0):
		return bad("scale", p.Scale, "must be a finite positive number")
	case math.IsNaN(p.Pending) || math.IsInf(p.Pending, 0):
		return bad("pending", p.Pending, "must be a finite number")
	case p.Normalize != "" && p.Normalize != Ratio && p.Normalize != Range:
		return bad("normalize", p.Normalize, `must be "ratio" or "range"`)
	}
	return nil
}

// Names returns the prior's heuristics: Heuristics, or Heuristic alone, or
// none.
func (p Prior) Names() []string {
	if p.Heuristic != "" {
		return []string{p.Heuristic}
	}
	return p.Heuristics
}

// Baseline returns the heuristic whose replay reward.paired subtracts:
// Heuristic, or with a gate the first of Heuristics (list the one to beat
// first), or "" without a prior.
func (p Prior) Baseline() string {
	if names := p.Names(); len(names) > 0 {
		return names[0]
	}
	return ""
}

// Gate returns the number of priors a gated policy mixes: len(Heuristics),
// 0 for a single prior or none (model.Config.Gate).
func (p Prior) Gate() int { return len(p.Heuristics) }

// priorState computes Obs.Prior for an encoder.
type priorState struct {
	cfg    Prior
	fs     []*sched.Framework // empty: no prior
	scores []int64
	prior  []float64
}

// newPriorState returns the prior of cfg; cfg has been validated.
func newPriorState(cfg Prior) priorState {
	ps := priorState{cfg: cfg}
	for _, name := range cfg.Names() {
		f, _ := priorFramework(name)
		ps.fs = append(ps.fs, f)
	}
	return ps
}

// fill returns the priors for pod p on c with mask (N+1 entries each, one
// per heuristic), or nil without a prior. The slice is the state's own
// buffer.
func (ps *priorState) fill(c *sim.Cluster, p *sim.Pod, mask []bool) []float64 {
	if len(ps.fs) == 0 {
		return nil
	}
	n, k := len(mask)-1, len(ps.fs)
	if cap(ps.prior) < k*(n+1) {
		ps.prior = make([]float64, 2*k*(n+1))
	}
	all := ps.prior[:k*(n+1)]
	for j, f := range ps.fs {
		ps.fillOne(f, all[j*(n+1):(j+1)*(n+1)], c, p, mask)
	}
	return all
}

// fillOne writes heuristic f's prior into prior (N+1 entries).
func (ps *priorState) fillOne(f *sched.Framework, prior []float64, c *sim.Cluster, p *sim.Pod, mask []bool) {
	n := len(mask) - 1
	clear(prior)
	prior[n] = ps.cfg.Pending
	if p == nil || p.Spec == nil || !slices.Contains(mask[:n], true) {
		return
	}
	ps.scores = f.Scores(c, p, ps.scores)
	s := ps.scores
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for i := range n {
		if mask[i] {
			lo, hi = min(lo, s[i]), max(hi, s[i])
		}
	}
	scale := ps.cfg.Scale
	if ps.cfg.Normalize != Range && hi > 0 {
		h := float64(hi) // divisions, not a reciprocal: the best node gets exactly 0
		for i := range n {
			if mask[i] {
				prior[i] = max(scale*(float64(s[i])/h-1), -scale)
			}
		}
		return
	}
	if hi == lo {
		return // every feasible node ties: all 0
	}
	d := float64(hi - lo)
	for i := range n {
		if mask[i] {
			prior[i] = scale * (float64(s[i]-hi) / d)
		}
	}
}
