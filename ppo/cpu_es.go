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
)

// TrainES searches the logit weights of a CPU/memory policy (the
// architecture of cfg: hidden, rounds, logit_clip, prior, zero_init, seed)
// with evolution strategies, as TrainGPUES does for a GPU policy. Each
// generation draws a base seed and Pairs noise vectors from the run's seed
// and the generation; every candidate plays the same Episodes greedy
// episodes of src (agent.Evaluate from that base seed: the same windows,
// sizes, loads and machines) and is scored by minus its mean unschedulable
// pods, the suite's count. The centre and the prior heuristic (ties to the
// lowest node, TeacherAction) play them too, for progress.csv's paired log.
//
// Validation is the trainer's: cfg.EvalEpisodes greedy episodes of val from
// agent.EvalSeed, the start first (a zero correction: the prior heuristic
// with lowest ties), then every EvalFreq generations; best.ckpt when its
// mean unschedulable pods are strictly fewer than the best so far
// (ppo.select must be unschedulable). last.ckpt after every generation;
// opts.Resume continues exactly (more generations, another eval_freq or
// workers). Checkpoints load with agent.Load like a PPO one.
func TrainES(ctx context.Context, es ESConfig, cfg Config, ec env.Config, src, val env.Source, opts Options) (Summary, error) {
	start := time.Now()
	sum := Summary{BestEvalScore: math.NaN()}
	if err := es.Validate(); err != nil {
		return sum, err
	}
	if err := cfg.Validate(); err != nil {
		return sum, err
	}
	if err := ec.Validate(); err != nil {
		return sum, err
	}
	if src == nil {
		src = ec.Workload
	}
	if val == nil {
		val = src
	}
	switch {
	case es.LossWeight != 0:
		return sum, fmt.Errorf("%w: es.loss_weight = %g: GPU runs only", ErrConfig, es.LossWeight)
	case opts.Out == "":
		return sum, fmt.Errorf("%w: no output folder", ErrConfig)
	case cfg.Prior && len(ec.Prior.Names()) == 0:
		return sum, fmt.Errorf("%w: ppo.prior is on, but the environment has no prior heuristic", ErrConfig)
	case cfg.Select != SelectUnschedulable:
		return sum, fmt.Errorf("%w: ppo.select = %q: evolution strategies select on what they search, set it to %s", ErrConfig, cfg.Select, SelectUnschedulable)
	case es.EvalFreq > 0 && cfg.EvalEpisodes < 1:
		return sum, fmt.Errorf("%w: es.eval_freq %d without ppo.eval_episodes", ErrConfig, es.EvalFreq)
	}
	lock, err := openRunFolder(opts.Out, opts.Resume, opts.Force)
	if err != nil {
		return sum, err
	}
	defer lock.Unlock()
	ecJSON, _ := json.Marshal(ec)
	cfgJSON, _ := json.Marshal(cfg)
	esJSON, _ := json.Marshal(es)
	mcfg := cpuModelConfig(cfg, ec)

	var pol *model.Policy
	gen, steps := 0, int64(0)
	best := math.Inf(-1) // minus the best validation count
	if opts.Resume != "" {
		if pol, err = agent.LoadPolicy(opts.Resume); err != nil {
			return sum, err
		}
		meta := pol.Meta()
		if meta[agent.MetaEnv] != string(ecJSON) {
			return sum, fmt.Errorf("%w: resuming from %s: its environment %s differs from the config's %s", ErrConfig, opts.Resume, meta[agent.MetaEnv], ecJSON)
		}
		if c := pol.Config(); c.Hidden != mcfg.Hidden || c.Rounds != mcfg.Rounds || c.Prior != mcfg.Prior || c.Gate != mcfg.Gate || c.LogitClip != mcfg.LogitClip {
			return sum, fmt.Errorf("%w: resuming from %s: its policy has hidden %d, rounds %d, prior %v, a gate over %d priors and logit_clip %v; the config %d, %d, %v, %d and %v",
				ErrConfig, opts.Resume, c.Hidden, c.Rounds, c.Prior, c.Gate, c.LogitClip, mcfg.Hidden, mcfg.Rounds, mcfg.Prior, mcfg.Gate, mcfg.LogitClip)
		}
		if gen, steps, best, err = esResumed(opts.Resume, meta, es, metaBest); err != nil {
			return sum, err
		}
	} else if pol, err = model.New(mcfg); err != nil {
		return sum, fmt.Errorf("building the policy: %w", err)
	}
	save := func(path string) error {
		return pol.Save(path, map[string]string{
			agent.MetaEnv: string(ecJSON), metaConfig: string(cfgJSON), metaESConfig: string(esJSON),
			metaESGenerations: strconv.Itoa(gen), metaSteps: strconv.FormatInt(steps, 10), metaUpdates: strconv.Itoa(gen),
			metaBest: strconv.FormatFloat(best, 'g', -1, 64),
		})
	}
	logs, err := newRunLogs(opts.Out, opts.Resume != "", esCPUHeader, esCPUValHeader)
	if err != nil {
		return sum, err
	}
	defer logs.close()

	nw := esWorkers(es)
	workers := make([]*model.Policy, nw)
	for i := range workers {
		if workers[i], err = model.New(mcfg); err != nil {
			return sum, fmt.Errorf("building the policy: %w", err)
		}
	}
	search := newESSearch(es, cfg.Seed, pol.LogitWeights(nil))
	// unschedulable plays n greedy episodes of s from seed on worker w,
	// with the weights (nil: the prior heuristic, lowest ties), one
	// episode per job over the workers when spread; the mean count and
	// the decisions taken.
	unschedulable := func(w int, weights []float64, s env.Source, n int, seed uint64) (float64, int64, error) {
		var ev agent.EvalResult
		var err error
		if weights == nil {
			ev, err = agent.EvaluateActor(ctx, ec, s, n, seed, TeacherAction)
		} else {
			if err := workers[w].SetLogitWeights(weights); err != nil {
				return 0, 0, err
			}
			ev, err = agent.Evaluate(ctx, workers[w], ec, s, n, seed)
		}
		if err != nil {
			return 0, 0, err
		}
		return ev.Unschedulable, int64(math.Round(ev.MeanLength * float64(ev.Episodes))), nil
	}
	priorVal := math.NaN()
	validate := func() error {
		theta := search.theta
		if math.IsNaN(priorVal) {
			v, err := spread(nw, cfg.EvalEpisodes, func(w, k int) (float64, error) {
				u, _, err := unschedulable(w, nil, val, 1, agent.EvalSeed+uint64(k))
				return u, err
			})
			if err != nil {
				return err
			}
			priorVal = v
		}
		v, err := spread(nw, cfg.EvalEpisodes, func(w, k int) (float64, error) {
			u, _, err := unschedulable(w, theta, val, 1, agent.EvalSeed+uint64(k))
			return u, err
		})
		if err != nil {
			return err
		}
		if err := logs.validationRow(strconv.Itoa(gen), strconv.FormatInt(steps, 10), fmtG(v), fmtG(priorVal)); err != nil {
			return err
		}
		slog.Info("es validation", "generation", gen, "val_unschedulable", v, "prior_unschedulable", priorVal)
		if -v > best {
			best = -v
			return save(filepath.Join(opts.Out, BestCheckpoint))
		}
		return nil
	}
	interrupted := func(err error) bool {
		if err != nil && ctx.Err() != nil {
			sum.Interrupted = true
			return true
		}
		return false
	}
	if es.EvalFreq > 0 && opts.Resume == "" {
		if err := validate(); err != nil {
			if interrupted(err) {
				return sum, save(filepath.Join(opts.Out, LastCheckpoint))
			}
			return sum, fmt.Errorf("validating the start: %w", err)
		}
	}

	cands := 2 * es.Pairs
	for gen < es.Generations {
		if ctx.Err() != nil {
			sum.Interrupted = true
			break
		}
		var base uint64
		search.draw(gen, func(rng *rand.Rand) {
			base = rng.Uint64() >> 2 // below agent.EvalSeed (1<<62): never a validation seed
		})
		fit, decisions, err := search.play(nw, func(w, _ int, weights []float64) (float64, int64, error) {
			u, n, err := unschedulable(w, weights, src, es.Episodes, base)
			return -u, n, err
		})
		if err != nil {
			if interrupted(err) {
				break
			}
			return sum, fmt.Errorf("generation %d: %w", gen, err)
		}
		steps += decisions
		search.step(fit[:cands])
		if err := pol.SetLogitWeights(search.theta); err != nil {
			return sum, err
		}
		gen++
		c := fit[:cands] // fitness is minus the count; 0 - x, not -x, keeps a zero count unsigned
		if err := logs.progressRow(strconv.Itoa(gen), strconv.FormatInt(steps, 10), fmtG(time.Since(start).Seconds()),
			strconv.Itoa(len(c)*es.Episodes), fmtG(0-slices.Max(c)), fmtG(0-meanOf(c)), fmtG(0-fit[cands]), fmtG(0-fit[cands+1]),
			fmtG(fit[cands]-fit[cands+1]), fmtG(es.LearningRate)); err != nil {
			return sum, err
		}
		if es.EvalFreq > 0 && (gen%es.EvalFreq == 0 || gen == es.Generations) {
			if err := validate(); err != nil {
				if interrupted(err) {
					break
				}
				return sum, err
			}
		}
		if err := save(filepath.Join(opts.Out, LastCheckpoint)); err != nil {
			return sum, err
		}
	}
	if sum.Interrupted {
		if err := save(filepath.Join(opts.Out, LastCheckpoint)); err != nil {
			return sum, err
		}
	}
	logs.close()
	if err := PlotESLearningCurve(opts.Out, "kubesim evolution strategies"); err != nil {
		slog.Warn("no learning curve", "err", err)
	}
	sum.Steps, sum.Updates, sum.Elapsed = steps, int64(gen), time.Since(start)
	if !math.IsInf(best, -1) {
		sum.BestEvalScore = best
	}
	return sum, nil
}

