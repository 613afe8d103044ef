package ppo

import (
	"context"
	"encoding/json"
	"errors"
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

// GPUOptions are a GPU training run's outputs and validation.
type GPUOptions struct {
	// Out is the run folder: progress.csv (one row per update),
	// validation.csv, last.ckpt and best.ckpt.
	Out string
	// Resume continues from a last.ckpt of this run: weights, Adam's
	// moments, the step and update counts and the best validation score.
	// The environments start new episodes (seeds drawn from the run's seed
	// and the update count), so a resumed run continues the counts and the
	// learning-rate schedule, not the exact trajectory of an uninterrupted
	// one (as Trainer's resume).
	Resume string
	// Force lets a fresh run (no Resume) overwrite a run folder that has
	// history (progress.csv, checkpoints); without it that is ErrRunExists.
	Force bool
	// ValSeeds are the validation episodes: the training workload on its
	// whole cluster, arrivals of these seeds (sim.GPUArrivals), inflated
	// to ValInflate; best.ckpt is the policy of the highest mean GPU
	// allocation at 100% arrived. Training never draws them.
	ValSeeds   []uint64
	ValInflate float64
	// ValScarce adds, for each validation seed, an episode of the same
	// seed on env.ScarceWorkload (models made scarce as in training): the
	// score is then the mean over twice as many episodes, so that selection
	// sees what model constraints do to a policy.
	ValScarce bool
	// ValScarceEach, when > 0, adds for each validation seed one episode
	// per GPU model of the node list, that model made scarce at factor
	// ValScarceEach (env.ScarceModel): selection then sees every model's
	// scarcity, not only the models a random draw picks.
	ValScarceEach float64
	// ValSpec, when > 0, adds for each validation seed an episode of the
	// same seed with model constraints drawn at that rate, as training
	// draws them (env.SpecWorkload): selection then sees how a policy
	// handles gpu_spec pods on the whole cluster.
	ValSpec float64
	// ValMixEach, when > 0, adds for each validation seed one episode per
	// pod class the list holds (env.MixClasses), that class's share raised
	// by replacing each pod with probability ValMixEach (env.MixWorkload):
	// selection then sees the pod mixes that env.mix_rate trains on.
	ValMixEach float64
	// Objective is what validation scores and evolution strategies'
	// fitness reads from an episode (ObjectiveAlloc100, the default, or
	// ObjectiveCurve).
	Objective string
	// ValWorkers is how many goroutines share the validation episodes (0
	// or 1: one). TrainGPUES sets it to its es.workers when 0. The score
	// does not depend on it.
	ValWorkers int
}

// GPUSummary is what a GPU training run did.
type GPUSummary struct {
	Steps, Updates int64
	// BestVal is best.ckpt's mean validation score (GPUOptions.Objective:
	// by default the allocation at 100% arrived) over the validation
	// episodes (NaN without validation); SelectVal the same for
	// the environment's GPU-selection policy (env.GPUConfig.Select, FGD by
	// default) on the same arrivals.
	BestVal, SelectVal float64
	Interrupted        bool
	Elapsed            time.Duration
}

// Checkpoint metadata of a GPU run.
const (
	metaGPUBest = "ppo/best_val_alloc100"
)

// TrainGPU trains a GPU policy (17 node and 16 pod features, the GNN
// encoder and pointer decoder of package model) with PPO on env.GPUEnv
// episodes of w under ec (subclusters when ec sets min_nodes/max_nodes):
// cfg.NEnvs environments stepped in turn, rollouts of cfg.NSteps each,
// GAE, cfg.NEpochs passes of cfg.BatchSize minibatches (the clipped
// losses of model.TrainStep), the learning rate annealed with
// cfg.AnnealLR. Rewards are the environment's, unscaled
// (cfg.NormalizeReward is not supported). Every cfg.EvalFreq steps the
// greedy policy runs on opts.ValSeeds (agent.EvaluateGPU on the whole
// cluster; with opts.ValScarce also on a scarce-model draw of each seed)
// and the best is kept as best.ckpt. A fresh run validates its untrained
// start first (with ppo.prior and zero_init, the prior itself: FGD) and
// saves it as the first best.ckpt, so that a run which only gets worse
// ships its start; later policies replace it only with a strictly higher
// score. The run stops with its context after saving last.ckpt.
func TrainGPU(ctx context.Context, cfg Config, ec env.GPUConfig, w *sim.GPUWorkload, opts GPUOptions) (GPUSummary, error) {
	start := time.Now()
	sum := GPUSummary{BestVal: math.NaN(), SelectVal: math.NaN()}
	if err := cfg.Validate(); err != nil {
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
	case cfg.NormalizeReward:
		return sum, fmt.Errorf("%w: ppo.normalize_reward is not supported for GPU training (rewards are GPUs)", ErrConfig)
	case cfg.BCSteps > 0:
		return sum, fmt.Errorf("%w: ppo.bc_steps is not supported for GPU training", ErrConfig)
	case cfg.Prior && ec.Prior == "":
		return sum, fmt.Errorf("%w: ppo.prior is on, but env.prior names no GPU policy", ErrConfig)
	case cfg.EvalFreq > 0 && len(opts.ValSeeds) == 0:
		return sum, fmt.Errorf("%w: ppo.eval_freq %d without validation seeds", ErrConfig, cfg.EvalFreq)
	case !(opts.ValInflate >= 0 && opts.ValInflate <= 10):
		return sum, fmt.Errorf("%w: validation inflate %v: want 0 to 10", ErrConfig, opts.ValInflate)
	}
	// the run folder: locked for this run; one with history is only
	// continued (Resume) or, with Force, overwritten
	lock, err := openRunFolder(opts.Out, opts.Resume, opts.Force)
	if err != nil {
		return sum, err
	}
	defer lock.Unlock()
	ecJSON, err := json.Marshal(ec)
	if err != nil {
		return sum, fmt.Errorf("encoding the env config: %w", err)
	}
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		return sum, fmt.Errorf("encoding the ppo config: %w", err)
	}

	var pol *model.Policy
	var steps, upd int64
	best := math.Inf(-1)
	if opts.Resume != "" {
		var gec env.GPUConfig
		if pol, gec, err = agent.LoadGPU(opts.Resume); err != nil {
			return sum, err
		}
		if gec != ec {
			return sum, fmt.Errorf("%w: resuming from %s: its environment %+v differs from the config's %+v", ErrConfig, opts.Resume, gec, ec)
		}
		meta := pol.Meta()
		if err := checkResumedObjective(opts.Resume, meta, opts.Objective); err != nil {
			return sum, err
		}
		if steps, err = strconv.ParseInt(meta[metaSteps], 10, 64); err != nil {
			return sum, fmt.Errorf("resuming from %s: bad %s: %w", opts.Resume, metaSteps, err)
		}
		if upd, err = strconv.ParseInt(meta[metaUpdates], 10, 64); err != nil {
			return sum, fmt.Errorf("resuming from %s: bad %s: %w", opts.Resume, metaUpdates, err)
		}
		if v, ok := meta[metaGPUBest]; ok {
			if best, err = strconv.ParseFloat(v, 64); err != nil {
				return sum, fmt.Errorf("resuming from %s: bad %s: %w", opts.Resume, metaGPUBest, err)
			}
		}
	} else {
		pol, err = model.New(gpuModelConfig(cfg, ec))
		if err != nil {
			return sum, fmt.Errorf("building the policy: %w", err)
		}
	}
	save := func(path string, done int64) error {
		return pol.Save(path, map[string]string{
			agent.MetaGPUEnv: string(ecJSON), metaConfig: string(cfgJSON),
			metaSteps: strconv.FormatInt(steps, 10), metaUpdates: strconv.FormatInt(done, 10),
			metaGPUBest: strconv.FormatFloat(best, 'g', -1, 64), metaGPUObjective: objectiveName(opts.Objective),
		})
	}
	logs, err := newRunLogs(opts.Out, opts.Resume != "", ppoGPUHeader, gpuValHeaderFor(opts.Objective))
	if err != nil {
		return sum, err
	}
	defer logs.close()

	// environments; training seeds come from the run's stream, never a
	// validation seed
	K, T := cfg.NEnvs, cfg.NSteps
	R := K * T
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x67707570706f+uint64(upd))) // "gpuppo"
	nextSeed := func() uint64 {
		for {
			if s := rng.Uint64(); !slices.Contains(opts.ValSeeds, s) {
				return s
			}
		}
	}
	envs := make([]*env.GPUEnv, K)
	cur := make([]env.Obs, K)
	for k := range envs {
		if envs[k], err = env.NewGPUEnv(ec, w); err != nil {
			return sum, err
		}
		o, err := envs[k].Reset(nextSeed())
		if err != nil {
			return sum, err
		}
		cur[k] = o.Clone()
	}
	var (
		obs        = make([]env.Obs, R)
		actions    = make([]int, R)
		logp       = make([]float64, R)
		values     = make([]float64, R)
		rewards    = make([]float64, R)
		terminated = make([]bool, R)
		truncated  = make([]bool, R)
		boot       = make([]float64, R)
		last       = make([]float64, K)
		adv        = make([]float64, R)
		ret        = make([]float64, R)
		idx        = make([]int, R)
		batch      model.Batch
		act        model.ActResult
		epAlloc    []float64 // allocation at the end of the episodes of this rollout, %
		epReturn   []float64
		epRet      = make([]float64, K)
	)
	// validate scores the policy after done updates (gpuValidator: logged,
	// best.ckpt when strictly the best so far)
	val := &gpuValidator{ec: ec, w: w, opts: opts, logs: logs, sum: &sum, best: &best, save: save}
	validate := func(done int64) error {
		_, err := val.run(ctx, pol, done, steps)
		return err
	}
	// the untrained start is the first selection candidate (a fresh run:
	// best is -Inf, so the start is saved as best.ckpt)
	if cfg.EvalFreq > 0 && opts.Resume == "" {
		if err := validate(0); err != nil {
			return sum, fmt.Errorf("validating the start: %w", err)
		}
	}
	mb := cfg.BatchSize
	views := make([]env.Obs, mb)
	mbActs, mbLogp, mbAdv, mbRet, mbVal := make([]int, mb), make([]float64, mb), make([]float64, mb), make([]float64, mb), make([]float64, mb)
	for ; upd < cfg.Updates; upd++ {
		if ctx.Err() != nil {
			sum.Interrupted = true
			break
		}
		// 1. rollout
		epAlloc, epReturn = epAlloc[:0], epReturn[:0]
		for t := range T {
			agent.FillGPU(&batch, cur)
			if err := pol.Act(&batch, false, rng, &act); err != nil {
				return sum, fmt.Errorf("rollout: %w", err)
			}
			for k := range K {
				i := t*K + k
				cur[k].CopyTo(&obs[i])
				a := agent.ToEnv(act.Actions[k], cur[k].N, batch.N)
				actions[i], logp[i], values[i] = a, act.LogP[k], act.Values[k]
				o, r, done, info, err := envs[k].Step(a)
				if err != nil {
					return sum, fmt.Errorf("rollout: %w", err)
				}
				rewards[i], terminated[i] = r, done
				epRet[k] += r
				if done {
					epAlloc = append(epAlloc, info.Result.AllocPct)
					epReturn = append(epReturn, epRet[k])
					epRet[k] = 0
					if o, err = envs[k].Reset(nextSeed()); err != nil {
						return sum, err
					}
				}
				o.CopyTo(&cur[k])
			}
		}
		steps += int64(R)
		agent.FillGPU(&batch, cur)
		if err := pol.Act(&batch, true, nil, &act); err != nil {
			return sum, fmt.Errorf("bootstrap values: %w", err)
		}
		copy(last, act.Values[:K])
		GAE(T, K, rewards, values, terminated, truncated, boot, last, cfg.Gamma, cfg.GAELambda, adv, ret)

		// 2. update
		lc := model.LossConfig{ClipCoef: cfg.ClipRange, VFCoef: cfg.VFCoef, EntCoef: cfg.EntCoef, ClipValue: cfg.ClipValue,
			MaxGradNorm: cfg.MaxGradNorm, LearningRate: cfg.LearningRateAt(upd)}
		var st model.TrainStats
		var n int
		for i := range idx {
			idx[i] = i
		}
	epochs:
		for range cfg.NEpochs {
			rng.Shuffle(R, func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
			for m := 0; m+mb <= R; m += mb {
				part := idx[m : m+mb]
				for j, i := range part {
					views[j] = obs[i]
				}
				agent.FillGPU(&batch, views)
				for j, i := range part {
					mbActs[j] = agent.ToModel(actions[i], obs[i].N, batch.N)
					mbLogp[j], mbAdv[j], mbRet[j], mbVal[j] = logp[i], adv[i], ret[i], values[i]
				}
				if cfg.NormalizeAdvantage {
					normalizeAdv(mbAdv)
				}
				s, err := pol.TrainStep(&batch, mbActs, mbLogp, mbAdv, mbRet, mbVal, lc)
				if err != nil {
					return sum, fmt.Errorf("update %d: %w", upd, err)
				}
				st.Loss, st.PolicyLoss, st.ValueLoss, st.Entropy = st.Loss+s.Loss, st.PolicyLoss+s.PolicyLoss, st.ValueLoss+s.ValueLoss, st.Entropy+s.Entropy
				st.ApproxKL, st.ClipFraction = st.ApproxKL+s.ApproxKL, st.ClipFraction+s.ClipFraction
				n++
				if cfg.TargetKL > 0 && s.ApproxKL > 1.5*cfg.TargetKL {
					break epochs
				}
			}
		}
		if n > 0 {
			f := 1 / float64(n)
			st.Loss, st.PolicyLoss, st.ValueLoss, st.Entropy, st.ApproxKL, st.ClipFraction = st.Loss*f, st.PolicyLoss*f, st.ValueLoss*f, st.Entropy*f, st.ApproxKL*f, st.ClipFraction*f
		}
		if err := logs.progress(upd+1, steps, time.Since(start), epReturn, epAlloc, st, lc.LearningRate); err != nil {
			return sum, err
		}
		// 3. validation, checkpoints
		if cfg.EvalFreq > 0 && (steps/cfg.EvalFreq != (steps-int64(R))/cfg.EvalFreq || upd+1 == cfg.Updates) {
			if err := validate(upd + 1); err != nil {
				if errors.Is(err, context.Canceled) {
					sum.Interrupted = true
					upd++
					break
				}
				return sum, err
			}
		}
		if err := save(filepath.Join(opts.Out, LastCheckpoint), upd+1); err != nil {
			return sum, err
		}
	}
	if sum.Interrupted {
		if err := save(filepath.Join(opts.Out, LastCheckpoint), upd); err != nil {
			return sum, err
		}
	}
	logs.close()
	if err := PlotGPULearningCurve(opts.Out, "kubesim GPU PPO"); err != nil {
		slog.Warn("no learning curve", "err", err)
	}
	sum.Steps, sum.Updates, sum.Elapsed = steps, upd, time.Since(start)
	if !math.IsInf(best, -1) {
		sum.BestVal = best
	}
	return sum, nil
}

