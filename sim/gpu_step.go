package sim

import (
	"fmt"
	"math"
)

const curveBins = 256 // arrived % bins recorded (beyond: ignored)

// GPUStep advances a GPU run one pod decision at a time, so that a policy
// outside the GPUScheduler interface (a learned one, an environment) can
// choose each pod's node. RunGPU is a loop over it:
//
//	st, _ := NewGPUStep(w, c, name, order)
//	for !st.Done() {
//		k, p := st.Pod()          // the pod that arrives now
//		node, gpus := decide(...) // -1: the pod fails
//		if err := st.Decide(node, gpus); err != nil { ... }
//	}
//	res := st.Result()
//
// It records, after each pod, the allocated milli-GPU and the cluster's
// fragmentation against the arrived demand, and bins them as RunGPU
// documents. The cluster is modified in place.
type GPUStep struct {
	w        *GPUWorkload
	c        *GPUCluster
	order    []int32
	pos      int
	name     string
	capMilli int64
	pct      float64
	nodeFrag []float64
	fragSum  float64
	free     int64
	arrived  int64
	allocSum [curveBins]float64
	fragBin  [curveBins]float64
	cnt      [curveBins]int32
	res      GPUResult
	// failed is the GPU demand (milli) of the pods failed before the
	// snapshot, by shape; waste is the snapshot (GPUWaste), taken once.
	failed [GPUShapes]int64
	waste  *GPUWaste
}

// NewGPUStep starts a run of the pods of order (indices into w.Pods) on c,
// a cluster of w (NewGPUCluster), for the scheduler named name (the
// result's row). A cluster without GPUs, or an order naming a pod w lacks,
// is an error.
func NewGPUStep(w *GPUWorkload, c *GPUCluster, name string, order []int32) (*GPUStep, error) {
	capMilli := w.GPUCapacity() * GPUMilli
	st := &GPUStep{w: w, c: c, order: order, name: name, capMilli: capMilli,
		res: GPUResult{Scheduler: name, Pods: len(order), GPUs: w.GPUCapacity()}}
	if capMilli == 0 {
		return nil, fmt.Errorf("gpu run %s: the cluster has no GPU", w.Name)
	}
	if len(c.Nodes) != len(w.Nodes) {
		return nil, fmt.Errorf("gpu run %s: cluster of %d nodes, workload of %d", w.Name, len(c.Nodes), len(w.Nodes))
	}
	for i, k := range order {
		if k < 0 || int(k) >= len(w.Pods) {
			return nil, fmt.Errorf("gpu run %s: arrival %d names pod %d of %d", w.Name, i, k, len(w.Pods))
		}
	}
	st.pct = 100 / float64(capMilli)
	st.nodeFrag = make([]float64, len(c.Nodes))
	for i := range c.Nodes {
		st.nodeFrag[i] = GPUFrag(c.Nodes[i].CPUFree(), &c.Nodes[i].GPU, c.Types)
		st.fragSum += st.nodeFrag[i]
		st.free += c.Nodes[i].GPU.TotalFree()
	}
	return st, nil
}

// Done reports whether every pod has arrived and been decided.
func (st *GPUStep) Done() bool { return st.pos >= len(st.order) }

// Pod returns the pod that arrives now: its index in the workload's pods
// and its spec. It must not be called when Done.
func (st *GPUStep) Pod() (int, *GPUPodSpec) {
	k := st.order[st.pos]
	return int(k), &st.w.Pods[k]
}

// Cluster returns the cluster the run places pods on (read-only for
// callers).
func (st *GPUStep) Cluster() *GPUCluster { return st.c }

// Arrived returns the pods decided so far.
func (st *GPUStep) Arrived() int { return st.pos }

// Order returns the arrival order (read-only).
func (st *GPUStep) Order() []int32 { return st.order }

// AllocatedMilli returns the milli-GPU allocated now.
func (st *GPUStep) AllocatedMilli() int64 { return st.capMilli - st.free }

// ArrivedMilli returns the GPU demand arrived so far, decided pods only.
func (st *GPUStep) ArrivedMilli() int64 { return st.arrived }

