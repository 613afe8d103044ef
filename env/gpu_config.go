package env

import (
	"fmt"
	"math"
	"strings"

	"github.com/kubesim/kubesim/sched"
)

// GPUConfig configures a GPUEnv (FGD's experiment on an openb workload,
// one step per pod). YAML keys as tagged; the zero value of a field takes
// the default of DefaultGPUConfig only through that function.
type GPUConfig struct {
	// Inflate is the arrived GPU demand as a multiple of the (sub)cluster's
	// GPU capacity (sim.GPUArrivals; the artifact's 1.3). 0 keeps the pod
	// list as it is.
	Inflate float64 `yaml:"inflate" json:"inflate"`
	// MinNodes and MaxNodes, when MaxNodes > 0, make each episode a
	// subcluster: n nodes drawn uniformly in [MinNodes, MaxNodes], then n
	// of the workload's GPU nodes without replacement; the pod list is
	// inflated (or thinned) to Inflate x the subcluster's capacity. 0 and
	// 0: the whole cluster.
	MinNodes int `yaml:"min_nodes" json:"min_nodes"`
	MaxNodes int `yaml:"max_nodes" json:"max_nodes"`
	// FailPenalty is subtracted from the reward when the policy fails a pod
	// (the Pending action, or a node the pod does not fit) that some node
	// could take; in GPUs, the reward's unit.
	FailPenalty float64 `yaml:"fail_penalty" json:"fail_penalty"`
	// Select names the GPU policy (sched.GPUNames) whose GPU selection
	// picks the devices on the node the policy chose (fgd: the devices FGD
	// would take there).
	Select string `yaml:"select" json:"select"`
	// Prior, when set, names the GPU policy whose scores give Obs.Prior:
	// for a feasible node, Scale*(s_i/max_s - 1) (max_s the best feasible
	// score; 0 when max_s is 0) minus Scale/200 x (rank_i - r_0)/N (the
	// tie-break by sim.GPUCluster.Rank, r_0 the lowest rank among the best
	// nodes, smaller than any difference of scores), 0 elsewhere, and
	// PriorPending for the Pending action. The node the policy's Schedule
	// picks then has prior exactly 0 and every other node less.
	Prior        string  `yaml:"prior" json:"prior"`
	PriorScale   float64 `yaml:"prior_scale" json:"prior_scale"`
	PriorPending float64 `yaml:"prior_pending" json:"prior_pending"`
	// SpecRate, in [0, 1], gives a model constraint (a gpu_spec) to that
	// share of the episode's GPU pods at Reset, for training on model
	// constraints that the pod list lacks: each GPU pod independently with
	// probability SpecRate, the allowed models k of the node list's GPU
	// models (k uniform in 1..M-1 for M models, 1 when M is 1; the models
	// uniform without replacement), drawn from the episode's seed on a
	// stream of their own (withSpecs). Pods that already name models keep
	// theirs. 0 (the default) leaves the pod list as it is; an evaluation
	// (agent.EvaluateGPU) always runs with 0.
	SpecRate float64 `yaml:"spec_rate" json:"spec_rate,omitempty"`
	// ScarceRate, in [0, 1], is the share of training episodes in which one
	// or more GPU models of the episode's (sub)cluster are made scarce at
	// Reset (ScarceWorkload: unconstrained GPU pods pinned to drawn models
	// until by 100% arrived they ask 0.5-1.3x their GPUs, or as
	// ScarceModels and ScarceFMax say), drawn from the
	// episode's seed, before SpecRate's constraints. 0 (the default) never
	// does; an evaluation (agent.EvaluateGPU) always runs with 0.
	ScarceRate float64 `yaml:"scarce_rate" json:"scarce_rate,omitempty"`
	// ScarceModels and ScarceFMax shape a scarce episode's draw
	// (ScarceDraw): k models, k uniform in 1..ScarceModels, each asked f x
	// its GPUs, f uniform in [0.5, ScarceFMax). 0 and 0 (the defaults) are
	// one model and 1.3.
	ScarceModels int     `yaml:"scarce_models" json:"scarce_models,omitempty"`
	ScarceFMax   float64 `yaml:"scarce_f_max" json:"scarce_f_max,omitempty"`
	// ScarcePick is how a scarce episode picks its models: "gpus" (or "",
	// the default) in proportion to their GPUs, "uniform" each model of the
	// (sub)cluster equally likely.
	ScarcePick string `yaml:"scarce_pick" json:"scarce_pick,omitempty"`
	// MixRate, in [0, 1], is the share of training episodes whose pod mix
	// is shifted at Reset (withMix): one pod class (CPU-only, GPU shares,
	// one whole GPU, several whole GPUs) drawn uniformly among those the
	// list holds, and a share f uniform in [0, MixMax) of the pods, each
	// independently, replaced by pods of that class drawn from the list;
	// from the episode's seed on a stream of its own, before the scarce
	// models and the gpu_spec draw. It shows training the pod mixes of
	// other lists from the training list's own pods. 0 (the default) never
	// does; an evaluation always runs with 0.
	MixRate float64 `yaml:"mix_rate" json:"mix_rate,omitempty"`
	MixMax  float64 `yaml:"mix_max" json:"mix_max,omitempty"`
	// ObsPinned adds an 18th node feature (GPUNodePinned): the arrived GPU
	// demand pinned to the node's model over that model's capacity. A
	// policy reads NodeFeatures() columns; checkpoints without it keep 17.
	ObsPinned bool `yaml:"obs_pinned" json:"obs_pinned,omitempty"`
	// PriorOrder makes the prior from the order of the prior policy's
	// scores instead of their values: the feasible nodes sorted by score,
	// then rank, the k-th of m gets -prior_scale x k/m. A greedy zero
	// correction is then the policy exactly, whatever its score scale
	// (fgd-tiers needs it); how much better one node scores is lost.
	PriorOrder bool `yaml:"prior_order" json:"prior_order,omitempty"`
}

