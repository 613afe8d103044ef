package sched

import "github.com/kubesim/kubesim/sim"

// gpuBestFit is the paper's BestFit policy (the artifact's BestFitScore):
// the node with the least free resources left after the pod, as a weighted
// sum over CPU and GPU (weights 1/2 each, normalised by the largest node:
// 128 CPUs, 8 GPUs), score 100 x (1 - sum) truncated. The artifact then
// rescales the scores of the feasible nodes to 0..100 (min-max), which
// keeps the set of best nodes, so the rescaling is left out. Memory is not
// part of the sum, as in the artifact. GPUs: the default best-fit
// selection.
type gpuBestFit struct{ bestFitGPUs }

func (gpuBestFit) prepare(*sim.GPUCluster, int, *sim.GPUPodSpec) {}

func (gpuBestFit) score(c *sim.GPUCluster, i int, p *sim.GPUPodSpec) int64 {
	n := &c.Nodes[i]
	left := float64(n.CPUFree()-p.CPU)/maxSpecCPU*0.5 +
		float64(n.GPU.TotalFree()-p.GPU.Total())/maxSpecGPU*0.5
	return int64((1 - left) * float64(MaxNodeScore))
}