// esCPUHeader is progress.csv's header in a TrainES run: per generation,
// the candidates' best and mean unschedulable pods per episode, the
// centre's (the weights before the step) and the prior heuristic's on the
// same episodes, and the centre's gain over the prior (pods fewer).
var esCPUHeader = []string{"update", "steps", "seconds", "episodes", "best_unschedulable", "mean_unschedulable",
	"centre_unschedulable", "prior_unschedulable", "centre_gain", "learning_rate"}

// esCPUValHeader is validation.csv's header in a TrainES run.
var esCPUValHeader = []string{"update", "steps", "val_unschedulable", "prior_unschedulable"}

// spread runs n jobs on nw workers (runJobs) and returns the mean of
// their values, summed in job order so that it does not depend on nw.
func spread(nw, n int, job func(w, k int) (float64, error)) (float64, error) {
	vals := make([]float64, n)
	err := runJobs(nw, n, func(w, k int) error {
		v, err := job(w, k)
		vals[k] = v
		return err
	})
	if err != nil {
		return 0, err
	}
	var s float64
	for _, v := range vals {
		s += v
	}
	return s / float64(n), nil
}

// PlotESLearningCurve draws a TrainES run's learning curve from the
// progress.csv and validation.csv of its folder dir into dir's
// learning_curve.png, in unschedulable pods per episode against decisions:
// the centre and the prior heuristic on each generation's fresh training
// episodes (centre_unschedulable, prior_unschedulable), and the policy
// and the prior on the validation episodes (val_unschedulable, the
// prior's as a line).
func PlotESLearningCurve(dir, title string) error {
	return plotRunCurves(dir, title, "unschedulable pods per episode", []column{
		{key: "centre_unschedulable", label: "centre, training episodes", color: trainColor},
		{key: "prior_unschedulable", label: "prior heuristic, the same episodes", color: selectColor},
	}, []column{
		{key: "val_unschedulable", label: "validation (val_unschedulable)", color: evalColor, points: true},
		{key: "prior_unschedulable", label: "prior heuristic on validation", color: selectColor},
	})
}
