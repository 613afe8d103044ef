package env

import (
	"github.com/kubesim/kubesim/sim"
)

// Pod feature columns of a GPUEnv observation (Obs.Pod). Only what a
// scheduler knows when the pod arrives: its request, the cluster, and the
// pods that arrived before it (FGD learns its pod-type distribution from
// the workload; the history here is what has arrived so far).
const (
	GPUPodCPU        = iota // CPU request / GPURefCPU
	GPUPodMem               // memory request / GPURefMem
	GPUPodCount             // GPUs / MaxGPUs
	GPUPodMilli             // milli per GPU / 1000 (0 for a CPU-only pod)
	GPUPodShare             // 1 for a share of one GPU
	GPUPodModels            // 1 when the pod names GPU models (gpu_spec)
	GPUPodModelNodes        // share of the cluster's GPU nodes whose model the pod allows
	GPUPodArrived           // GPU demand arrived so far / capacity
	GPUPodAlloc             // GPUs allocated now / capacity
	GPUPodTypeFreq          // share of the arrived pods of this pod's type (sim.PodType)
	// GPUPodMixCPU .. GPUPodMixWhole8: shares of the arrived pods that are
	// CPU-only, shares of at most 500 milli, shares above 500, one whole
	// GPU, 2-4 whole GPUs, more than 4 whole GPUs.
	GPUPodMixCPU
	GPUPodMixSmall
	GPUPodMixLarge
	GPUPodMixWhole1
	GPUPodMixWhole4
	GPUPodMixWhole8
	GPUPodFeatures // number of pod features
)

// Node feature columns of a GPUEnv observation (rows of Obs.Nodes).
const (
	GPUNodeCPUFree = iota // free CPU / allocatable
	GPUNodeMemFree        // free memory / allocatable
	GPUNodeCPUSize        // allocatable CPU / GPURefCPU
	GPUNodeMemSize        // allocatable memory / GPURefMem
	// GPUNodeFree0 .. GPUNodeFree0+7: each GPU's free milli / 1000, in
	// decreasing order (sim.GPUs.Sorted), 0 for devices the node lacks.
	GPUNodeFree0
)

// Node feature columns after the free milli of the devices.
const (
	GPUNodeGPUs     = GPUNodeFree0 + sim.MaxGPUs + iota // devices / MaxGPUs
	GPUNodeIdle                                         // idle devices / MaxGPUs
	GPUNodeModelOK                                      // 1 when the pod's model constraint allows the node (a node without GPUs fails any constraint)
	GPUNodeFits                                         // 1 when the pod fits (equals Mask[i])
	GPUNodeFrag                                         // FGD's fragmentation of the node (sim.GPUFrag over the workload's pod types) / (1000 x MaxGPUs)
	GPUNodeFeatures                                     // number of node features
	// GPUNodePinned, only with GPUConfig.ObsPinned (an 18th column): the
	// GPU demand of the pods decided so far that a gpu_spec confines to
	// some of the cluster's models, not all, and that allow the node's
	// model (GPUEnv.PinnedArrived), over that model's GPU capacity; 0 for
	// a node without GPUs.
	GPUNodePinned = GPUNodeFeatures
)

// Reference sizes of the GPU features: the largest openb node has 128 CPUs
// and 1 TiB of memory.
const (
	GPURefCPU = 128000
	GPURefMem = 1 << 20
)

// gpuMix is the history class of a request (GPUPodMix*, from 0): CPU-only,
// then sim.GPUShapeOf's five shapes.
func gpuMix(r sim.GPURequest) int { return sim.GPUShapeOf(r) + 1 }

// gpuHistory counts the arrived pods by type and by mix class.
type gpuHistory struct {
	n     int
	types []int32 // per pod-type id
	mix   [6]int32
}

func (h *gpuHistory) reset(numTypes int) {
	h.n = 0
	h.types = append(h.types[:0], make([]int32, numTypes)...)
	h.mix = [6]int32{}
}

func (h *gpuHistory) add(typ int32, r sim.GPURequest) {
	h.n++
	h.types[typ]++
	h.mix[gpuMix(r)]++
}

