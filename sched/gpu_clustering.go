package sched

import "github.com/kubesim/kubesim/sim"

// gpuClustering is the paper's GpuClustering policy (the artifact's
// GpuClusteringScore): pods go where GPU pods of the same kind already run
// (kinds: GPU share, k whole GPUs). With u = 25 x (8000 - free milli-GPU) /
// 8000 in integers, a GPU pod scores 75+u on a node whose GPU pods are all
// of its kind, 50+u on one that has its kind among others, 25+u on a node
// without GPU pods and u elsewhere; a CPU-only pod scores 0 everywhere (a
// random feasible node). GPUs: the default best-fit selection.
type gpuClustering struct{ bestFitGPUs }

func (gpuClustering) prepare(*sim.GPUCluster, int, *sim.GPUPodSpec) {}

func (gpuClustering) score(c *sim.GPUCluster, i int, p *sim.GPUPodSpec) int64 {
	t := sim.GPUTag(p.GPU)
	if t < 0 {
		return MinNodeScore
	}
	n := &c.Nodes[i]
	u := MaxNodeScore / 4 * (maxSpecGPU - n.GPU.TotalFree()) / maxSpecGPU
	kinds := n.TagCount()
	var s int64
	switch {
	case n.Tags[t] > 0 && kinds == 1:
		s = u + MaxNodeScore*3/4
	case n.Tags[t] > 0:
		s = u + MaxNodeScore*2/4
	case kinds == 0:
		s = u + MaxNodeScore/4
	default:
		s = u
	}
	return s
}
