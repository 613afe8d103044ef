package env

import (
	"math/rand/v2"
	"slices"

	"github.com/kubesim/kubesim/sim"
)

// gpuScarceStream is the PCG stream of the scarce-model draw ("scarce"),
// apart from the subcluster's and the gpu_spec's.
const gpuScarceStream = 0x736361726365

// Scarce describes one scarce-model draw (ScarceWorkload): the model whose
// GPUs the pinned pods ask for, the drawn factor f and the pinned demand.
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

// ScarceWorkload returns w with one GPU model made scarce, drawn from seed
// on a stream of its own: the model with probability proportional to its
// GPUs in w, a factor f uniform in [0.5, 1.3], and then unconstrained GPU
// pods of w, in a random order, pinned to that model alone until their GPU
// demand reaches f x (the model's GPUs / w's GPUs) of the list's GPU
// demand. Arrivals inflated to a multiple of the capacity keep the shares
// of the list, so by 100% arrived the pinned pods ask about f x the
// model's GPUs (on openb's gpuspec33, the T4-pinned pods ask about 1.25x
// the T4 GPUs). Only pods that fit an empty node of the model (GPU count,
// CPU and memory) are pinned. Everything comes from w: a training draw
// reads no other pod list. w is not changed; the result has its own pod
// slice. A workload without GPU nodes or GPU pods is returned as it is.
func ScarceWorkload(w *sim.GPUWorkload, seed uint64) (*sim.GPUWorkload, Scarce) {
	rng := rand.New(rand.NewPCG(seed, gpuScarceStream))
	return scarce(w, rng)
}

func scarce(w *sim.GPUWorkload, rng *rand.Rand) (*sim.GPUWorkload, Scarce) {
	var s Scarce
	// capacity per model, and the largest node of each model
	type big struct {
		gpus     int8
		cpu, mem int64
	}
	capm := map[int8]int64{}
	most := map[int8]big{}
	models := nodeModels(w)
	for i := range w.Nodes {
		n := &w.Nodes[i]
		if n.GPUs == 0 {
			continue
		}
		capm[n.Model] += int64(n.GPUs)
		s.GPUs += int64(n.GPUs)
		b := most[n.Model]
		most[n.Model] = big{max(b.gpus, n.GPUs), max(b.cpu, n.CPU), max(b.mem, n.Mem)}
	}
	demand := w.GPUDemand()
	if s.GPUs == 0 || demand == 0 {
		return w, s
	}
	// the model, proportional to its GPUs (models in increasing id order)
	r := rng.Int64N(s.GPUs)
	s.Model = models[len(models)-1]
	for _, m := range models {
		if r < capm[m] {
			s.Model = m
			break
		}
		r -= capm[m]
	}
	s.ModelGPUs = capm[s.Model]
	s.F = 0.5 + 0.8*rng.Float64()
	s.TargetMilli = int64(s.F * float64(s.ModelGPUs) / float64(s.GPUs) * float64(demand))
	out := *w
	out.Pods = slices.Clone(w.Pods)
	b := most[s.Model]
	for _, i := range rng.Perm(len(out.Pods)) {
		if s.PinnedMilli >= s.TargetMilli {
			break
		}
		p := &out.Pods[i]
		if p.GPU.Count == 0 || p.GPU.Models != 0 || p.GPU.Count > b.gpus || p.CPU > b.cpu || p.Mem > b.mem {
			continue
		}
		p.GPU.Models = 1 << uint(s.Model)
		s.PinnedMilli += p.GPU.Total()
		s.Pods++
	}
	return &out, s
}

// withScarce makes a model scarce (ScarceWorkload) in an episode with
// probability rate (GPUConfig.ScarceRate), the coin and the draw from seed
// on the scarce stream; rate 0 returns w itself.
func withScarce(w *sim.GPUWorkload, rate float64, seed uint64) *sim.GPUWorkload {
	if rate <= 0 {
		return w
	}
	rng := rand.New(rand.NewPCG(seed, gpuScarceStream))
	if rng.Float64() >= rate {
		return w
	}
	out, _ := scarce(w, rng)
	return out
}
