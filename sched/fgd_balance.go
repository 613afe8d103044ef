package sched

import (
	"math"

	"github.com/kubesim/kubesim/sim"
)

// NameFGDBalance is FGD with a CPU-balance term (not in the paper).
const NameFGDBalance = "fgd-balance"

// BalanceWeight is fgd-balance's price of one GPU stranded by CPU, in
// FGD's score points (0..100): chosen on validation seeds of the default
// pod list (docs/ppo.md, "A CPU-balance term").
const BalanceWeight = 10

// fgdBalance is FGD's score minus a price on GPUs that a node's free CPU
// cannot serve. With r the CPU the workload's GPU pods ask per milli-GPU
// (over FGD's pod-type distribution), a node with free CPU c and free
// milli-GPU g strands max(0, g - c/r) milli-GPU: the GPUs left over once
// its CPU is spent at the typical ratio. The score is
//
//	max(0, FGD's score - round(BalanceWeight x (stranded after - stranded before) / 1000))
//
// in integers, so FGD's ties and its rank tie-break survive where the
// balance does not change (and scores stay non-negative: -1 means
// infeasible to GPUScoring's callers). FGD's own measure sees CPU only as a threshold
// per pod type (a type whose CPU does not fit counts the node's GPUs as
// fragmented); at 100% arrived on the default list about a third of the
// GPUs FGD leaves free sit on nodes with under 4 free CPUs. GPUs: FGD's.
type fgdBalance struct {
	fgd
	ratio float64 // CPU millicores per milli-GPU; 0: no GPU type
	types []sim.TypeShare
}

func (b *fgdBalance) prepare(c *sim.GPUCluster, pod int, p *sim.GPUPodSpec) {
	b.fgd.prepare(c, pod, p)
	if len(c.Types) > 0 && (len(b.types) == 0 || &b.types[0] != &c.Types[0]) {
		b.types, b.ratio = c.Types, cpuPerGPUMilli(c.Types)
	}
}

// cpuPerGPUMilli is the CPU the distribution's GPU types ask per
// milli-GPU, weighted by their shares; 0 without a GPU type.
func cpuPerGPUMilli(types []sim.TypeShare) float64 {
	var cpu, gpu float64
	for _, t := range types {
		if t.GPU.Count > 0 {
			cpu += t.P * float64(t.CPU)
			gpu += t.P * float64(t.GPU.Total())
		}
	}
	if gpu == 0 {
		return 0
	}
	return cpu / gpu
}

// stranded is the milli-GPU that free CPU cpu cannot serve at ratio r.
func stranded(cpu, gpu int64, r float64) float64 {
	return math.Max(0, float64(gpu)-float64(cpu)/r)
}

// strandedChange is the change in milli-GPU stranded by CPU on node i if
// p went there (after minus before); 0 while no ratio is known.
func (b *fgdBalance) strandedChange(c *sim.GPUCluster, i int, p *sim.GPUPodSpec) float64 {
	if b.ratio == 0 {
		return 0
	}
	n := &c.Nodes[i]
	return stranded(n.CPUFree()-p.CPU, n.GPU.TotalFree()-p.GPU.Total(), b.ratio) - stranded(n.CPUFree(), n.GPU.TotalFree(), b.ratio)
}

func (b *fgdBalance) score(c *sim.GPUCluster, i int, p *sim.GPUPodSpec) int64 {
	s := b.fgd.score(c, i, p)
	if b.ratio == 0 {
		return s
	}
	return max(0, s-int64(math.Round(BalanceWeight*b.strandedChange(c, i, p)/sim.GPUMilli)))
}

// NameFGDTiers is FGD's score in tiers, the CPU balance within a tier (not
// in the paper).
const NameFGDTiers = "fgd-tiers"

// TierWidth is fgd-tiers' tier, in FGD's score points: chosen on validation
// (docs/ppo.md, "FGD in tiers").
const TierWidth = 3

// fgdTiers ranks nodes by FGD's score divided by TierWidth (integer
// division), then, within a tier, by the change in GPUs stranded by CPU
// (fgdBalance's measure, fewer first), then by rank. Coarser FGD scores
// tie more often, and the rank's consistent tie-break consolidates; with
// pods constrained to GPU models FGD's fine score differences cost
// allocation (docs/ppo.md). Scores are tier x 2^20 + 2^19 - the change in
// stranded milli-GPU: non-negative, and not on FGD's 0..100 scale.
type fgdTiers struct {
	fgdBalance
}

// GPUScoresOnScale reports whether the named GPU policy's scores lie on
// kube-scheduler's 0..100 scale, as callers that normalise score values
// (env's prior) need: every policy but fgd-tiers and fgd-guard.
func GPUScoresOnScale(name string) bool { return name != NameFGDTiers && name != NameFGDGuard }

func (b *fgdTiers) score(c *sim.GPUCluster, i int, p *sim.GPUPodSpec) int64 {
	s := b.fgd.score(c, i, p)
	return (s/TierWidth)<<20 + 1<<19 - int64(math.Round(b.strandedChange(c, i, p)))
}
