package env

import (
	"math/rand/v2"
	"slices"

	"github.com/kubesim/kubesim/sim"
)

// gpuSpecStream is the PCG stream of the gpu_spec draw ("gpuspec"), apart
// from the subcluster's (gpuEnvStream) so that a spec rate leaves the
// subcluster of a seed as it is.
const gpuSpecStream = 0x67707573706563

// SpecWorkload returns w with the model constraints a training episode of
// seed draws at rate (GPUConfig.SpecRate; withSpecs over the node list's
// models): for validation episodes that show a policy the gpu_spec pods
// training shows it. w is not changed; rate 0 returns w itself.
func SpecWorkload(w *sim.GPUWorkload, seed uint64, rate float64) *sim.GPUWorkload {
	return withSpecs(w, nodeModels(w), rate, seed)
}

// NodeModels returns the distinct GPU model ids of w's nodes with GPUs, in
// increasing order.
func NodeModels(w *sim.GPUWorkload) []int8 { return nodeModels(w) }

// nodeModels returns the distinct GPU model ids of w's nodes with GPUs, in
// increasing order: the models a drawn gpu_spec may name (never a model
// that only pods name).
func nodeModels(w *sim.GPUWorkload) []int8 {
	var ms []int8
	for i := range w.Nodes {
		if n := &w.Nodes[i]; n.GPUs > 0 && !slices.Contains(ms, n.Model) {
			ms = append(ms, n.Model)
		}
	}
	slices.Sort(ms)
	return ms
}

// withSpecs returns w with a model constraint on a random share of its GPU
// pods (GPUConfig.SpecRate): each GPU pod without one gets, with
// probability rate, k of models (k uniform in 1..len(models)-1, or 1 with
// a single model; the models uniform without replacement). The draw uses
// its own stream of seed: the same seed gives the same constraints. w is
// not changed: the result has its own pod slice. rate 0, or no models,
// returns w itself.
func withSpecs(w *sim.GPUWorkload, models []int8, rate float64, seed uint64) *sim.GPUWorkload {
	if rate <= 0 || len(models) == 0 {
		return w
	}
	rng := rand.New(rand.NewPCG(seed, gpuSpecStream))
	out := *w
	out.Pods = slices.Clone(w.Pods)
	kmax := max(len(models)-1, 1)
	pick := slices.Clone(models)
	for i := range out.Pods {
		g := &out.Pods[i].GPU
		if g.Count == 0 || g.Models != 0 {
			continue
		}
		if rng.Float64() >= rate {
			continue
		}
		k := 1 + rng.IntN(kmax)
		// a partial Fisher-Yates shuffle: the first k of pick
		for j := range k {
			r := j + rng.IntN(len(pick)-j)
			pick[j], pick[r] = pick[r], pick[j]
		}
		var set sim.GPUModels
		for _, m := range pick[:k] {
			set |= 1 << uint(m)
		}
		g.Models = set
	}
	return &out
}
