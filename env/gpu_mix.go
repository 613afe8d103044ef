package env

import (
	"math/rand/v2"
	"slices"

	"github.com/kubesim/kubesim/sim"
)

// gpuMixStream is the PCG stream of the pod-mix draw ("gpumix"), apart
// from the subcluster's, the scarce models' and the gpu_spec's.
const gpuMixStream = 0x6770756d6978

// Pod classes of a mix shift (PodClass).
const (
	MixCPU   = iota // CPU-only pods
	MixShare        // a share of one GPU
	MixOne          // one whole GPU
	MixMulti        // several whole GPUs
	MixClasses
)

// MixClassNames names the classes of PodClass, by index.
var MixClassNames = [MixClasses]string{"cpu", "share", "one", "multi"}

// PodClass returns the mix class of a GPU request.
func PodClass(r sim.GPURequest) int {
	switch {
	case r.Count == 0:
		return MixCPU
	case r.Share():
		return MixShare
	case r.Count == 1:
		return MixOne
	default:
		return MixMulti
	}
}

// MixWorkload returns w with the share of class's pods raised: each pod,
// independently with probability f, is replaced by a pod of that class
// drawn uniformly from w's (the replacement keeps the slot's name, so
// names stay unique), drawn from seed on a stream of its own. For
// validation episodes that show a policy the pod mixes that training with
// GPUConfig.MixRate shows it. w is not changed; f 0, or a class w does
// not hold, returns w itself.
func MixWorkload(w *sim.GPUWorkload, class int, f float64, seed uint64) *sim.GPUWorkload {
	rng := rand.New(rand.NewPCG(seed, gpuMixStream))
	return mixClass(w, class, f, rng)
}

// withMix is GPUConfig.MixRate's draw: with probability rate the episode
// picks one class uniformly among those w holds and a share f uniform in
// [0, fmax), and mixClass replaces that share of the pods by pods of the
// class. The draw uses its own stream of seed: the same seed gives the
// same mix. rate 0 returns w itself.
func withMix(w *sim.GPUWorkload, rate, fmax float64, seed uint64) *sim.GPUWorkload {
	if rate <= 0 {
		return w
	}
	rng := rand.New(rand.NewPCG(seed, gpuMixStream+1))
	if rng.Float64() >= rate {
		return w
	}
	var held []int
	for c := range MixClasses {
		if slices.ContainsFunc(w.Pods, func(p sim.GPUPodSpec) bool { return PodClass(p.GPU) == c }) {
			held = append(held, c)
		}
	}
	if len(held) == 0 {
		return w
	}
	c := held[rng.IntN(len(held))]
	return mixClass(w, c, fmax*rng.Float64(), rng)
}

// mixClass replaces each pod of w with probability f by a pod of class
// drawn uniformly from w's pods of that class; w is not changed.
func mixClass(w *sim.GPUWorkload, class int, f float64, rng *rand.Rand) *sim.GPUWorkload {
	var pool []int
	for i := range w.Pods {
		if PodClass(w.Pods[i].GPU) == class {
			pool = append(pool, i)
		}
	}
	if f <= 0 || len(pool) == 0 {
		return w
	}
	out := *w
	out.Pods = slices.Clone(w.Pods)
	for i := range out.Pods {
		if rng.Float64() < f {
			name := out.Pods[i].Name
			out.Pods[i] = w.Pods[pool[rng.IntN(len(pool))]]
			out.Pods[i].Name = name
		}
	}
	return &out
}
