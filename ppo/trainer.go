package ppo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/kubesim/kubesim/agent"
	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/internal/atomicdir"
	"github.com/kubesim/kubesim/internal/atomicfile"
	"github.com/kubesim/kubesim/model"
)

// Files a run writes in its folder.
const (
	LastCheckpoint = "last.ckpt"
	BestCheckpoint = "best.ckpt"
	ConfigFile     = "config.json"
	CurvePNG       = "learning_curve.png"
)

// Checkpoint metadata keys written by the trainer.
const (
	metaSteps   = "ppo/steps"
	metaUpdates = "ppo/updates"
	metaBest    = "ppo/best_eval_reward" // the selection score (Summary.BestEvalScore); the key predates ppo.select
	metaConfig  = "ppo/config"
	metaReturn  = "ppo/return_stat" // mean, variance and count of the reward scaler
)

// Options are a training run's outputs and side channels.
type Options struct {
	// Out is the run folder (created if needed).
	Out string
	// Progress, when not nil, shows a progress bar with fps and ETA.
	Progress io.Writer
	// Verbose, when not nil, gets SB3's table after every update.
	Verbose io.Writer
	// Resume continues from this checkpoint: weights, Adam's moments, the
	// step count and the learning-rate schedule. The run folder's logs are
	// continued, not replaced.
	Resume string
	// Force lets a fresh run (no Resume) replace a run folder that has
	// history (ErrRunExists without it). The old folder is replaced as a
	// whole, and only once the run has started.
	Force bool
	// NewVec builds the vectorised environment of n copies; nil means
	// env.NewVec over the trainer's env.Config and training source. Tests
	// use it to train on small problems with known answers.
	NewVec func(n int) (Vec, error)
}

// Vec is the vectorised environment the trainer steps; *env.VecEnv is one.
// Observations must have env.PodFeatures pod and env.NodeFeatures node
// features.
type Vec interface {
	Len() int
	Reset(seed uint64) (*env.Batch, error)
	Step(actions []int) (*env.Batch, error)
}

// Trainer trains a policy with PPO. Build it with New, run it with Train.
type Trainer struct {
	cfg    Config
	envCfg env.Config
	src    env.Source // training episodes
	val    env.Source // validation episodes: checkpoint selection only
	opts   Options

	pol   *model.Policy
	rng   *rand.Rand
	steps int64 // environment steps done
	upd   int64 // updates done
	best  float64
	// priorEval is the prior heuristic's greedy evaluation on the
	// validation episodes (computed once, at the first evaluation).
	priorEval *agent.EvalResult
	// scaler normalises rewards (nil when off); its return statistic is
	// saved in checkpoints so that a resumed run scales as before.
	scaler *rewardScaler
}

// Summary is what a training run did.
type Summary struct {
	Steps, Updates int64
	// BestEvalScore is best.ckpt's selection score (Config.Select): its
	// mean validation reward, or minus its unschedulable pods per episode;
	// NaN when no evaluation ran.
	BestEvalScore float64
	Interrupted   bool // stopped by its context; last.ckpt holds the last whole update
	Elapsed       time.Duration
}

// New checks the configurations and prepares a run. src supplies training
// episodes and val the validation episodes that choose best.ckpt (nil: the
// synthetic source of envCfg for both, validation on seeds disjoint from
// training's). Test data must reach neither: the tables that report on it
// would otherwise be tuned to it.
func New(cfg Config, envCfg env.Config, src, val env.Source, opts Options) (*Trainer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := envCfg.Validate(); err != nil {
		return nil, err
	}
	if src == nil {
		src = envCfg.Workload
	}
	if val == nil {
		val = src
	}
	if opts.Out == "" {
		return nil, fmt.Errorf("%w: no output folder", ErrConfig)
	}
	t := &Trainer{cfg: cfg, envCfg: envCfg, src: src, val: val, opts: opts, best: math.Inf(-1)}
	t.rng = rand.New(rand.NewPCG(cfg.Seed, 0x70706f))
	if cfg.NormalizeReward {
		t.scaler = newRewardScaler(cfg.NEnvs, cfg.Gamma, cfg.ClipReward)
	}
	if opts.Resume != "" {
		if err := t.resume(opts.Resume); err != nil {
			return nil, err
		}
		return t, nil
	}
	pol, err := model.New(t.modelConfig())
	if err != nil {
		return nil, fmt.Errorf("building the policy: %w", err)
	}
	t.pol = pol
	return t, nil
}

func (t *Trainer) modelConfig() model.Config { return cpuModelConfig(t.cfg, t.envCfg) }

