package ppo

import (
	"errors"
	"fmt"
	"math"

	"github.com/kubesim/kubesim/agent"
)

// Config holds every hyper-parameter of a training run. The defaults are
// Stable-Baselines3's PPO defaults (with an entropy bonus of 0.01 for early
// exploration); the YAML keys are SB3's argument names.
type Config struct {
	// TotalTimesteps is the number of environment steps (decisions) to train
	// for, over all environments. It is rounded down to whole rollouts.
	TotalTimesteps int64 `yaml:"total_timesteps" json:"total_timesteps"`
	// NEnvs environments are stepped in parallel (env.VecEnv).
	NEnvs int `yaml:"n_envs" json:"n_envs"`
	// NSteps is the rollout length per environment; a rollout has
	// NSteps*NEnvs transitions.
	NSteps int `yaml:"n_steps" json:"n_steps"`
	// BatchSize is the minibatch size; it must divide NSteps*NEnvs.
	BatchSize int `yaml:"batch_size" json:"batch_size"`
	// NEpochs is the number of passes over each rollout.
	NEpochs int `yaml:"n_epochs" json:"n_epochs"`
	// Gamma is the discount factor.
	Gamma float64 `yaml:"gamma" json:"gamma"`
	// GAELambda is GAE's bias-variance trade-off.
	GAELambda float64 `yaml:"gae_lambda" json:"gae_lambda"`
	// ClipRange is the clip of the probability ratio.
	ClipRange float64 `yaml:"clip_range" json:"clip_range"`
	// ClipValue clips the value loss with ClipRange (CleanRL's clip_vloss).
	ClipValue bool `yaml:"clip_value" json:"clip_value"`
	// EntCoef weighs the entropy bonus; VFCoef the value loss.
	EntCoef float64 `yaml:"ent_coef" json:"ent_coef"`
	VFCoef  float64 `yaml:"vf_coef" json:"vf_coef"`
	// LearningRate is Adam's initial step size; with AnnealLR it decays
	// linearly to 0 over the run.
	LearningRate float64 `yaml:"learning_rate" json:"learning_rate"`
	AnnealLR     bool    `yaml:"anneal_lr" json:"anneal_lr"`
	// MaxGradNorm clips the global gradient norm.
	MaxGradNorm float64 `yaml:"max_grad_norm" json:"max_grad_norm"`
	// TargetKL stops an update's epochs early once a minibatch's approximate
	// KL divergence exceeds 1.5*TargetKL (SB3's rule); 0 disables it.
	TargetKL float64 `yaml:"target_kl" json:"target_kl"`
	// NormalizeAdvantage normalises advantages per minibatch.
	NormalizeAdvantage bool `yaml:"normalize_advantage" json:"normalize_advantage"`
	// NormalizeReward divides rewards by the running std of the discounted
	// return and clips them to +-ClipReward (SB3's VecNormalize for
	// rewards). Episode returns in monitor.csv stay unscaled.
	NormalizeReward bool    `yaml:"normalize_reward" json:"normalize_reward"`
	ClipReward      float64 `yaml:"clip_reward" json:"clip_reward"`
	// Seed drives the weights, the environments and action sampling.
	Seed uint64 `yaml:"seed" json:"seed"`
	// EvalFreq runs the greedy policy on the validation episodes every this
	// many environment steps (checked after each rollout), and keeps the
	// best as best.ckpt; 0 disables validation, and then no best.ckpt is
	// written (Summary.BestEvalScore is NaN; last.ckpt is the policy).
	EvalFreq int64 `yaml:"eval_freq" json:"eval_freq"`
	// EvalEpisodes is the number of validation episodes per evaluation.
	EvalEpisodes int `yaml:"eval_episodes" json:"eval_episodes"`
	// Select is what best.ckpt is chosen on at each evaluation: "reward"
	// (the default when empty: the highest mean validation reward) or
	// "unschedulable" (the fewest pods left unscheduled per validation
	// episode, ties kept by the earlier checkpoint): the count that the
	// suite's tables read, where the reward also weighs waiting.
	Select string `yaml:"select" json:"select,omitempty"`
	// EvalStart also evaluates the policy before its first update (after
	// bc_steps' cloning, when set), so that best.ckpt starts as the
	// untrained policy and is replaced only by an evaluation that scores
	// better: with zero_init, training then never selects a policy below
	// its prior on the validation score. Needs eval_freq.
	EvalStart bool `yaml:"eval_start" json:"eval_start,omitempty"`
	// Hidden and Rounds are the policy's embedding width and message-passing
	// rounds.
	Hidden int `yaml:"hidden" json:"hidden"`
	Rounds int `yaml:"rounds" json:"rounds"`
	// Prior builds the policy with model.Config.Prior: it adds the
	// observations' log-prior (env's prior heuristic) to its logits and
	// learns a correction to it. The environment must supply a prior.
	Prior bool `yaml:"prior" json:"prior,omitempty"`
	// LogitClip bounds the decoder's scores, C in C*tanh(score) (0: the
	// model's default, model.DefaultLogitClip). With Prior it is how far the
	// learned correction can move a node's logit from the heuristic's.
	LogitClip float64 `yaml:"logit_clip" json:"logit_clip,omitempty"`
	// PendingClip bounds Pending's score alone (0: LogitClip). With Prior
	// and the prior's Pending logit far below the best node's (prior.pending),
	// a correction bounded by LogitClip can never make Pending likely; a
	// wider PendingClip lets the policy learn to defer a pod that fits while
	// its node corrections stay bounded.
	PendingClip float64 `yaml:"pending_clip" json:"pending_clip,omitempty"`
	// ZeroInit starts the policy's learned correction at exactly zero
	// (model.Config.ZeroInit): with Prior, the first policy is the prior's
	// softmax.
	ZeroInit bool `yaml:"zero_init" json:"zero_init,omitempty"`
	// BCSteps > 0 starts a fresh run with behaviour cloning of the
	// environment's prior heuristic: BCSteps decisions are collected with
	// the teacher acting (the allowed action of highest Obs.Prior), a
	// BCHoldout share of them is held out, and the policy is trained on the
	// rest by cross-entropy for BCEpochs passes of BatchSize minibatches at
	// BCLearningRate, logging agreement on the held-out decisions (bc.csv,
	// and bc/* in the first progress row). These steps are not counted in
	// TotalTimesteps. Needs observations with a prior; skipped on resume.
	BCSteps        int     `yaml:"bc_steps" json:"bc_steps,omitempty"`
	BCEpochs       int     `yaml:"bc_epochs" json:"bc_epochs,omitempty"`
	BCLearningRate float64 `yaml:"bc_learning_rate" json:"bc_learning_rate,omitempty"`
	BCHoldout      float64 `yaml:"bc_holdout" json:"bc_holdout,omitempty"`

	// Derived by Validate.
	RolloutSize int   `yaml:"-" json:"-"` // NSteps * NEnvs
	Minibatches int   `yaml:"-" json:"-"` // RolloutSize / BatchSize
	Updates     int64 `yaml:"-" json:"-"` // TotalTimesteps / RolloutSize
}

