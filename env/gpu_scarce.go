package env

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/kubesim/kubesim/sim"
)

// gpuScarceStream is the PCG stream of the scarce-model draw ("scarce"),
// apart from the subcluster's and the gpu_spec's.
const gpuScarceStream = 0x736361726365

// Defaults of a ScarceDraw's zero fields (round 3's draw: one model,
// f in [0.5, 1.3]).
const (
	defaultScarceModels = 1
	defaultScarceFMax   = 1.3
	scarceFMin          = 0.5
)

// ScarceDraw says how a scarce-model episode is drawn (GPUConfig's
// scarce_models, scarce_f_max and scarce_pick): k models, k uniform in
// 1..Models (0: 1), each with its own factor f uniform in [0.5, FMax)
// (0: 1.3); the models in proportion to their GPUs, or with Uniform each
// model of the cluster equally likely.
type ScarceDraw struct {
	Models  int
	FMax    float64
	Uniform bool
}

func (d ScarceDraw) models() int {
	if d.Models <= 0 {
		return defaultScarceModels
	}
	return d.Models
}

func (d ScarceDraw) fmax() float64 {
	if d.FMax <= 0 {
		return defaultScarceFMax
	}
	return d.FMax
}

// Scarce describes one model of a scarce-model draw (ScarceWorkload): the
// model whose GPUs the pinned pods ask for, the drawn factor f and the
// pinned demand.
type Scarce struct {
	Model int8 // the scarce model (a node model of the workload)
	// F is the drawn factor: the pinned pods ask about F x the model's GPUs
	// by the time 100% of the cluster's GPUs has arrived.
	F float64
	// PinnedMilli is the GPU demand (milli) of the pods pinned to Model,
	// TargetMilli the demand the draw aimed at; ModelGPUs and GPUs the
	// model's and the workload's GPUs.
	PinnedMilli, TargetMilli int64
	ModelGPUs, GPUs          int64
	Pods                     int // pods pinned
}

// ScarceWorkload returns w with k GPU models made scarce (d: k uniform in
// 1..d.Models), drawn from seed on a stream of its own: the models without
// replacement, each with probability proportional to its GPUs among those
// not yet drawn, a factor f uniform in [0.5, d.FMax) for each, and then
// unconstrained GPU pods of w, in a random order, each pinned to the first
// drawn model (in draw order) that it fits and whose pinned demand is
// still below f x (the model's GPUs / w's GPUs) of the list's GPU demand,
// until every model has reached its target. Arrivals inflated to a
// multiple of the capacity keep the shares of the list, so by 100% arrived
// the pods pinned to a model ask about f x its GPUs (on openb's gpuspec33,
// the T4-pinned pods ask about 1.25x the T4 GPUs). A pod fits a model when
// an empty node of it has the pod's GPU count, CPU and memory. Everything
// comes from w: a training draw reads no other pod list. w is not changed;
// the result has its own pod slice. A workload without GPU nodes or GPU
// pods is returned as it is, with no Scarce. The zero ScarceDraw is round
// 3's: one model, f in [0.5, 1.3).
func ScarceWorkload(w *sim.GPUWorkload, seed uint64, d ScarceDraw) (*sim.GPUWorkload, []Scarce) {
	rng := rand.New(rand.NewPCG(seed, gpuScarceStream))
	return scarce(w, rng, d)
}

func scarce(w *sim.GPUWorkload, rng *rand.Rand, d ScarceDraw) (*sim.GPUWorkload, []Scarce) {
	capm, _, gpus := modelSizes(w)
	models := nodeModels(w)
	if gpus == 0 || w.GPUDemand() == 0 {
		return w, nil
	}
	// k is drawn only when more than one model may be: one model keeps
	// round 3's sequence of draws
	k := 1
	if d.models() > 1 {
		k = min(1+rng.IntN(d.models()), len(models))
	}
	var draw []Scarce
	left := gpus // GPUs of the models not drawn yet
	for j := range k {
		// a model not drawn yet: uniform, or proportional to its GPUs
		// (increasing id order)
		weight := func(m int8) int64 { return capm[m] }
		r := int64(0)
		if d.Uniform {
			weight = func(int8) int64 { return 1 }
			r = rng.Int64N(int64(len(models) - j))
		} else {
			r = rng.Int64N(left)
		}
		var s Scarce
		s.Model = -1
		for _, m := range models {
			if slices.ContainsFunc(draw, func(x Scarce) bool { return x.Model == m }) {
				continue
			}
			s.Model = m
			if r < weight(m) {
				break
			}
			r -= weight(m)
		}
		s.F = scarceFMin + (d.fmax()-scarceFMin)*rng.Float64()
		left -= capm[s.Model]
		draw = append(draw, s)
	}
	return pinScarce(w, rng, draw)
}

