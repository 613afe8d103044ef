package sched

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/kubesim/kubesim/sim"
)

// The policies of FGD's paper (Weng et al., ATC'23) for GPU workloads
// (sim.RunGPU), scored as the paper's artifact scores them, with
// kube-default beside them. They live in their own registry (NewGPU,
// GPUNames) because they place pods of a sim.GPUWorkload, not the event
// engine's pods: "random" and "best-fit" there are the paper's GPU-aware
// policies and leave the CPU/memory schedulers of the same names (New)
// untouched. docs/gpu.md lists every difference from the artifact.

// GPU scheduler names accepted by NewGPU, in the paper's order.
const (
	NameDotProduct    = "dot-product"
	NameGPUClustering = "gpu-clustering"
	NameGPUPacking    = "gpu-packing"
	NameFGD           = "fgd"
)

// gpuRegistry lists NewGPU's schedulers in the order "all" runs them.
var gpuRegistry = [...]struct {
	name  string
	build func(seed uint64) gpuScorer
}{
	{NameRandom, func(seed uint64) gpuScorer { return &gpuRandom{rng: newGPURand(seed, 1)} }},
	{NameDotProduct, func(uint64) gpuScorer { return dotProduct{} }},
	{NameGPUClustering, func(uint64) gpuScorer { return gpuClustering{} }},
	{NameGPUPacking, func(uint64) gpuScorer { return gpuPacking{} }},
	{NameBestFit, func(uint64) gpuScorer { return gpuBestFit{} }},
	{NameFGD, func(uint64) gpuScorer { return &fgd{} }},
	{NameKubeDefault, func(uint64) gpuScorer { return gpuKubeDefault{} }},
	{NameFGDBalance, func(uint64) gpuScorer { return &fgdBalance{} }},
	{NameFGDTiers, func(uint64) gpuScorer { return &fgdTiers{} }},
	{NameFGDGuard, func(uint64) gpuScorer { return &fgdGuard{} }},
}

// GPUNames returns the names NewGPU accepts, in the paper's order
// (random, dot-product, gpu-clustering, gpu-packing, best-fit, fgd), then
// kube-default, fgd-balance (FGD with a CPU-balance term), fgd-tiers
// (FGD's score in tiers, the balance within a tier) and fgd-guard
// (fgd-tiers that keeps scarce fits).
func GPUNames() []string {
	names := make([]string, len(gpuRegistry))
	for i, e := range gpuRegistry {
		names[i] = e.name
	}
	return names
}

// NewGPU returns a fresh instance of the named GPU scheduler whose random
// choices (the random policy's) draw from seed. An unknown name gives an error that wraps ErrUnknownScheduler.
// A name may add the reserve admission rule to any of them,
// "NAME@reservePCT" (gpu_reserve.go); those names are not in GPUNames.
func NewGPU(name string, seed uint64) (sim.GPUScheduler, error) {
	if s, ok, err := newGPUReserve(name, seed); ok {
		return s, err
	}
	for _, e := range gpuRegistry {
		if e.name == name {
			return &gpuFramework{name: name, score: e.build(seed)}, nil
		}
	}
	return nil, fmt.Errorf("%w %q (valid GPU schedulers: %s)", ErrUnknownScheduler, name, strings.Join(GPUNames(), ", "))
}

func newGPURand(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x67707573636864+stream)) // "gpuschd"
}

// gpuScorer scores one feasible node for a pod, on kube-scheduler's 0..100
// scale; gpus names the GPUs the pod takes on the chosen node (the
// artifact's GPU selection of the policy: Reserve runs it on the winner
// only). prepare runs once per decision before the nodes are scored.
type gpuScorer interface {
	prepare(c *sim.GPUCluster, pod int, p *sim.GPUPodSpec)
	score(c *sim.GPUCluster, i int, p *sim.GPUPodSpec) int64
	gpus(c *sim.GPUCluster, i int, p *sim.GPUPodSpec) sim.GPUMask
}

// bestFitGPUs is the artifact's default GPU selection ("best"), for the
// policies that do not select GPUs their own way.
type bestFitGPUs struct{}

func (bestFitGPUs) gpus(c *sim.GPUCluster, i int, p *sim.GPUPodSpec) sim.GPUMask {
	return c.Nodes[i].GPU.BestFit(p.GPU)
}

// gpuFramework is kube-scheduler's cycle as the artifact runs it: every
// node that passes the filters (sim.GPUNode.Fits) is scored, the highest
// score wins, ties go to the node of lowest rank (sim.GPUCluster.Rank: the
// artifact patches upstream's selectHost, which draws uniformly among
// ties, to take the smallest node name, and names nodes by a seeded
// permutation), and the winner's GPUs are those the policy selects there.
type gpuFramework struct {
	name  string
	score gpuScorer
}

func (f *gpuFramework) Name() string { return f.name }

func (f *gpuFramework) Schedule(c *sim.GPUCluster, pod int, p *sim.GPUPodSpec) (int, sim.GPUMask) {
	f.score.prepare(c, pod, p)
	best, bestScore := -1, int64(-1)
	for i := range c.Nodes {
		if !c.Nodes[i].Fits(p) {
			continue
		}
		s := f.score.score(c, i, p)
		if s > bestScore || s == bestScore && c.Rank[i] < c.Rank[best] {
			best, bestScore = i, s
		}
	}
	if best < 0 {
		return -1, 0
	}
	return best, f.score.gpus(c, best, p)
}
