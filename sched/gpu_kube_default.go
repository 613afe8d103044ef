package sched

import "github.com/kubesim/kubesim/sim"

// gpuKubeDefault is kube-scheduler's default resource scoring on a GPU
// workload: NodeResourcesFit's LeastAllocated plus
// NodeResourcesBalancedAllocation over CPU and memory (upstream's integer
// arithmetic, the same functions as kube-default), after the same filters
// as every GPU policy. It does not look at GPUs beyond the filter (GPUs are
// an extended resource upstream scores only when configured); the pod takes
// the default best-fit GPUs. The openb pods have no spreading constraints,
// so PodTopologySpread and the other default scores are constant and left
// out.
type gpuKubeDefault struct{ bestFitGPUs }

func (gpuKubeDefault) prepare(*sim.GPUCluster, int, *sim.GPUPodSpec) {}

func (gpuKubeDefault) score(c *sim.GPUCluster, i int, p *sim.GPUPodSpec) int64 {
	n := &c.Nodes[i]
	req := NonZeroRequests(sim.Resources{CPU: p.CPU, Mem: p.Mem})
	used := sim.Resources{CPU: n.CPUUsed + req.CPU, Mem: n.MemUsed + req.Mem}
	alloc := sim.Resources{CPU: n.CPU, Mem: n.Mem}
	return allocated2(false, used, alloc, [2]int64{1, 1}) + balanced2(used, alloc)
}
