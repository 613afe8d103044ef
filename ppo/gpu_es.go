package ppo

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/kubesim/kubesim/agent"
	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/model"
	"github.com/kubesim/kubesim/sim"
)

// TrainGPUES searches the logit weights of a GPU policy (the architecture
// of cfg: hidden, rounds, logit_clip, prior, zero_init, seed) on
// env.GPUEnv episodes of w under ec. Each generation draws Episodes
// training seeds and Pairs noise vectors e from the run's seed and the
// generation (so a resumed run continues exactly), plays the greedy policy
// of w + sigma e and w - sigma e on the same episodes, scores each by its
// mean GPU allocation at 100% arrived, and moves w by LearningRate x (1 /
// (2 Pairs sigma)) x sum of (rank(w+) - rank(w-)) e, with centred ranks
// in [-0.5, 0.5]. The greedy policy, not a sampled one, is what is
// searched: what an evaluation runs. Validation and selection are
// TrainGPU's (opts: the start first, then every EvalFreq generations,
// best.ckpt strictly better); last.ckpt after every generation, resumed
// with opts.Resume (more generations, another eval_freq or workers; the
// search itself must be the same). A checkpoint loads with agent.LoadGPU
// like a PPO one.
func TrainGPUES(ctx context.Context, es ESConfig, cfg Config, ec env.GPUConfig, w *sim.GPUWorkload, opts GPUOptions) (GPUSummary, error) {
	start := time.Now()
	sum := GPUSummary{BestVal: math.NaN(), SelectVal: math.NaN()}
	if err := es.Validate(); err != nil {
		return sum, err
	}
	if err := ec.Validate(); err != nil {
		return sum, err
	}
	if err := checkObjective(opts.Objective); err != nil {
		return sum, err
	}
	switch {
	case opts.Out == "":
		return sum, fmt.Errorf("%w: no output folder", ErrConfig)
	case cfg.Prior && ec.Prior == "":
		return sum, fmt.Errorf("%w: ppo.prior is on, but env.prior names no GPU policy", ErrConfig)
	case es.EvalFreq > 0 && len(opts.ValSeeds) == 0:
		return sum, fmt.Errorf("%w: es.eval_freq %d without validation seeds", ErrConfig, es.EvalFreq)
	}
	if opts.ValWorkers == 0 {
		opts.ValWorkers = esWorkers(es)
	}
	lock, err := openRunFolder(opts.Out, opts.Resume, opts.Force)
	if err != nil {
		return sum, err
	}
	defer lock.Unlock()
	ecJSON, _ := json.Marshal(ec)
	cfgJSON, _ := json.Marshal(cfg)
	esJSON, _ := json.Marshal(es)
	mcfg := gpuModelConfig(cfg, ec)

	var pol *model.Policy
	gen, steps := 0, int64(0)
	best := math.Inf(-1)
	if opts.Resume != "" {
		var gec env.GPUConfig
		if pol, gec, err = agent.LoadGPU(opts.Resume); err != nil {
			return sum, err
		}
		if gec != ec {
			return sum, fmt.Errorf("%w: resuming from %s: its environment %+v differs from the config's %+v", ErrConfig, opts.Resume, gec, ec)
		}
		if err := checkResumedObjective(opts.Resume, pol.Meta(), opts.Objective); err != nil {
			return sum, err
		}
		if gen, steps, best, err = esResumed(opts.Resume, pol.Meta(), es, metaGPUBest); err != nil {
			return sum, err
		}
	} else if pol, err = model.New(mcfg); err != nil {
		return sum, fmt.Errorf("building the policy: %w", err)
	}
	// save writes the policy after gen generations (the count is gen's, so
	// the update argument of gpuValidator's calls is not needed)
	save := func(path string, _ int64) error {
		return pol.Save(path, map[string]string{
			agent.MetaGPUEnv: string(ecJSON), metaConfig: string(cfgJSON), metaESConfig: string(esJSON),
			metaESGenerations: strconv.Itoa(gen), metaSteps: strconv.FormatInt(steps, 10), metaUpdates: strconv.Itoa(gen),
			metaGPUBest: strconv.FormatFloat(best, 'g', -1, 64), metaGPUObjective: objectiveName(opts.Objective),
		})
	}
	logs, err := newRunLogs(opts.Out, opts.Resume != "", esHeader, gpuValHeaderFor(opts.Objective))
	if err != nil {
		return sum, err
	}
	defer logs.close()
	val := &gpuValidator{ec: ec, w: w, opts: opts, logs: logs, sum: &sum, best: &best, save: save}
	validate := func() error {
		v, err := val.run(ctx, pol, int64(gen), steps)
		if err == nil {
			slog.Info("es validation", "generation", gen, "objective", objectiveName(opts.Objective), "val", v, "select", sum.SelectVal)
		}
		return err
	}
	if es.EvalFreq > 0 && opts.Resume == "" {
		if err := validate(); err != nil {
			return sum, fmt.Errorf("validating the start: %w", err)
		}
	}

	nw := esWorkers(es)
	workers := make([]*esWorker, nw)
	for i := range workers {
		if workers[i], err = newESWorker(mcfg, ec, w, opts.Objective); err != nil {
			return sum, err
		}
	}
	search := newESSearch(es, cfg.Seed, pol.LogitWeights(nil))
	cands := 2 * es.Pairs
	for gen < es.Generations {
		if ctx.Err() != nil {
			sum.Interrupted = true
			break
		}
		seeds := make([]uint64, es.Episodes)
		search.draw(gen, func(rng *rand.Rand) {
			for i := range seeds {
				for seeds[i] = rng.Uint64(); slices.Contains(opts.ValSeeds, seeds[i]); seeds[i] = rng.Uint64() {
				}
			}
		})
		// each job's objective per episode (job c writes only perEp[c]); the
		// baseline job (cands+1) is the selection policy, which a
		// loss-averse fitness weighs the candidates against once all ran
		perEp := make([][]float64, cands+2)
		fit, decisions, err := search.play(nw, func(i, c int, weights []float64) (float64, int64, error) {
			v, n, err := workers[i].episodes(ctx, weights, seeds)
			perEp[c] = v
			return meanOf(v), n, err
		})
		if err != nil {
			if ctx.Err() != nil {
				sum.Interrupted = true
				break
			}
			return sum, fmt.Errorf("generation %d: %w", gen, err)
		}
		if es.LossWeight > 0 {
			for c := range cands {
				fit[c] = lossAverse(perEp[c], perEp[cands+1], es.LossWeight)
			}
		}
		steps += decisions
		centre, base := fit[cands], fit[cands+1]
		search.step(fit[:cands])
		if err := pol.SetLogitWeights(search.theta); err != nil {
			return sum, err
		}
		gen++
		if err := logs.esProgress(gen, steps, time.Since(start), fit[:cands], centre, base, es); err != nil {
			return sum, err
		}
		if es.EvalFreq > 0 && (gen%es.EvalFreq == 0 || gen == es.Generations) {
			if err := validate(); err != nil {
				if ctx.Err() != nil {
					sum.Interrupted = true
					break
				}
				return sum, err
			}
		}
		if err := save(filepath.Join(opts.Out, LastCheckpoint), int64(gen)); err != nil {
			return sum, err
		}
	}
	if sum.Interrupted {
		if err := save(filepath.Join(opts.Out, LastCheckpoint), int64(gen)); err != nil {
			return sum, err
		}
	}
	logs.close()
	if err := PlotGPULearningCurve(opts.Out, "kubesim GPU evolution strategies"); err != nil {
		slog.Warn("no learning curve", "err", err)
	}
	sum.Steps, sum.Updates, sum.Elapsed = steps, int64(gen), time.Since(start)
	if !math.IsInf(best, -1) {
		sum.BestVal = best
	}
	return sum, nil
}

