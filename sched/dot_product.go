package sched

import "github.com/kubesim/kubesim/sim"

// Normalisers of the artifact's scores: the largest node it models.
const (
	maxSpecCPU = 128000 // millicores
	maxSpecGPU = 8000   // milli-GPU
)

// dotProduct is the paper's DotProd policy (the artifact's
// DotProductScore with dimExtMethod "merge" and normMethod "max"): the
// node's free (CPU, total milli-GPU) and the pod's request, each divided by
// the largest node's (128 CPUs, 8 GPUs), score 100 x (1 - dot/2) truncated,
// so the node whose free resources align least with the request wins. GPUs:
// the default best-fit selection.
type dotProduct struct{ bestFitGPUs }

func (dotProduct) prepare(*sim.GPUCluster, int, *sim.GPUPodSpec) {}

func (dotProduct) score(c *sim.GPUCluster, i int, p *sim.GPUPodSpec) int64 {
	n := &c.Nodes[i]
	dot := float64(n.CPUFree())/maxSpecCPU*(float64(p.CPU)/maxSpecCPU) +
		float64(n.GPU.TotalFree())/maxSpecGPU*(float64(p.GPU.Total())/maxSpecGPU)
	s := 1 - dot/2
	return int64(float64(MaxNodeScore) * s)
}