// ScarceModel returns w with one given GPU model made scarce at factor f:
// ScarceWorkload's pinning (unconstrained GPU pods that fit the model, in
// an order drawn from seed on the scarce stream, until they ask f x the
// model's share of w's GPUs of the list's GPU demand) with the model and
// f chosen by the caller, for validation episodes that cover every model.
// A model without GPU nodes in w pins nothing.
func ScarceModel(w *sim.GPUWorkload, seed uint64, model int8, f float64) (*sim.GPUWorkload, Scarce) {
	rng := rand.New(rand.NewPCG(seed, gpuScarceStream))
	out, draw := pinScarce(w, rng, []Scarce{{Model: model, F: f}})
	if len(draw) == 0 {
		return out, Scarce{Model: model, F: f}
	}
	return out, draw[0]
}

// ScarceModelNamed is ScarceModel for the node model called name; a name
// that is not a model of w's GPU nodes is an error naming them.
func ScarceModelNamed(w *sim.GPUWorkload, seed uint64, name string, f float64) (*sim.GPUWorkload, Scarce, error) {
	var names []string
	for _, m := range nodeModels(w) {
		if w.Models[m] == name {
			if !(f > 0 && f <= 10) {
				return nil, Scarce{}, fmt.Errorf("scarce model %s: factor %v: want more than 0, at most 10", name, f)
			}
			out, s := ScarceModel(w, seed, m, f)
			return out, s, nil
		}
		names = append(names, w.Models[m])
	}
	return nil, Scarce{}, fmt.Errorf("scarce model %q: not a GPU model of %s's nodes (%s)", name, w.Name, strings.Join(names, ", "))
}

// largestNode is the largest GPU count, CPU and memory among the nodes of
// one model: a pod that exceeds any of them fits no empty node of it.
type largestNode struct {
	gpus     int8
	cpu, mem int64
}

// modelSizes returns, per GPU model of w's nodes, its GPUs and its
// largest node, and w's GPUs in all.
func modelSizes(w *sim.GPUWorkload) (capm map[int8]int64, most map[int8]largestNode, gpus int64) {
	capm, most = map[int8]int64{}, map[int8]largestNode{}
	for i := range w.Nodes {
		n := &w.Nodes[i]
		if n.GPUs == 0 {
			continue
		}
		capm[n.Model] += int64(n.GPUs)
		gpus += int64(n.GPUs)
		b := most[n.Model]
		most[n.Model] = largestNode{max(b.gpus, n.GPUs), max(b.cpu, n.CPU), max(b.mem, n.Mem)}
	}
	return capm, most, gpus
}

// pinScarce pins w's unconstrained GPU pods, in an order drawn from rng,
// each to the first model of draw (whose Model and F are set) that it
// fits and that is still below its target, and fills in the draw's
// targets and counts.
func pinScarce(w *sim.GPUWorkload, rng *rand.Rand, draw []Scarce) (*sim.GPUWorkload, []Scarce) {
	capm, most, gpus := modelSizes(w)
	demand := w.GPUDemand()
	if gpus == 0 || demand == 0 {
		return w, nil
	}
	for j := range draw {
		s := &draw[j]
		s.GPUs, s.ModelGPUs = gpus, capm[s.Model]
		s.TargetMilli = int64(s.F * float64(s.ModelGPUs) / float64(gpus) * float64(demand))
	}
	open := 0 // models still below their target
	for _, s := range draw {
		if s.TargetMilli > 0 {
			open++
		}
	}
	out := *w
	out.Pods = slices.Clone(w.Pods)
	for _, i := range rng.Perm(len(out.Pods)) {
		if open == 0 {
			break
		}
		p := &out.Pods[i]
		if p.GPU.Count == 0 || p.GPU.Models != 0 {
			continue
		}
		for j := range draw {
			s := &draw[j]
			b := most[s.Model]
			if s.PinnedMilli >= s.TargetMilli || p.GPU.Count > b.gpus || p.CPU > b.cpu || p.Mem > b.mem {
				continue
			}
			p.GPU.Models = 1 << uint(s.Model)
			s.PinnedMilli += p.GPU.Total()
			s.Pods++
			if s.PinnedMilli >= s.TargetMilli {
				open--
			}
			break
		}
	}
	return &out, draw
}

// withScarce makes models scarce (ScarceWorkload with draw d) in an
// episode with probability rate (GPUConfig.ScarceRate), the coin and the
// draw from seed on the scarce stream; rate 0 returns w itself.
func withScarce(w *sim.GPUWorkload, rate float64, d ScarceDraw, seed uint64) *sim.GPUWorkload {
	if rate <= 0 {
		return w
	}
	rng := rand.New(rand.NewPCG(seed, gpuScarceStream))
	if rng.Float64() >= rate {
		return w
	}
	out, _ := scarce(w, rng, d)
	return out
}