// esWorker plays candidates: its own policy copy and environment.
type esWorker struct {
	pol   *model.Policy
	actor *agent.GPUActor
	env   *env.GPUEnv
	obj   string // GPUOptions.Objective
}

func newESWorker(mcfg model.Config, ec env.GPUConfig, w *sim.GPUWorkload, obj string) (*esWorker, error) {
	pol, err := model.New(mcfg)
	if err != nil {
		return nil, fmt.Errorf("building the policy: %w", err)
	}
	e, err := env.NewGPUEnv(ec, w)
	if err != nil {
		return nil, err
	}
	return &esWorker{pol: pol, actor: agent.NewGPUActor(pol), env: e, obj: obj}, nil
}

// episodes is the greedy policy of weights theta's objective
// (objectiveValue: by default the GPU allocation at 100% arrived) on each
// episode of seeds, and the decisions it took; the plain fitness is their
// mean.
//
// With theta nil the environment's selection policy (env.GPUConfig.Select:
// fgd-tiers in round 9) takes every decision instead, for the paired
// baseline of progress.csv.
func (wk *esWorker) episodes(ctx context.Context, theta []float64, seeds []uint64) ([]float64, int64, error) {
	if theta != nil {
		if err := wk.pol.SetLogitWeights(theta); err != nil {
			return nil, 0, err
		}
	}
	vals := make([]float64, 0, len(seeds))
	var n int64
	for _, seed := range seeds {
		obs, err := wk.env.Reset(seed)
		if err != nil {
			return nil, n, err
		}
		for {
			if n%256 == 0 && ctx.Err() != nil {
				return nil, n, ctx.Err()
			}
			var a int
			if theta == nil {
				a = wk.env.Best()
			} else if a, err = wk.actor.Act(obs); err != nil {
				return nil, n, err
			}
			next, _, done, info, err := wk.env.Step(a)
			if err != nil {
				return nil, n, err
			}
			n++
			if done {
				vals = append(vals, objectiveValue(wk.obj, *info.Result))
				break
			}
			obs = next
		}
	}
	return vals, n, nil
}

