package agent

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/model"
	"github.com/kubesim/kubesim/sim"
)

// GPUModelState is one GPU model's nodes when a diagnosed run's arrived GPU
// demand first reaches the cluster's GPU capacity (100% arrived).
type GPUModelState struct {
	Model      string `json:"model"`
	Nodes      int    `json:"nodes"`
	GPUs       int64  `json:"gpus"`
	AllocMilli int64  `json:"alloc_milli"` // milli-GPU allocated on the model's devices
	Idle       int    `json:"idle_devices"`
}

// AllocPct is the model's GPU allocation in percent.
func (m GPUModelState) AllocPct() float64 {
	if m.GPUs == 0 {
		return 0
	}
	return float64(m.AllocMilli) / float64(m.GPUs*sim.GPUMilli) * 100
}

// GPUFailGroup counts the GPU pods of one model constraint that failed
// before 100% arrived: Allowed names the models the pods allow ("any" for
// pods without a gpu_spec), joined by "|".
type GPUFailGroup struct {
	Allowed string `json:"allowed"`
	Pods    int    `json:"pods"`
	Milli   int64  `json:"milli"` // their GPU demand
}

// GPUDiag is where a GPU run stands at 100% arrived (DiagnoseGPU): the
// allocation of each GPU model, the GPU pods that failed so far by model
// constraint (largest demand first), and how many of the run's decisions
// on GPU pods took another node than the environment's selection policy
// (FGD) would have.
type GPUDiag struct {
	Scheduler string          `json:"scheduler"`
	Arrived   float64         `json:"arrived_pct"` // arrived GPU demand over capacity at the snapshot, percent
	Models    []GPUModelState `json:"models"`
	Failed    []GPUFailGroup  `json:"failed"`
	Decisions int             `json:"decisions"`  // GPU pods that some node could take
	OffSelect int             `json:"off_select"` // of them, not placed on the selection policy's node
	// OffTied is how many of OffSelect went to a node of the same
	// selection score as the selection policy's node: a tie that the
	// selection policy breaks by rank and the policy broke otherwise.
	OffTied int `json:"off_tied"`
}

// DiagnoseGPU runs one episode of FGD's experiment on w's whole cluster
// (the arrivals of sim.GPUArrivals(w, inflate, seed), as EvaluateGPU) and
// describes it at the moment the arrived GPU demand first reaches the
// capacity (or at the end, when it never does). With pol the policy acts
// greedily in an environment of cfg (the checkpoint's); with pol nil the
// environment's selection policy (cfg.Select, FGD by default) takes every
// decision, so its OffSelect is 0. name names the row.
func DiagnoseGPU(ctx context.Context, pol *model.Policy, cfg env.GPUConfig, w *sim.GPUWorkload, inflate float64, seed uint64, name string) (GPUDiag, error) {
	d := GPUDiag{Scheduler: name}
	e, obs, err := evalEnv(cfg, w, inflate, seed)
	if err != nil {
		return d, err
	}
	var actor *GPUActor
	if pol != nil {
		actor = NewGPUActor(pol)
	}
	failed := map[sim.GPUModels]*GPUFailGroup{}
	snap := false
	for steps := 0; ; steps++ {
		if steps%256 == 0 {
			if err := ctx.Err(); err != nil {
				return d, err
			}
		}
		best := e.Best() // before Step: e.Scores is this decision's until then
		a := best
		if actor != nil {
			if a, err = actor.Act(obs); err != nil {
				return d, fmt.Errorf("diagnosing %s on %s, step %d: %w", name, w.Name, steps, err)
			}
		}
		p := *e.Pod()
		next, _, done, info, err := e.Step(a)
		if err != nil {
			return d, err
		}
		if p.GPU.Count > 0 && !snap {
			if best < obs.N {
				d.Decisions++
				if a != best {
					d.OffSelect++
					if sc := e.Scores(); a < len(sc) && sc[a] == sc[best] {
						d.OffTied++
					}
				}
			}
			if !info.Placed {
				g := failed[p.GPU.Models]
				if g == nil {
					g = &GPUFailGroup{Allowed: allowedNames(w, p.GPU.Models)}
					failed[p.GPU.Models] = g
				}
				g.Pods++
				g.Milli += p.GPU.Total()
			}
		}
		arrived, capacity := e.Arrived()
		if !snap && (arrived >= capacity || done) {
			snap = true
			d.Arrived = float64(arrived) / float64(capacity) * 100
			d.Models = modelStates(w, e.Cluster())
		}
		if done {
			break
		}
		obs = next
	}
	for _, g := range failed {
		d.Failed = append(d.Failed, *g)
	}
	slices.SortFunc(d.Failed, func(a, b GPUFailGroup) int {
		return cmp.Or(cmp.Compare(b.Milli, a.Milli), cmp.Compare(a.Allowed, b.Allowed))
	})
	return d, nil
}

// allowedNames names a model constraint: "any", or the models joined by "|".
func allowedNames(w *sim.GPUWorkload, m sim.GPUModels) string {
	if m == 0 {
		return "any"
	}
	var names []string
	for id, n := range w.Models {
		if m&(1<<uint(id)) != 0 {
			names = append(names, n)
		}
	}
	return strings.Join(names, "|")
}

// modelStates sums c's GPU nodes by model, in the order of w.Models.
func modelStates(w *sim.GPUWorkload, c *sim.GPUCluster) []GPUModelState {
	by := map[int8]*GPUModelState{}
	for i := range c.Nodes {
		g := &c.Nodes[i].GPU
		if g.N == 0 {
			continue
		}
		s := by[g.Model]
		if s == nil {
			s = &GPUModelState{Model: w.Models[g.Model]}
			by[g.Model] = s
		}
		s.Nodes++
		s.GPUs += int64(g.N)
		s.AllocMilli += int64(g.N)*sim.GPUMilli - g.TotalFree()
		s.Idle += g.Idle()
	}
	var out []GPUModelState
	for id := range w.Models {
		if s := by[int8(id)]; s != nil {
			out = append(out, *s)
		}
	}
	return out
}
