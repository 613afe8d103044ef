package agent

import (
	"context"
	"fmt"
	"math"

	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/model"
)

// EvalSeed is the first seed of evaluation episodes. Training environments
// are seeded from ppo.Config.Seed upwards (one per environment and update), far
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
	var b model.Batch
	var act model.ActResult
	return EvaluateActor(ctx, cfg, src, episodes, seed, func(obs *env.Obs) (int, error) {
		if Forced(obs) {
			return obs.N, nil // Pending, the greedy choice when no node fits
		}
		Fill(&b, []env.Obs{*obs})
		if err := pol.Act(&b, true, nil, &act); err != nil {
			return 0, err
		}
		return ToEnv(act.Actions[0], obs.N, b.N), nil
	})
}

// EvaluateActor is Evaluate for any actor: act returns the environment
// action for an observation. With the same cfg, src, episodes and seed, two
// actors replay the same workloads, so their results compare pairwise (the
// trainer logs the prior heuristic's beside the policy's).
func EvaluateActor(ctx context.Context, cfg env.Config, src env.Source, episodes int, seed uint64, act func(obs *env.Obs) (int, error)) (EvalResult, error) {
	cfg.MaxSteps = 0
	e, err := env.New(cfg, src)
	if err != nil {
		return EvalResult{}, err
	}
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
			a, err := act(&obs)
			if err != nil {
				return EvalResult{}, fmt.Errorf("evaluation: %w", err)
			}
			var rew float64
			var term, trunc bool
			var info env.Info
			obs, rew, term, trunc, info = e.Step(a)
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