// gpuEncoder writes GPU observations; it caches each node's fragmentation
// until the node changes (sim.GPUNode.Gen).
type gpuEncoder struct {
	fragGen []uint32 // Gen+1 the cached fragmentation is for (0: none)
	frag    []float64
}

func (e *gpuEncoder) reset(n int) {
	e.fragGen = append(e.fragGen[:0], make([]uint32, n)...)
	e.frag = append(e.frag[:0], make([]float64, n)...)
}

// encode writes the observation of pod p (type typ) arriving on c into o;
// alloc, arrived and capacity are milli-GPU; modelNodes is the share of GPU
// nodes the pod's model constraint allows; pinned, when not nil, is the
// GPUNodePinned value of each model id (and the rows then have
// GPUNodeFeatures+1 columns).
func (e *gpuEncoder) encode(o *Obs, c *sim.GPUCluster, p *sim.GPUPodSpec, typ int32, h *gpuHistory, alloc, arrived, capMilli int64, modelNodes float64, pinned []float64) {
	n := len(c.Nodes)
	width := GPUNodeFeatures
	if pinned != nil {
		width++
	}
	o.N = n
	o.Pod = grow(o.Pod, GPUPodFeatures)
	o.Nodes = grow(o.Nodes, n*width)
	o.Domain = grow(o.Domain, n)
	o.Mask = grow(o.Mask, n+1)
	pod := o.Pod
	clear(pod)
	g := p.GPU
	pod[GPUPodCPU] = float64(p.CPU) / GPURefCPU
	pod[GPUPodMem] = float64(p.Mem) / GPURefMem
	pod[GPUPodCount] = float64(g.Count) / sim.MaxGPUs
	pod[GPUPodMilli] = float64(g.Milli) / sim.GPUMilli
	if g.Share() {
		pod[GPUPodShare] = 1
	}
	if g.Models != 0 {
		pod[GPUPodModels] = 1
	}
	pod[GPUPodModelNodes] = modelNodes
	pod[GPUPodArrived] = float64(arrived) / float64(capMilli)
	pod[GPUPodAlloc] = float64(alloc) / float64(capMilli)
	if h.n > 0 {
		pod[GPUPodTypeFreq] = float64(h.types[typ]) / float64(h.n)
		for k, v := range h.mix {
			pod[GPUPodMixCPU+k] = float64(v) / float64(h.n)
		}
	}
	for i := range c.Nodes {
		nd := &c.Nodes[i]
		row := o.Nodes[i*width : (i+1)*width]
		row[GPUNodeCPUFree] = float64(nd.CPU-nd.CPUUsed) / float64(nd.CPU)
		row[GPUNodeMemFree] = float64(nd.Mem-nd.MemUsed) / float64(nd.Mem)
		row[GPUNodeCPUSize] = float64(nd.CPU) / GPURefCPU
		row[GPUNodeMemSize] = float64(nd.Mem) / GPURefMem
		s := nd.GPU.Sorted()
		for d, f := range s {
			row[GPUNodeFree0+d] = float64(f) / sim.GPUMilli
		}
		row[GPUNodeGPUs] = float64(nd.GPU.N) / sim.MaxGPUs
		row[GPUNodeIdle] = float64(nd.GPU.Idle()) / sim.MaxGPUs
		row[GPUNodeModelOK] = 0
		if nd.GPU.N > 0 && g.Models.Allows(nd.GPU.Model) {
			row[GPUNodeModelOK] = 1
		}
		fits := nd.Fits(p)
		o.Mask[i] = fits
		row[GPUNodeFits] = 0
		if fits {
			row[GPUNodeFits] = 1
		}
		if e.fragGen[i] != nd.Gen+1 {
			e.fragGen[i], e.frag[i] = nd.Gen+1, sim.GPUFrag(nd.CPUFree(), &nd.GPU, c.Types)
		}
		row[GPUNodeFrag] = e.frag[i] / (sim.GPUMilli * sim.MaxGPUs)
		if pinned != nil {
			row[GPUNodePinned] = 0
			if nd.GPU.N > 0 {
				row[GPUNodePinned] = pinned[nd.GPU.Model]
			}
		}
		o.Domain[i] = int32(nd.GPU.Model) // nodes of one GPU model are neighbours; -1 without GPUs
	}
	o.Mask[n] = true
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
