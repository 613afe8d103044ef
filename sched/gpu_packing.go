package sched

import (
	"github.com/kubesim/kubesim/sim"
)

// gpuPacking is the paper's GpuPacking policy (the artifact's
// GpuPackingScore), three tiers: a node whose GPUs are all idle scores
// max(33 - idle, idle); a node where the pod would take an idle GPU
// (devices tried from the least free up) scores max(50 - idle GPUs taken,
// 33); a node where it fits on partly used GPUs scores max(100 - sum over
// those GPUs of their free percent / 10, 50), all in integers. So shares
// go to partly used GPUs first, then to partly used nodes, then to idle
// nodes. CPU-only pods score 0 everywhere. GPUs: the default best-fit
// selection.
type gpuPacking struct{ bestFitGPUs }

func (gpuPacking) prepare(*sim.GPUCluster, int, *sim.GPUPodSpec) {}

func (gpuPacking) score(c *sim.GPUCluster, i int, p *sim.GPUPodSpec) int64 {
	if p.GPU.Count == 0 {
		return MinNodeScore
	}
	g := &c.Nodes[i].GPU
	idle := int64(g.Idle())
	if idle == int64(g.N) {
		return max(MaxNodeScore/3-idle, idle)
	}
	// the devices the artifact tries: by free milli ascending, stable by index
	s := g.Sorted()
	var takeIdle, freePct int64
	need := int(p.GPU.Count)
	for d := sim.MaxGPUs - 1; d >= 0 && need > 0; d-- { // s is decreasing: walk it backwards
		if d >= int(g.N) {
			continue
		}
		if s[d] >= p.GPU.Milli {
			need--
			if s[d] == sim.GPUMilli {
				takeIdle++
			}
			freePct += int64(s[d]) * 100 / sim.GPUMilli
		}
	}
	if takeIdle > 0 {
		return max(MaxNodeScore/2-takeIdle, MaxNodeScore/3)
	}
	return max(MaxNodeScore-freePct/10, MaxNodeScore/2)
}
