package sim

// GPUShapes is the number of GPU request shapes GPUWaste.Failed splits
// failed demand into (GPUShapeOf).
const GPUShapes = 5

// GPUShapeNames names the shapes of GPUShapeOf, in order.
var GPUShapeNames = [GPUShapes]string{"share<=500", "share>500", "1 GPU", "2-4 GPUs", "5-8 GPUs"}

// GPUShapeOf is the shape class of a GPU request: 0 a share of at most half
// a GPU, 1 a larger share, 2 one whole GPU, 3 two to four, 4 more; -1 for
// a pod without GPUs.
func GPUShapeOf(r GPURequest) int {
	switch {
	case r.Count == 0:
		return -1
	case r.Share() && r.Milli <= GPUMilli/2:
		return 0
	case r.Share():
		return 1
	case r.Count == 1:
		return 2
	case r.Count <= 4:
		return 3
	}
	return 4
}

// GPUWaste is where a run's unallocated GPUs are when its arrived GPU
// demand first reaches the cluster's GPU capacity (100% arrived; at the
// end of the run when it never does), all in percent of the GPU capacity:
//   - Failed, the GPU demand of the pods that failed before then, by shape
//     (GPUShapeOf);
//   - the free milli-GPU (100 - AllocPct), each device's free milli
//     counted once, by why the workload's typical pod types (the
//     distribution FGD's measure uses) cannot use it:
//     FreeIdle and FreePartial, some GPU type fits the device, the node's
//     other devices, its model and its free CPU: an idle device, or what
//     is left of a device that pods share;
//     FreeCPU, not usable, but a type would be without its CPU request:
//     the node's CPU has run out before its GPUs;
//     FreeShape, no GPU type fits even with CPU to spare: slivers smaller
//     than any type's share, or a model that no type allows.
//
// Memory is not read, as in FGD's measure (GPUFrag). Pods of atypical types
// (the 5% the distribution leaves out) may still fit FreeCPU or FreeShape
// milli.
type GPUWaste struct {
	ArrivedPct  float64            `json:"arrived_pct"`
	AllocPct    float64            `json:"alloc_pct"`
	Failed      [GPUShapes]float64 `json:"failed_pct"`
	FreeIdle    float64            `json:"free_idle_pct"`
	FreePartial float64            `json:"free_partial_pct"`
	FreeCPU     float64            `json:"free_cpu_pct"`
	FreeShape   float64            `json:"free_shape_pct"`
}

// FailedPct is the failed GPU demand of every shape.
func (w *GPUWaste) FailedPct() float64 {
	var s float64
	for _, v := range w.Failed {
		s += v
	}
	return s
}

// Add adds o to w, field by field (for means over runs).
func (w *GPUWaste) Add(o *GPUWaste) {
	w.ArrivedPct += o.ArrivedPct
	w.AllocPct += o.AllocPct
	for k := range w.Failed {
		w.Failed[k] += o.Failed[k]
	}
	w.FreeIdle += o.FreeIdle
	w.FreePartial += o.FreePartial
	w.FreeCPU += o.FreeCPU
	w.FreeShape += o.FreeShape
}

// Scale multiplies every field by f.
func (w *GPUWaste) Scale(f float64) {
	w.ArrivedPct *= f
	w.AllocPct *= f
	for k := range w.Failed {
		w.Failed[k] *= f
	}
	w.FreeIdle *= f
	w.FreePartial *= f
	w.FreeCPU *= f
	w.FreeShape *= f
}

// GPUFreeCauses splits the free milli-GPU of c by cause (GPUWaste's
// FreeIdle, FreePartial, FreeCPU and FreeShape, in milli-GPU) against the
// GPU types of c.Types.
func GPUFreeCauses(c *GPUCluster) (idle, partial, cpu, shape int64) {
	for i := range c.Nodes {
		n := &c.Nodes[i]
		g := &n.GPU
		if g.TotalFree() == 0 {
			continue
		}
		cpuFree := n.CPUFree()
		for d := range g.N {
			f := g.Free[d]
			if f == 0 {
				continue
			}
			use, withCPU := false, false
			for k := range c.Types {
				r := c.Types[k].GPU
				if r.Count == 0 || f < r.Milli || !g.Fits(r) {
					continue
				}
				withCPU = true
				if cpuFree >= c.Types[k].CPU {
					use = true
					break
				}
			}
			switch {
			case use && f == GPUMilli:
				idle += int64(f)
			case use:
				partial += int64(f)
			case withCPU:
				cpu += int64(f)
			default:
				shape += int64(f)
			}
		}
	}
	return idle, partial, cpu, shape
}