// esProgress logs one generation in progress.csv (esHeader): the
// candidates' best and mean fitness (ep_return_mean, ep_alloc_pct_mean,
// the columns PlotGPULearningCurve draws), the centre's before the step
// and the selection policy's on the same episodes, and their difference.
func (l *runLogs) esProgress(gen int, steps int64, el time.Duration, fit []float64, centre, base float64, es ESConfig) error {
	return l.progressRow(strconv.Itoa(gen), strconv.FormatInt(steps, 10), fmtG(el.Seconds()), strconv.Itoa(len(fit)*es.Episodes),
		fmtG(slices.Max(fit)), fmtG(meanOf(fit)), fmtG(centre), fmtG(base), fmtG(centre-base), fmtG(es.LearningRate))
}

// esHeader is progress.csv's header in an ES run. Its fitness columns
// (ep_return_mean, ep_alloc_pct_mean, centre_alloc, select_alloc) hold
// the run's objective: under ObjectiveCurve the curve's mean over
// CurveFrom-130% arrived, not an allocation at one level.
var esHeader = []string{"update", "steps", "seconds", "episodes", "ep_return_mean", "ep_alloc_pct_mean", "centre_alloc", "select_alloc", "centre_minus_select", "learning_rate"}

// lossAverse is a candidate's loss-averse fitness (ESConfig.LossWeight):
// the mean of its per-episode objective v minus weight times the mean of
// the episodes' shortfall against the selection policy's base,
// max(0, base - v). With weight 0 it is the plain mean.
func lossAverse(v, base []float64, weight float64) float64 {
	var short float64
	for e := range v {
		short += max(0, base[e]-v[e])
	}
	return meanOf(v) - weight*short/float64(len(v))
}
