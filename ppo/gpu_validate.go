package ppo

import (
	"context"
	"fmt"
	"sync"

	"github.com/kubesim/kubesim/agent"
	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/model"
	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

// valEpisode is one validation episode: a workload and its seed.
type valEpisode struct {
	w    *sim.GPUWorkload
	seed uint64
}

// valEpisodes are the validation episodes of opts: each seed on w, and
// with opts.ValScarce also on a scarce-model draw of that seed, drawn as
// the training episodes are (ec's scarce_models, scarce_f_max and
// scarce_pick), with opts.ValSpec on a draw of model constraints of that
// seed, and with opts.ValScarceEach on each node model made scarce in turn.
func valEpisodes(w *sim.GPUWorkload, ec env.GPUConfig, opts GPUOptions) []valEpisode {
	var eps []valEpisode
	for _, seed := range opts.ValSeeds {
		eps = append(eps, valEpisode{w, seed})
	}
	if opts.ValScarce {
		for _, seed := range opts.ValSeeds {
			sw, _ := env.ScarceWorkload(w, seed, ec.ScarceDraw())
			eps = append(eps, valEpisode{sw, seed})
		}
	}
	if opts.ValSpec > 0 {
		for _, seed := range opts.ValSeeds {
			eps = append(eps, valEpisode{env.SpecWorkload(w, seed, opts.ValSpec), seed})
		}
	}
	if opts.ValScarceEach > 0 {
		for _, seed := range opts.ValSeeds {
			for _, m := range env.NodeModels(w) {
				sw, _ := env.ScarceModel(w, seed, m, opts.ValScarceEach)
				eps = append(eps, valEpisode{sw, seed})
			}
		}
	}
	if opts.ValMixEach > 0 {
		for _, seed := range opts.ValSeeds {
			for c := range env.MixClasses {
				if mw := env.MixWorkload(w, c, opts.ValMixEach, seed); mw != w {
					eps = append(eps, valEpisode{mw, seed})
				}
			}
		}
	}
	return eps
}

// validateGPU is the greedy policy's mean objective (objectiveValue: by
// default the allocation at 100% arrived) on the validation episodes.
// With opts.ValWorkers > 1 the episodes are shared among that many
// goroutines, each with its own copy of the policy's logit weights (a
// model.Policy is not safe for concurrent use); the scores are summed in
// episode order, so the mean is bit for bit the sequential one.
func validateGPU(ctx context.Context, pol *model.Policy, ec env.GPUConfig, w *sim.GPUWorkload, opts GPUOptions) (float64, error) {
	eps := valEpisodes(w, ec, opts)
	n := min(max(opts.ValWorkers, 1), len(eps))
	pols := []*model.Policy{pol}
	for len(pols) < n {
		c, err := greedyCopy(pol)
		if err != nil {
			return 0, err
		}
		pols = append(pols, c)
	}
	return meanOverEpisodes(eps, n, opts.Objective, func(k int, ep valEpisode) (sim.GPUResult, error) {
		return agent.EvaluateGPU(ctx, pols[k], ec, ep.w, opts.ValInflate, ep.seed, "ppo")
	})
}

// selectValGPU is the GPU-selection policy's own mean objective on the
// validation episodes (FGD's, by default), shared among opts.ValWorkers
// goroutines as validateGPU's.
func selectValGPU(ec env.GPUConfig, w *sim.GPUWorkload, opts GPUOptions) (float64, error) {
	eps := valEpisodes(w, ec, opts)
	return meanOverEpisodes(eps, min(max(opts.ValWorkers, 1), len(eps)), opts.Objective, func(_ int, ep valEpisode) (sim.GPUResult, error) {
		sc, err := sched.NewGPU(ec.Select, ep.seed)
		if err != nil {
			return sim.GPUResult{}, err
		}
		return sim.RunGPU(ep.w, sc, sim.GPURunConfig{Inflate: opts.ValInflate, Seed: ep.seed})
	})
}

// greedyCopy is a policy of pol's architecture with pol's logit weights:
// the same greedy actions (its value head, which no action reads, is a
// fresh one).
func greedyCopy(pol *model.Policy) (*model.Policy, error) {
	c, err := model.New(pol.Config())
	if err != nil {
		return nil, fmt.Errorf("copying the policy for validation: %w", err)
	}
	if err := c.SetLogitWeights(pol.LogitWeights(nil)); err != nil {
		return nil, fmt.Errorf("copying the policy for validation: %w", err)
	}
	return c, nil
}

// meanOverEpisodes runs each episode with run on one of n goroutines
// (goroutine k takes episodes k, k+n, ...) and returns the mean of their
// objective, summed in episode order. The first error in episode order is
// returned.
func meanOverEpisodes(eps []valEpisode, n int, objective string, run func(k int, ep valEpisode) (sim.GPUResult, error)) (float64, error) {
	vals := make([]float64, len(eps))
	errs := make([]error, len(eps))
	var wg sync.WaitGroup
	for k := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := k; i < len(eps); i += n {
				r, err := run(k, eps[i])
				if err != nil {
					errs[i] = err
					return
				}
				vals[i] = objectiveValue(objective, r)
			}
		}()
	}
	wg.Wait()
	var s float64
	for i, v := range vals {
		if errs[i] != nil {
			return 0, errs[i]
		}
		s += v
	}
	return s / float64(len(eps)), nil
}