// DefaultConfig returns SB3's PPO defaults for 8 environments, with
// ent_coef 0.01, a 200,000-step budget and an evaluation every 16,384 steps.
func DefaultConfig() Config {
	return Config{
		TotalTimesteps:     200_000,
		NEnvs:              8,
		NSteps:             2048,
		BatchSize:          64,
		NEpochs:            10,
		Gamma:              0.99,
		GAELambda:          0.95,
		ClipRange:          0.2,
		EntCoef:            0.01,
		VFCoef:             0.5,
		LearningRate:       3e-4,
		AnnealLR:           true,
		MaxGradNorm:        0.5,
		NormalizeAdvantage: true,
		NormalizeReward:    true,
		ClipReward:         10,
		Seed:               1,
		EvalFreq:           16384,
		EvalEpisodes:       4,
		Hidden:             64,
		Rounds:             2,
		BCEpochs:           10,
		BCLearningRate:     1e-3,
		BCHoldout:          0.1,
	}
}

// ErrConfig is wrapped by every configuration error.
var ErrConfig = errors.New("invalid ppo config")

// Validate checks every field, naming the YAML key at fault, and fills the
// derived sizes.
// Config.Select's values.
const (
	SelectReward        = "reward"
	SelectUnschedulable = "unschedulable"
)

// selectScore is the evaluation's score that best.ckpt maximises.
func (c *Config) selectScore(ev agent.EvalResult) float64 {
	if c.Select == SelectUnschedulable {
		return -ev.Unschedulable
	}
	return ev.MeanReward
}