// cpuModelConfig is a CPU/memory policy's architecture (Trainer, TrainES).
func cpuModelConfig(cfg Config, ec env.Config) model.Config {
	return model.Config{
		NodeFeatures: env.NodeFeatures,
		PodFeatures:  env.PodFeatures,
		Hidden:       cfg.Hidden,
		Rounds:       cfg.Rounds,
		LogitClip:    cfg.LogitClip,
		PendingClip:  cfg.PendingClip,
		Seed:         cfg.Seed,
		Prior:        cfg.Prior,
		ZeroInit:     cfg.ZeroInit,
		Gate:         cpuGate(cfg, ec),
	}
}

// gate is the model's gate width (cpuGate).
func (t *Trainer) gate() int { return cpuGate(t.cfg, t.envCfg) }

// cpuGate is the environment's number of gated priors when the policy
// reads a prior, else 0.
func cpuGate(cfg Config, ec env.Config) int {
	if !cfg.Prior {
		return 0
	}
	return ec.Prior.Gate()
}

// resume loads a checkpoint's weights and counters.
func (t *Trainer) resume(path string) error {
	pol, meta, err := loadCheckpoint(path)
	if err != nil {
		return err
	}
	if c := pol.Config(); c.Hidden != t.cfg.Hidden || c.Rounds != t.cfg.Rounds || c.Prior != t.cfg.Prior || c.Gate != t.gate() {
		return fmt.Errorf("%w: resuming from %s: the checkpoint's policy has hidden %d, rounds %d, prior %v and a gate over %d priors, the config ppo.hidden %d, ppo.rounds %d, ppo.prior %v and %d (prior.heuristics): resume with the config it was trained with",
			ErrConfig, path, c.Hidden, c.Rounds, c.Prior, c.Gate, t.cfg.Hidden, t.cfg.Rounds, t.cfg.Prior, t.gate())
	}
	t.pol = pol
	if t.steps, err = strconv.ParseInt(meta[metaSteps], 10, 64); err != nil {
		return fmt.Errorf("resuming from %s: bad %s: %w", path, metaSteps, err)
	}
	if t.upd, err = strconv.ParseInt(meta[metaUpdates], 10, 64); err != nil {
		return fmt.Errorf("resuming from %s: bad %s: %w", path, metaUpdates, err)
	}
	if v, ok := meta[metaBest]; ok {
		if t.best, err = strconv.ParseFloat(v, 64); err != nil {
			return fmt.Errorf("resuming from %s: bad %s: %w", path, metaBest, err)
		}
	}
	if v, ok := meta[metaReturn]; ok && t.scaler != nil {
		st := &t.scaler.stat
		if _, err := fmt.Sscan(v, &st.mean, &st.variance, &st.count); err != nil {
			return fmt.Errorf("resuming from %s: bad %s: %w", path, metaReturn, err)
		}
	}
	// A fresh random stream per resumed update count keeps a resumed run
	// deterministic (though not identical to an uninterrupted one).
	t.rng = rand.New(rand.NewPCG(t.cfg.Seed, 0x70706f+uint64(t.upd)))
	return nil
}

// Policy returns the policy being trained.
func (t *Trainer) Policy() *model.Policy { return t.pol }

// Steps returns the environment steps done so far.
func (t *Trainer) Steps() int64 { return t.steps }

// LearningRate returns the learning rate of update u (0-based): linearly
// annealed from LearningRate to 0 over the run when AnnealLR is set, as
// CleanRL does (frac = 1 - u/updates).
func (c *Config) LearningRateAt(u int64) float64 {
	if !c.AnnealLR {
		return c.LearningRate
	}
	return c.LearningRate * (1 - float64(u)/float64(c.Updates))
}