// gpuModelConfig is the GPU policy's architecture: the environment's
// feature widths and cfg's hidden, rounds, clips, prior, zero_init and
// seed (TrainGPU, TrainGPUES).
func gpuModelConfig(cfg Config, ec env.GPUConfig) model.Config {
	return model.Config{NodeFeatures: ec.NodeFeatures(), PodFeatures: env.GPUPodFeatures, Hidden: cfg.Hidden, Rounds: cfg.Rounds,
		LogitClip: cfg.LogitClip, PendingClip: cfg.PendingClip, Seed: cfg.Seed, Prior: cfg.Prior, ZeroInit: cfg.ZeroInit}
}

// normalizeAdv scales advantages to mean 0, std 1 (std 0: centred only).
func normalizeAdv(a []float64) {
	var m float64
	for _, v := range a {
		m += v
	}
	m /= float64(len(a))
	var s float64
	for _, v := range a {
		s += (v - m) * (v - m)
	}
	s = math.Sqrt(s / float64(len(a)))
	for i := range a {
		a[i] -= m
		if s > 0 {
			a[i] /= s + 1e-8
		}
	}
}

// alloc100 is a curve's value at 100% arrived, or, where a small cluster's
// large pods leave bins 99-101 empty, its nearest value (100-k before
// 100+k) up to 10 points away; NaN beyond.
func alloc100(c sim.Curve) float64 {
	for d := range 11 {
		for _, k := range []int{100 - d, 100 + d} {
			if k < len(c) && !math.IsNaN(c[k]) {
				return c[k]
			}
		}
	}
	return math.NaN()
}