// CapacityMilli returns the cluster's milli-GPU.
func (st *GPUStep) CapacityMilli() int64 { return st.capMilli }

// Decide places the current pod on node taking gpus there, or fails it
// when node is -1, records the cluster's state and moves to the next pod.
// A node the pod does not fit (or devices it cannot take) is an error, and
// the pod stays current.
func (st *GPUStep) Decide(node int, gpus GPUMask) error {
	if st.Done() {
		return fmt.Errorf("gpu run %s: decision after the last pod", st.w.Name)
	}
	_, p := st.Pod()
	c := st.c
	if node < 0 {
		st.res.Failed++
		if k := GPUShapeOf(p.GPU); k >= 0 && st.waste == nil {
			st.failed[k] += p.GPU.Total()
		}
	} else {
		if node >= len(c.Nodes) {
			return fmt.Errorf("gpu run %s: scheduler %s put pod %s on node %d of %d", st.w.Name, st.name, p.Name, node, len(c.Nodes))
		}
		before := c.Nodes[node].GPU.TotalFree()
		if !c.Place(node, p, gpus) {
			return fmt.Errorf("gpu run %s: scheduler %s put pod %s on node %d (GPUs %08b), where it does not fit", st.w.Name, st.name, p.Name, node, gpus)
		}
		st.res.Placed++
		n := &c.Nodes[node]
		st.free -= before - n.GPU.TotalFree()
		f := GPUFrag(n.CPUFree(), &n.GPU, c.Types)
		st.fragSum += f - st.nodeFrag[node]
		st.nodeFrag[node] = f
	}
	st.arrived += p.GPU.Total()
	if st.waste == nil && st.arrived >= st.capMilli {
		st.waste = st.snapshot()
	}
	bin := math.RoundToEven(float64(st.arrived) * st.pct)
	if bin < curveBins {
		b := int(bin)
		st.allocSum[b] += float64(st.capMilli-st.free) * st.pct
		st.fragBin[b] += st.fragSum * st.pct
		st.cnt[b]++
	}
	st.pos++
	return nil
}

// Result returns the run's result: the counts so far and, when Done, the
// curves (RunGPU's binning); before that the curves are nil.
func (st *GPUStep) Result() GPUResult {
	res := st.res
	if !st.Done() {
		return res
	}
	res.Waste = st.waste
	if res.Waste == nil {
		res.Waste = st.snapshot() // the run never reached 100% arrived: at its end
	}
	res.ArrivedPct = float64(st.arrived) * st.pct
	res.AllocPct = float64(st.capMilli-st.free) * st.pct
	res.AllocCurve = make(Curve, CurvePoints)
	res.FragCurve = make(Curve, CurvePoints)
	for k := range CurvePoints {
		var a, f float64
		var n int32
		if st.cnt[k] > 0 {
			a, f, n = st.allocSum[k], st.fragBin[k], st.cnt[k]
		} else {
			for j := max(k-1, 0); j <= k+1; j++ {
				a, f, n = a+st.allocSum[j], f+st.fragBin[j], n+st.cnt[j]
			}
		}
		if n == 0 {
			res.AllocCurve[k], res.FragCurve[k] = math.NaN(), math.NaN()
			continue
		}
		res.AllocCurve[k], res.FragCurve[k] = a/float64(n), f/float64(n)
	}
	return res
}

// snapshot is the run's GPUWaste now.
func (st *GPUStep) snapshot() *GPUWaste {
	w := &GPUWaste{ArrivedPct: float64(st.arrived) * st.pct, AllocPct: float64(st.capMilli-st.free) * st.pct}
	for k, m := range st.failed {
		w.Failed[k] = float64(m) * st.pct
	}
	i, p, c, s := GPUFreeCauses(st.c)
	w.FreeIdle, w.FreePartial, w.FreeCPU, w.FreeShape = float64(i)*st.pct, float64(p)*st.pct, float64(c)*st.pct, float64(s)*st.pct
	return w
}