// NodeFeatures is the width of a node row of the observation:
// GPUNodeFeatures, and one more with ObsPinned.
func (c *GPUConfig) NodeFeatures() int {
	if c.ObsPinned {
		return GPUNodeFeatures + 1
	}
	return GPUNodeFeatures
}

// Scarce picks (GPUConfig.ScarcePick).
const (
	ScarcePickGPUs    = "gpus"
	ScarcePickUniform = "uniform"
)

// ScarceDraw is the draw of a scarce episode (ScarceModels, ScarceFMax).
func (c *GPUConfig) ScarceDraw() ScarceDraw {
	return ScarceDraw{Models: c.ScarceModels, FMax: c.ScarceFMax, Uniform: c.ScarcePick == ScarcePickUniform}
}

// DefaultGPUConfig is FGD's experiment on the whole cluster with FGD's GPU
// selection, a fail penalty of 1 GPU and no prior.
func DefaultGPUConfig() GPUConfig {
	return GPUConfig{Inflate: 1.3, FailPenalty: 1, Select: sched.NameFGD}
}

// Validate reports the first impossible value, naming its YAML key; errors
// wrap ErrConfig.
func (c *GPUConfig) Validate() error {
	bad := func(key string, v any, why string) error {
		return fmt.Errorf("%w: %s = %v: %s", ErrConfig, key, v, why)
	}
	names := strings.Join(sched.GPUNames(), ", ")
	switch {
	case !(c.Inflate >= 0 && c.Inflate <= 10):
		return bad("inflate", c.Inflate, "want 0 (none) to 10")
	case c.MinNodes < 0:
		return bad("min_nodes", c.MinNodes, "must be >= 0")
	case c.MaxNodes < 0:
		return bad("max_nodes", c.MaxNodes, "must be >= 0 (0: the whole cluster)")
	case c.MaxNodes > 0 && (c.MinNodes < 1 || c.MinNodes > c.MaxNodes):
		return bad("min_nodes", c.MinNodes, fmt.Sprintf("want 1..max_nodes (%d) for a subcluster", c.MaxNodes))
	case c.MaxNodes == 0 && c.MinNodes != 0:
		return bad("max_nodes", 0, "must be set with min_nodes")
	case !(c.FailPenalty >= 0) || math.IsInf(c.FailPenalty, 0):
		return bad("fail_penalty", c.FailPenalty, "must be a finite number >= 0")
	case c.Prior == "" && (c.PriorScale != 0 || c.PriorPending != 0 || c.PriorOrder):
		return bad("prior", `""`, "must name a GPU policy when prior_scale, prior_pending or prior_order is set")
	case math.IsNaN(c.PriorPending) || math.IsInf(c.PriorPending, 0):
		return bad("prior_pending", c.PriorPending, "must be a finite number")
	case !(c.SpecRate >= 0 && c.SpecRate <= 1):
		return bad("spec_rate", c.SpecRate, "want a share of the GPU pods, 0 to 1")
	case !(c.ScarceRate >= 0 && c.ScarceRate <= 1):
		return bad("scarce_rate", c.ScarceRate, "want a share of the episodes, 0 to 1")
	case c.ScarceModels < 0 || c.ScarceModels > 64:
		return bad("scarce_models", c.ScarceModels, "want 0 (one model) to 64")
	case c.ScarceFMax != 0 && !(c.ScarceFMax > scarceFMin && c.ScarceFMax <= 10):
		return bad("scarce_f_max", c.ScarceFMax, "want 0 (1.3) or a factor above 0.5, at most 10")
	case !(c.MixRate >= 0 && c.MixRate <= 1):
		return bad("mix_rate", c.MixRate, "want a share of the episodes, 0 to 1")
	case c.MixRate > 0 && !(c.MixMax > 0 && c.MixMax <= 1):
		return bad("mix_max", c.MixMax, "want a share of the pods above 0, at most 1, with mix_rate")
	case c.MixRate == 0 && c.MixMax != 0:
		return bad("mix_max", c.MixMax, "needs mix_rate")
	case c.ScarcePick != "" && c.ScarcePick != ScarcePickGPUs && c.ScarcePick != ScarcePickUniform:
		return bad("scarce_pick", c.ScarcePick, `want "gpus" (in proportion to their GPUs) or "uniform"`)
	}
	if _, err := sched.NewGPUScoring(c.Select, 0); err != nil {
		return bad("select", c.Select, "must be one of "+names)
	}
	if c.Prior != "" {
		if _, err := sched.NewGPUScoring(c.Prior, 0); err != nil {
			return bad("prior", c.Prior, "must be one of "+names)
		}
		if !sched.GPUScoresOnScale(c.Prior) && !c.PriorOrder {
			// the prior divides scores by the best one and breaks ties
			// below a 1-in-100 score step: on another scale it would
			// silently lose the policy's order
			return bad("prior", c.Prior, "its scores are not on the 0..100 scale the prior normalises; set prior_order, or use fgd or fgd-balance")
		}
		if !(c.PriorScale > 0) || math.IsInf(c.PriorScale, 0) {
			return bad("prior_scale", c.PriorScale, "must be a finite positive number with a prior")
		}
	}
	return nil
}