// Train runs PPO until TotalTimesteps or until ctx is done; either way it
// saves last.ckpt. It reads top to bottom like CleanRL's ppo.py: rollout,
// bootstrap, GAE, n_epochs of shuffled minibatches, logging, evaluation.
func (t *Trainer) Train(ctx context.Context) (Summary, error) {
	start := time.Now()
	cfg := &t.cfg
	// 0. The run folder: locked for this run; one with history is only
	// continued (Resume) or, with Force, replaced; nothing in it changes
	// until the environments have started.
	lock, err := atomicdir.Lock(t.opts.Out)
	if err != nil {
		return Summary{}, fmt.Errorf("run folder: %w", err)
	}
	defer lock.Unlock()
	fresh := t.opts.Resume == ""
	history := runHistory(t.opts.Out)
	if fresh && len(history) > 0 && !t.opts.Force {
		return Summary{}, fmt.Errorf("%w: %s holds %s: continue it with --resume %s, or replace it with --force",
			ErrRunExists, t.opts.Out, strings.Join(history, ", "), filepath.Join(t.opts.Out, LastCheckpoint))
	}

	newVec := t.opts.NewVec
	if newVec == nil {
		newVec = func(n int) (Vec, error) { return env.NewVec(t.envCfg, t.src, n) }
	}
	vec, err := newVec(cfg.NEnvs)
	if err != nil {
		return Summary{}, err
	}
	// Each (re)start seeds the environments afresh; seeds move on with the
	// update count so a resumed run does not replay the same episodes.
	cur, err := vec.Reset(cfg.Seed + uint64(t.upd)*uint64(cfg.NEnvs))
	if err != nil {
		return Summary{}, fmt.Errorf("resetting environments: %w", err)
	}

	if cfg.Prior && len(cur.Obs) > 0 && cur.Obs[0].Prior == nil {
		return Summary{}, fmt.Errorf("%w: ppo.prior is on, but the environment's observations carry no prior: configure the environment's prior heuristic", ErrConfig)
	}
	if cfg.EvalFreq == 0 {
		slog.Warn("ppo.eval_freq is 0: no validation runs and no best.ckpt is written; last.ckpt is the trained policy", "out", t.opts.Out)
	}
	if fresh && len(history) > 0 {
		// --force: an empty folder swapped in for the old one as a whole
		if err := atomicdir.Replace(t.opts.Out, func(string) error { return nil }); err != nil {
			return Summary{}, fmt.Errorf("run folder: %w", err)
		}
	}
	if err := os.MkdirAll(t.opts.Out, 0o755); err != nil {
		return Summary{}, fmt.Errorf("creating run folder: %w", err)
	}
	if err := t.writeConfig(); err != nil {
		return Summary{}, err
	}
	// a run killed while writing a file leaves its temporary (.last.ckpt.*.tmp)
	atomicfile.RemoveTemporaries(t.opts.Out)
	logger, err := NewLogger(t.opts.Out, LoggerOptions{EnvID: "kubesim", Verbose: t.opts.Verbose, Resume: !fresh, DropAfter: t.steps})
	if err != nil {
		return Summary{}, err
	}
	defer logger.Close()

	// Rollout buffers, allocated once (observations grow to their size
	// during the first rollout and are reused after).
	var (
		R          = cfg.RolloutSize
		K          = cfg.NEnvs
		obs        store
		actions    = make([]int, R) // environment actions (Pending = N of that observation)
		logp       = make([]float64, R)
		values     = make([]float64, R)
		rewards    = make([]float64, R)
		terminated = make([]bool, R)
		truncated  = make([]bool, R)
		boot       = make([]float64, R)
		last       = make([]float64, K)
		adv        = make([]float64, R)
		ret        = make([]float64, R)
		views      = make([]env.Obs, max(K, cfg.BatchSize))
		batch      model.Batch
		act        model.ActResult
		fwd        model.Output
		finals     []env.Obs
		finalIdx   []int
		epRewards  = newWindow(100)
		epLengths  = newWindow(100)
		stepDone   = make([]bool, K)
		envActs    = make([]int, K)
		idx        = make([]int, R)
		mbActs     = make([]int, cfg.BatchSize)
		mbLogp     = make([]float64, cfg.BatchSize)
		mbAdv      = make([]float64, cfg.BatchSize)
		mbRet      = make([]float64, cfg.BatchSize)
		mbVal      = make([]float64, cfg.BatchSize)
		scaler     = t.scaler
		terms      rewardTerms
	)
	var bar *progressbar.ProgressBar
	if t.opts.Progress != nil {
		bar = progressbar.NewOptions64(cfg.Updates*int64(R),
			progressbar.OptionSetWriter(t.opts.Progress),
			progressbar.OptionSetDescription("training"),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("steps"),
			progressbar.OptionShowCount(),
			progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionSetPredictTime(true),
		)
		_ = bar.Set64(t.steps)
	}
	interrupted := false
	if fresh && cfg.BCSteps > 0 { // behaviour cloning of the prior's heuristic first (clone.go)
		if cur, err = t.clone(ctx, vec, cur, logger); err != nil {
			return Summary{}, err
		}
	}

	if fresh && cfg.EvalStart {
		if err := t.evaluate(ctx, logger); err != nil {
			return Summary{}, err
		}
		if err := logger.Dump(t.steps); err != nil {
			return Summary{}, err
		}
	}

	for t.upd < cfg.Updates {
		updStart := time.Now()
		lr := cfg.LearningRateAt(t.upd)

		// 1. Rollout: NSteps steps of every environment, acting by sampling.
		obs.reset()
		terms = rewardTerms{}
		for step := 0; step < cfg.NSteps; step++ {
			if ctx.Err() != nil {
				interrupted = true
				break
			}
			agent.Fill(&batch, cur.Obs)
			if err := t.pol.Act(&batch, false, t.rng, &act); err != nil {
				return Summary{}, fmt.Errorf("acting: %w", err)
			}
			for e := range K {
				i := step*K + e
				obs.add(&cur.Obs[e])
				envActs[e] = agent.ToEnv(act.Actions[e], cur.Obs[e].N, batch.N)
				actions[i] = envActs[e]
				logp[i], values[i] = act.LogP[e], act.Values[e]
			}
			nxt, err := vec.Step(envActs)
			if err != nil {
				return Summary{}, fmt.Errorf("stepping environments: %w", err)
			}
			finals, finalIdx = finals[:0], finalIdx[:0]
			for e := range K {
				i := step*K + e
				rewards[i] = nxt.Reward[e]
				stepDone[e] = nxt.Terminated[e] || nxt.Truncated[e]
				terminated[i], truncated[i] = nxt.Terminated[e], nxt.Truncated[e]
				boot[i] = 0
				terms.add(&nxt.Info[e])
				if truncated[i] && nxt.Info[e].Final != nil {
					finals = append(finals, *nxt.Info[e].Final)
					finalIdx = append(finalIdx, i)
				}
				if ep := nxt.Info[e].Episode; ep != nil {
					epRewards.add(ep.Return)
					epLengths.add(float64(ep.Steps))
					if err := logger.Episode(ep.Return, int64(ep.Steps)); err != nil {
						return Summary{}, err
					}
				}
			}
			if scaler != nil {
				row := rewards[step*K : (step+1)*K]
				scaler.scale(row, stepDone, row)
			}
			// Bootstrap truncated episodes from the value of their final
			// observation (SB3's handling of time limits).
			if len(finals) > 0 {
				agent.Fill(&batch, finals)
				if err := t.pol.Forward(&batch, &fwd); err != nil {
					return Summary{}, fmt.Errorf("bootstrapping: %w", err)
				}
				for k, i := range finalIdx {
					boot[i] = fwd.Values[k]
				}
			}
			cur = nxt
		}
		if interrupted {
			break // the partial rollout is dropped; last.ckpt holds the last whole update
		}
		agent.Fill(&batch, cur.Obs)
		if err := t.pol.Forward(&batch, &fwd); err != nil {
			return Summary{}, fmt.Errorf("valuing the last observations: %w", err)
		}
		copy(last, fwd.Values[:K])

		// 2. Advantages and returns.
		GAE(cfg.NSteps, K, rewards, values, terminated, truncated, boot, last, cfg.Gamma, cfg.GAELambda, adv, ret)

		// 3. Update: NEpochs passes of shuffled minibatches.
		lc := model.LossConfig{
			ClipCoef: cfg.ClipRange, VFCoef: cfg.VFCoef, EntCoef: cfg.EntCoef,
			ClipValue: cfg.ClipValue, MaxGradNorm: cfg.MaxGradNorm, LearningRate: lr,
		}
		var st trainStats
		for i := range idx {
			idx[i] = i
		}
		stop := false
		for epoch := 0; epoch < cfg.NEpochs && !stop; epoch++ {
			t.rng.Shuffle(R, func(a, b int) { idx[a], idx[b] = idx[b], idx[a] })
			for mb := 0; mb < cfg.Minibatches; mb++ {
				ids := idx[mb*cfg.BatchSize : (mb+1)*cfg.BatchSize]
				mbViews := views[:len(ids)]
				for k, i := range ids {
					mbViews[k] = obs.obs(i)
				}
				agent.Fill(&batch, mbViews)
				for k, i := range ids {
					mbActs[k] = agent.ToModel(actions[i], obs.n[i], batch.N)
					mbLogp[k], mbAdv[k], mbRet[k], mbVal[k] = logp[i], adv[i], ret[i], values[i]
				}
				if cfg.NormalizeAdvantage {
					Normalize(mbAdv)
				}
				s, err := t.pol.TrainStep(&batch, mbActs, mbLogp, mbAdv, mbRet, mbVal, lc)
				if err != nil {
					return Summary{}, fmt.Errorf("update %d, epoch %d: %w", t.upd+1, epoch+1, err)
				}
				st.add(s)
				if cfg.TargetKL > 0 && s.ApproxKL > 1.5*cfg.TargetKL {
					stop = true // SB3: stop this update's epochs once KL runs away
					break
				}
			}
		}
		t.upd++
		t.steps += int64(R)
		if bar != nil {
			_ = bar.Set64(t.steps)
		}

		// 4. Logging, with SB3's tag names.
		logger.Record("time/total_timesteps", float64(t.steps))
		logger.Record("time/iterations", float64(t.upd))
		logger.Record("time/fps", float64(R)/time.Since(updStart).Seconds())
		logger.Record("time/time_elapsed", time.Since(start).Seconds())
		if epRewards.n > 0 {
			logger.Record("rollout/ep_rew_mean", epRewards.mean())
			logger.Record("rollout/ep_len_mean", epLengths.mean())
		}
		terms.record(logger, R)
		st.record(logger)
		logger.Record("train/explained_variance", ExplainedVariance(values, ret))
		logger.Record("train/learning_rate", lr)
		logger.Record("train/clip_range", cfg.ClipRange)

		// 5. Evaluation on the validation episodes; best.ckpt when it improves.
		if cfg.EvalFreq > 0 && (t.steps/cfg.EvalFreq) > ((t.steps-int64(R))/cfg.EvalFreq) {
			if err := t.evaluate(ctx, logger); err != nil {
				return Summary{}, err
			}
		}
		if err := logger.Dump(t.steps); err != nil {
			return Summary{}, err
		}
		if err := t.save(filepath.Join(t.opts.Out, LastCheckpoint)); err != nil {
			return Summary{}, err
		}
	}
	if bar != nil {
		_ = bar.Finish()
	}
	if err := t.save(filepath.Join(t.opts.Out, LastCheckpoint)); err != nil {
		return Summary{}, err
	}
	if err := logger.Close(); err != nil {
		return Summary{}, err
	}
	if err := PlotLearningCurve(filepath.Join(t.opts.Out, ProgressFile), filepath.Join(t.opts.Out, CurvePNG), "kubesim PPO"); err != nil {
		slog.Warn("no learning curve", "err", err)
	}
	best := t.best
	if math.IsInf(best, -1) {
		best = math.NaN()
	}
	return Summary{Steps: t.steps, Updates: t.upd, BestEvalScore: best, Interrupted: interrupted, Elapsed: time.Since(start)}, nil
}