func (c *Config) Validate() error {
	bad := func(key string, v any, why string) error {
		return fmt.Errorf("%w: ppo.%s = %v: %s", ErrConfig, key, v, why)
	}
	unit := func(v float64) bool { return v >= 0 && v <= 1 }
	finite := func(v float64) bool { return v >= 0 && !math.IsInf(v, 0) }
	switch {
	case c.NEnvs < 1:
		return bad("n_envs", c.NEnvs, "must be at least 1")
	case c.NSteps < 1:
		return bad("n_steps", c.NSteps, "must be at least 1")
	case c.BatchSize < 1:
		return bad("batch_size", c.BatchSize, "must be at least 1")
	case (c.NSteps*c.NEnvs)%c.BatchSize != 0:
		return bad("batch_size", c.BatchSize, fmt.Sprintf("must divide n_steps*n_envs = %d", c.NSteps*c.NEnvs))
	case c.NEpochs < 1:
		return bad("n_epochs", c.NEpochs, "must be at least 1")
	case c.TotalTimesteps < int64(c.NSteps*c.NEnvs):
		return bad("total_timesteps", c.TotalTimesteps, fmt.Sprintf("must be at least one rollout (n_steps*n_envs = %d)", c.NSteps*c.NEnvs))
	case !unit(c.Gamma):
		return bad("gamma", c.Gamma, "must be in [0, 1]")
	case !unit(c.GAELambda):
		return bad("gae_lambda", c.GAELambda, "must be in [0, 1]")
	case !(c.ClipRange > 0 && c.ClipRange < 1):
		return bad("clip_range", c.ClipRange, "must be in (0, 1)")
	case !finite(c.EntCoef):
		return bad("ent_coef", c.EntCoef, "must be a finite non-negative number")
	case !finite(c.VFCoef):
		return bad("vf_coef", c.VFCoef, "must be a finite non-negative number")
	case !(c.LearningRate > 0) || math.IsInf(c.LearningRate, 0):
		return bad("learning_rate", c.LearningRate, "must be a finite positive number")
	case !(c.MaxGradNorm > 0):
		return bad("max_grad_norm", c.MaxGradNorm, "must be positive")
	case c.NormalizeReward && !(c.ClipReward > 0):
		return bad("clip_reward", c.ClipReward, "must be positive when normalize_reward is on")
	case !finite(c.TargetKL):
		return bad("target_kl", c.TargetKL, "must be 0 (off) or positive")
	case c.EvalFreq < 0:
		return bad("eval_freq", c.EvalFreq, "must not be negative")
	case c.EvalStart && c.EvalFreq == 0:
		return bad("eval_start", c.EvalStart, "needs eval_freq > 0 (it is the first of the validation runs)")
	case c.Select != "" && c.Select != SelectReward && c.Select != SelectUnschedulable:
		return bad("select", c.Select, fmt.Sprintf("must be %q or %q", SelectReward, SelectUnschedulable))
	case c.EvalEpisodes < 0 || (c.EvalFreq > 0 && c.EvalEpisodes == 0):
		return bad("eval_episodes", c.EvalEpisodes, "must be positive when eval_freq is set")
	case c.Hidden < 1 || c.Hidden > 4096:
		return bad("hidden", c.Hidden, "must be in [1, 4096]")
	case c.Rounds < 0 || c.Rounds > 64:
		return bad("rounds", c.Rounds, "must be in [0, 64]")
	case !(c.LogitClip >= 0 && c.LogitClip <= 100):
		return bad("logit_clip", c.LogitClip, "must be 0 (the model's default) or in (0, 100]")
	case !(c.PendingClip >= 0 && c.PendingClip <= 100):
		return bad("pending_clip", c.PendingClip, "must be 0 (logit_clip) or in (0, 100]")
	case c.BCSteps < 0:
		return bad("bc_steps", c.BCSteps, "must be 0 (no behaviour cloning) or positive")
	case c.BCSteps > 0 && c.BCEpochs < 1:
		return bad("bc_epochs", c.BCEpochs, "must be at least 1 when bc_steps is set")
	case c.BCSteps > 0 && (!(c.BCLearningRate > 0) || math.IsInf(c.BCLearningRate, 0)):
		return bad("bc_learning_rate", c.BCLearningRate, "must be a finite positive number when bc_steps is set")
	case c.BCSteps > 0 && !(c.BCHoldout > 0 && c.BCHoldout < 1):
		return bad("bc_holdout", c.BCHoldout, "must be in (0, 1) when bc_steps is set")
	case c.BCSteps > 0 && (bcHeldOut(c.BCSteps, c.BCHoldout) < 1 || bcHeldOut(c.BCSteps, c.BCHoldout) >= c.BCSteps):
		return bad("bc_steps", c.BCSteps, fmt.Sprintf("too few to hold out a share of %v and train on the rest", c.BCHoldout))
	}
	c.RolloutSize = c.NSteps * c.NEnvs
	c.Minibatches = c.RolloutSize / c.BatchSize
	c.Updates = c.TotalTimesteps / int64(c.RolloutSize)
	return nil
}

// bcHeldOut is the number of the n cloning decisions held out.
func bcHeldOut(n int, share float64) int { return int(math.Round(float64(n) * share)) }