// ppoGPUHeader is progress.csv's header in a PPO run.
var ppoGPUHeader = []string{"update", "steps", "seconds", "episodes", "ep_return_mean", "ep_alloc_pct_mean", "loss", "policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction", "learning_rate"}

// gpuValHeader is validation.csv's header in a GPU run.
var gpuValHeader = []string{"update", "steps", "val_alloc100", "select_alloc100"}

// progress logs one PPO update of TrainGPU (ppoGPUHeader).
func (l *runLogs) progress(upd, steps int64, el time.Duration, ret, alloc []float64, st model.TrainStats, lr float64) error {
	return l.progressRow(strconv.FormatInt(upd, 10), strconv.FormatInt(steps, 10), fmtG(el.Seconds()), strconv.Itoa(len(ret)),
		fmtG(meanOf(ret)), fmtG(meanOf(alloc)), fmtG(st.Loss), fmtG(st.PolicyLoss), fmtG(st.ValueLoss), fmtG(st.Entropy), fmtG(st.ApproxKL), fmtG(st.ClipFraction), fmtG(lr))
}

// validation logs one GPU validation (gpuValHeader), in 4 decimals.
func (l *runLogs) validation(upd, steps int64, v, sel float64) error {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }
	return l.validationRow(strconv.FormatInt(upd, 10), strconv.FormatInt(steps, 10), f(v), f(sel))
}
