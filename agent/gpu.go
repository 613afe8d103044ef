package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/model"
	"github.com/kubesim/kubesim/sim"
)

// MetaGPUEnv is the checkpoint metadata key under which a GPU policy's
// environment configuration (env.GPUConfig, JSON) is stored: its presence
// makes the checkpoint a GPU policy's.
const MetaGPUEnv = "env/gpu_config"

// LoadGPU reads a GPU policy's checkpoint: the policy, which must read the
// GPU environment's observations (env.GPUNodeFeatures node and
// env.GPUPodFeatures pod features), and the GPU environment configuration
// it was trained with. A CPU/memory checkpoint is an error that names the
// feature widths.
func LoadGPU(path string) (*model.Policy, env.GPUConfig, error) {
	pol, err := model.Load(path)
	if err != nil {
		return nil, env.GPUConfig{}, fmt.Errorf("loading %s: %w", path, err)
	}
	c := pol.Config()
	if c.PodFeatures != env.GPUPodFeatures || (c.NodeFeatures != env.GPUNodeFeatures && c.NodeFeatures != env.GPUNodeFeatures+1) {
		kind := "not a GPU policy"
		if c.NodeFeatures == env.NodeFeatures && c.PodFeatures == env.PodFeatures {
			kind = "a CPU/memory policy"
		}
		return nil, env.GPUConfig{}, fmt.Errorf("loading %s: the policy reads %d node and %d pod features (%s); a GPU policy reads %d and %d (per-GPU free milli, model fit, fragmentation; %d node features with obs_pinned)",
			path, c.NodeFeatures, c.PodFeatures, kind, env.GPUNodeFeatures, env.GPUPodFeatures, env.GPUNodeFeatures+1)
	}
	cfg := env.DefaultGPUConfig()
	s, ok := pol.Meta()[MetaGPUEnv]
	if !ok {
		return nil, env.GPUConfig{}, fmt.Errorf("loading %s: no %s metadata: the GPU environment the policy was trained with is unknown", path, MetaGPUEnv)
	}
	if err := json.Unmarshal([]byte(s), &cfg); err != nil {
		return nil, env.GPUConfig{}, fmt.Errorf("loading %s: bad %s metadata: %w", path, MetaGPUEnv, err)
	}
	if err := cfg.Validate(); err != nil {
		return nil, env.GPUConfig{}, fmt.Errorf("loading %s: %s metadata: %w", path, MetaGPUEnv, err)
	}
	if c.NodeFeatures != cfg.NodeFeatures() {
		return nil, env.GPUConfig{}, fmt.Errorf("loading %s: the policy reads %d node features but its environment (obs_pinned %v) gives %d", path, c.NodeFeatures, cfg.ObsPinned, cfg.NodeFeatures())
	}
	return pol, cfg, nil
}

// GPUActor runs a GPU policy greedily in a GPUEnv.
type GPUActor struct {
	pol *model.Policy
	b   model.Batch
	act model.ActResult
	obs [1]env.Obs
}

// NewGPUActor wraps pol (a GPU policy: LoadGPU) and turns on its row cache
// (model.Policy.SetRowCache): successive decisions on one cluster differ in
// a few nodes, and the cached pass gives the same actions bit for bit.
func NewGPUActor(pol *model.Policy) *GPUActor {
	pol.SetRowCache(true)
	return &GPUActor{pol: pol}
}

// Act returns the policy's greedy action for obs (a GPUEnv observation):
// a node index or obs.N (Pending, the pod fails).
func (a *GPUActor) Act(obs *env.Obs) (int, error) {
	a.obs[0] = *obs
	FillGPU(&a.b, a.obs[:])
	if err := a.pol.Act(&a.b, true, nil, &a.act); err != nil {
		return 0, err
	}
	return ToEnv(a.act.Actions[0], obs.N, a.b.N), nil
}

// GuardPinned names the guard of EvaluateGPUGuarded that keeps the
// selection policy's (FGD's) decision wherever model constraints are in
// play: for a pod that names GPU models, and whenever the policy's node or
// FGD's is of a model that pinned demand has asked for so far
// (env.GPUEnv.PinnedArrived > 0). On a pod list without gpu_spec it never
// acts.
const GuardPinned = "pinned"

