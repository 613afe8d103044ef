package ppo

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/model"
	"github.com/kubesim/kubesim/sim"
)

// EvalSeed is the first seed of evaluation episodes. Training environments
// are seeded from Config.Seed upwards (one per environment and update), far
// below it, so synthetic evaluation episodes never repeat training ones; a
// trace source keeps them apart by window.
const EvalSeed uint64 = 1 << 62

// EvalResult summarises greedy evaluation episodes.
type EvalResult struct {
	Episodes   int
	MeanReward float64
	MeanLength float64
	// Metrics averaged over the episodes that ran to the end of their
	// workload (NaN when none did).
	Unschedulable, Stranded, Fragmentation, NodeCPUStd, SLAPer1k, PendingP95Ms float64
}

// Evaluate runs episodes greedy episodes of pol on cfg's environment with
// src's workloads, seeded from seed upwards, and averages them. Evaluation
// episodes run to the end of their workload (cfg.MaxSteps is ignored), so
// that the simulator's metrics cover whole windows.
func Evaluate(ctx context.Context, pol *model.Policy, cfg env.Config, src env.Source, episodes int, seed uint64) (EvalResult, error) {
	cfg.MaxSteps = 0
	e, err := env.New(cfg, src)
	if err != nil {
		return EvalResult{}, err
	}
	var b model.Batch
	var act model.ActResult
	var r EvalResult
	var full int
	for k := range episodes {
		obs, _, err := e.Reset(seed + uint64(k))
		if err != nil {
			return EvalResult{}, fmt.Errorf("evaluation episode %d: %w", k, err)
		}
		var ret float64
		var steps int
		for {
			if err := ctx.Err(); err != nil {
				return EvalResult{}, fmt.Errorf("evaluation: %w", err)
			}
			fill(&b, []env.Obs{obs})
			if err := pol.Act(&b, true, nil, &act); err != nil {
				return EvalResult{}, fmt.Errorf("evaluation: %w", err)
			}
			var rew float64
			var term, trunc bool
			var info env.Info
			obs, rew, term, trunc, info = e.Step(toEnv(act.Actions[0], obs.N, b.N))
			ret += rew
			steps++
			if term || trunc {
				if info.Episode != nil && info.Episode.Result != nil && term {
					res := info.Episode.Result
					r.Unschedulable += float64(res.Unschedulable)
					r.Stranded += (res.StrandedCPU + res.StrandedMem) / 2
					r.Fragmentation += res.FragmentationMean
					r.NodeCPUStd += res.NodeCPUStdMean
					r.SLAPer1k += res.SLAViolationsPer1k
					r.PendingP95Ms += res.PendingLatencyP95Ms
					full++
				}
				break
			}
		}
		r.MeanReward += ret
		r.MeanLength += float64(steps)
		r.Episodes++
	}
	if r.Episodes > 0 {
		r.MeanReward /= float64(r.Episodes)
		r.MeanLength /= float64(r.Episodes)
	}
	for _, f := range []*float64{&r.Unschedulable, &r.Stranded, &r.Fragmentation, &r.NodeCPUStd, &r.SLAPer1k, &r.PendingP95Ms} {
		if full > 0 {
			*f /= float64(full)
		} else {
			*f = math.NaN()
		}
	}
	return r, nil
}

// record logs the evaluation under SB3's eval/ prefix.
func (r EvalResult) record(l *Logger) {
	l.Record("eval/mean_reward", r.MeanReward)
	l.Record("eval/mean_ep_length", r.MeanLength)
	l.Record("eval/unschedulable", r.Unschedulable)
	l.Record("eval/stranded", r.Stranded)
	l.Record("eval/fragmentation", r.Fragmentation)
	l.Record("eval/node_cpu_std", r.NodeCPUStd)
	l.Record("eval/sla_per_1k", r.SLAPer1k)
	l.Record("eval/pending_p95_ms", r.PendingP95Ms)
}

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
	fill(&s.b, s.obs[:])
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

// LoadPolicy reads a checkpoint written by the trainer: the policy and the
// environment configuration it was trained with (its observation encoding).
func LoadPolicy(path string) (*model.Policy, env.Config, error) {
	pol, meta, err := loadCheckpoint(path)
	if err != nil {
		return nil, env.Config{}, err
	}
	ec := env.DefaultConfig()
	if s, ok := meta[metaEnv]; ok {
		if err := json.Unmarshal([]byte(s), &ec); err != nil {
			return nil, env.Config{}, fmt.Errorf("loading %s: bad %s metadata: %w", path, metaEnv, err)
		}
	}
	return pol, ec, nil
}
