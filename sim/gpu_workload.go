package sim

import (
	"fmt"
	"sort"
)

// GPUNodeSpec is a node of a GPU workload (an openb node list row).
type GPUNodeSpec struct {
	Name  string
	CPU   int64 // allocatable CPU, millicores
	Mem   int64 // allocatable memory, MiB
	GPUs  int8  // 0..MaxGPUs
	Model int8  // index into GPUWorkload.Models; -1 when GPUs == 0
}

// GPUPodSpec is a pod of a GPU workload (an openb pod list row). Pods of a
// GPU workload arrive in an order that the run decides (GPUOrder) and never
// leave, as in FGD's artifact.
type GPUPodSpec struct {
	Name string
	CPU  int64 // CPU request, millicores
	Mem  int64 // memory request, MiB
	GPU  GPURequest
}

// GPUWorkload is an openb cluster and pod list.
type GPUWorkload struct {
	Name   string
	Models []string // GPU model names, by id (nodes' models first, then models only pods name)
	Nodes  []GPUNodeSpec
	Pods   []GPUPodSpec
}

// MaxGPUModels is the most distinct GPU models a workload may name.
const MaxGPUModels = 32

// Validate checks the workload's invariants; the error names the node or pod.
func (w *GPUWorkload) Validate() error {
	if len(w.Models) > MaxGPUModels {
		return fmt.Errorf("gpu workload %s: %d GPU models, at most %d", w.Name, len(w.Models), MaxGPUModels)
	}
	if len(w.Nodes) == 0 {
		return fmt.Errorf("gpu workload %s: no nodes", w.Name)
	}
	for i := range w.Nodes {
		n := &w.Nodes[i]
		switch {
		case n.CPU <= 0 || n.Mem <= 0:
			return fmt.Errorf("gpu workload %s: node %d (%s): cpu %d and memory %d must be positive", w.Name, i, n.Name, n.CPU, n.Mem)
		case n.GPUs < 0 || n.GPUs > MaxGPUs:
			return fmt.Errorf("gpu workload %s: node %d (%s): %d GPUs, want 0..%d", w.Name, i, n.Name, n.GPUs, MaxGPUs)
		case n.GPUs > 0 && (n.Model < 0 || int(n.Model) >= len(w.Models)):
			return fmt.Errorf("gpu workload %s: node %d (%s): model id %d out of range", w.Name, i, n.Name, n.Model)
		}
	}
	for i := range w.Pods {
		p := &w.Pods[i]
		g := p.GPU
		switch {
		case p.CPU < 0 || p.Mem < 0:
			return fmt.Errorf("gpu workload %s: pod %d (%s): negative cpu %d or memory %d", w.Name, i, p.Name, p.CPU, p.Mem)
		case g.Count < 0 || g.Count > MaxGPUs:
			return fmt.Errorf("gpu workload %s: pod %d (%s): %d GPUs, want 0..%d", w.Name, i, p.Name, g.Count, MaxGPUs)
		case g.Count == 0 && g.Milli != 0:
			return fmt.Errorf("gpu workload %s: pod %d (%s): %d milli-GPU without a GPU", w.Name, i, p.Name, g.Milli)
		case g.Count > 0 && (g.Milli <= 0 || g.Milli > GPUMilli):
			return fmt.Errorf("gpu workload %s: pod %d (%s): %d milli per GPU, want 1..%d", w.Name, i, p.Name, g.Milli, GPUMilli)
		case g.Count > 1 && g.Milli != GPUMilli:
			return fmt.Errorf("gpu workload %s: pod %d (%s): %d GPUs of %d milli: only one GPU can be shared", w.Name, i, p.Name, g.Count, g.Milli)
		case len(w.Models) < MaxGPUModels && g.Models>>uint(len(w.Models)) != 0:
			return fmt.Errorf("gpu workload %s: pod %d (%s): model set names unknown model ids", w.Name, i, p.Name)
		}
	}
	return nil
}

// GPUCapacity returns the cluster's GPU count.
func (w *GPUWorkload) GPUCapacity() int64 {
	var n int64
	for i := range w.Nodes {
		n += int64(w.Nodes[i].GPUs)
	}
	return n
}

// GPUDemand returns the milli-GPU the pod list asks in all (each pod's
// GPURequest.Total, summed).
func (w *GPUWorkload) GPUDemand() int64 {
	var d int64
	for i := range w.Pods {
		d += w.Pods[i].GPU.Total()
	}
	return d
}

// PodType is what FGD's artifact keys a pod's shape by: its CPU request and
// its GPU request (count, milli, model constraint). Memory is not part of it.
type PodType struct {
	CPU int64
	GPU GPURequest
}

// Type returns the pod's type.
func (p *GPUPodSpec) Type() PodType { return PodType{CPU: p.CPU, GPU: p.GPU} }

// PodTypes assigns each pod a dense type id, in order of first appearance,
// and returns the ids and the types.
func (w *GPUWorkload) PodTypes() (ids []int32, types []PodType) {
	seen := make(map[PodType]int32)
	ids = make([]int32, len(w.Pods))
	for i := range w.Pods {
		t := w.Pods[i].Type()
		id, ok := seen[t]
		if !ok {
			id = int32(len(types))
			seen[t] = id
			types = append(types, t)
		}
		ids[i] = id
	}
	return ids, types
}

// TypeShare is a pod type with its share of the workload.
type TypeShare struct {
	PodType
	P float64
}

// TypicalPods returns the workload's pod-type distribution as FGD's
// artifact builds it: types by decreasing count (ties: larger CPU, then
// larger milli-GPU, GPU count, model set first), taken one at a time until
// they cover at least threshold of the pods (the artifact runs with 0.95),
// then renormalised to sum to 1. Every pod counts, CPU-only pods included.
func TypicalPods(pods []GPUPodSpec, threshold float64) []TypeShare {
	count := make(map[PodType]int)
	for i := range pods {
		count[pods[i].Type()]++
	}
	ts := make([]TypeShare, 0, len(count))
	for t, n := range count {
		ts = append(ts, TypeShare{PodType: t, P: float64(n)})
	}
	sort.Slice(ts, func(i, j int) bool {
		a, b := ts[i], ts[j]
		if a.P != b.P {
			return a.P > b.P
		}
		if a.CPU != b.CPU {
			return a.CPU > b.CPU
		}
		if a.GPU.Milli != b.GPU.Milli {
			return a.GPU.Milli > b.GPU.Milli
		}
		if a.GPU.Count != b.GPU.Count {
			return a.GPU.Count > b.GPU.Count
		}
		return a.GPU.Models > b.GPU.Models
	})
	total := float64(len(pods))
	var cum float64
	k := 0
	for k < len(ts) && cum < threshold*total {
		cum += ts[k].P
		k++
	}
	ts = ts[:k]
	for i := range ts {
		ts[i].P /= cum
	}
	return ts
}