// GuardCPU names the guard of EvaluateGPUGuarded that keeps the selection
// policy's decision for every CPU-only pod, so that the learned policy
// places the GPU pods only. The CPU-only pods take CPU that GPUs need; the
// learned policies of issue 27 lose to their start (fgd-tiers) on cpu250,
// the list with the most of them (docs/ppo.md).
const GuardCPU = "cpu"

// GPUGuards are the guards EvaluateGPUGuarded takes ("" for none).
var GPUGuards = []string{"", GuardPinned, GuardCPU}

// EvaluateGPU runs the policy greedily on w's whole cluster, the arrivals
// of sim.GPUArrivals(w, inflate, seed) (those every heuristic of
// sweep.ReplayGPU replays with the same seed), in a GPUEnv of cfg (the
// checkpoint's: its prior and GPU selection), and returns the run's result
// under the name name.
func EvaluateGPU(ctx context.Context, pol *model.Policy, cfg env.GPUConfig, w *sim.GPUWorkload, inflate float64, seed uint64, name string) (sim.GPUResult, error) {
	return EvaluateGPUGuarded(ctx, pol, cfg, w, inflate, seed, name, "")
}

// EvaluateGPUGuarded is EvaluateGPU with a guard (GPUGuards): with
// GuardPinned the decisions that involve model constraints are the
// environment's selection policy's (FGD's or fgd-tiers'), an ablation that
// says how much of a policy's result its decisions under model constraints
// make; with GuardCPU the CPU-only pods' decisions are.
func EvaluateGPUGuarded(ctx context.Context, pol *model.Policy, cfg env.GPUConfig, w *sim.GPUWorkload, inflate float64, seed uint64, name, guard string) (sim.GPUResult, error) {
	if !slices.Contains(GPUGuards, guard) {
		return sim.GPUResult{}, fmt.Errorf("gpu policy guard %q: want one of %q", guard, GPUGuards)
	}
	e, obs, err := evalEnv(cfg, w, inflate, seed)
	if err != nil {
		return sim.GPUResult{}, err
	}
	actor := NewGPUActor(pol)
	for steps := 0; ; steps++ {
		if steps%256 == 0 {
			if err := ctx.Err(); err != nil {
				return sim.GPUResult{}, err
			}
		}
		a, err := actor.Act(obs)
		if err != nil {
			return sim.GPUResult{}, fmt.Errorf("gpu policy on %s, step %d: %w", w.Name, steps, err)
		}
		switch guard {
		case GuardPinned:
			if b := e.Best(); a != b && pinnedInPlay(e, a, b) {
				a = b
			}
		case GuardCPU:
			if e.Pod().GPU.Count == 0 {
				a = e.Best()
			}
		}
		next, _, done, info, err := e.Step(a)
		if err != nil {
			return sim.GPUResult{}, err
		}
		if done {
			res := *info.Result
			res.Scheduler = name
			return res, nil
		}
		obs = next
	}
}

// evalEnv is the environment of an evaluation (EvaluateGPU, DiagnoseGPU):
// cfg on w's whole cluster with the pod list as it is (no subcluster, no
// drawn model constraints, scarce models or pod-mix shifts), inflated to inflate, reset to
// seed's arrivals.
func evalEnv(cfg env.GPUConfig, w *sim.GPUWorkload, inflate float64, seed uint64) (*env.GPUEnv, *env.Obs, error) {
	cfg.Inflate, cfg.MinNodes, cfg.MaxNodes, cfg.SpecRate, cfg.ScarceRate = inflate, 0, 0, 0, 0
	cfg.MixRate, cfg.MixMax = 0, 0
	e, err := env.NewGPUEnv(cfg, w)
	if err != nil {
		return nil, nil, err
	}
	obs, err := e.Reset(seed)
	if err != nil {
		return nil, nil, err
	}
	return e, obs, nil
}

// pinnedInPlay says whether the current decision involves model
// constraints (GuardPinned): the pod names models, or node a or b (an
// index, or N for Pending) is of a model that pinned demand asked for.
func pinnedInPlay(e *env.GPUEnv, a, b int) bool {
	if e.Pod().GPU.Models != 0 {
		return true
	}
	nodes := e.Cluster().Nodes
	for _, i := range []int{a, b} {
		if i < len(nodes) && e.PinnedArrived(nodes[i].GPU.Model) > 0 {
			return true
		}
	}
	return false
}