// ErrRunExists is wrapped by Train's error when a fresh run (no Resume)
// would replace a run folder with history and Options.Force is not set.
var ErrRunExists = errors.New("run folder has history")

// runHistory lists what in dir a fresh run would destroy: a non-empty
// progress.csv or monitor.csv, checkpoints.
func runHistory(dir string) []string {
	var h []string
	for _, name := range []string{ProgressFile, MonitorFile, LastCheckpoint, BestCheckpoint} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.Size() > 0 {
			h = append(h, name)
		}
	}
	return h
}

// save writes a checkpoint with the trainer's counters and configurations.
func (t *Trainer) save(path string) error {
	pc, _ := json.Marshal(t.cfg)
	ec, _ := json.Marshal(t.envCfg)
	meta := map[string]string{
		metaSteps:     strconv.FormatInt(t.steps, 10),
		metaUpdates:   strconv.FormatInt(t.upd, 10),
		metaConfig:    string(pc),
		agent.MetaEnv: string(ec),
	}
	if !math.IsInf(t.best, -1) {
		meta[metaBest] = strconv.FormatFloat(t.best, 'g', -1, 64)
	}
	if t.scaler != nil {
		st := t.scaler.stat
		meta[metaReturn] = fmt.Sprintf("%v %v %v", st.mean, st.variance, st.count)
	}
	if err := t.pol.Save(path, meta); err != nil {
		return fmt.Errorf("saving %s: %w", path, err)
	}
	return nil
}

// writeConfig writes the run's configurations next to its outputs.
func (t *Trainer) writeConfig() error {
	b, err := json.MarshalIndent(struct {
		PPO Config     `json:"ppo"`
		Env env.Config `json:"env"`
	}{t.cfg, t.envCfg}, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the run config: %w", err)
	}
	return writeFileAtomic(filepath.Join(t.opts.Out, ConfigFile), append(b, '\n'))
}

// loadCheckpoint reads a policy and its trainer metadata, and checks that
// the policy reads this build's observations.
func loadCheckpoint(path string) (*model.Policy, map[string]string, error) {
	pol, err := agent.LoadPolicy(path)
	if err != nil {
		return nil, nil, err
	}
	return pol, pol.Meta(), nil
}
