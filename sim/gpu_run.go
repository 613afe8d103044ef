package sim

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
)

// GPUNode is the state of one node in a GPU run. Schedulers read it through
// GPUCluster.Nodes and must not modify it.
type GPUNode struct {
	CPU, Mem         int64 // allocatable
	CPUUsed, MemUsed int64 // summed requests of the pods placed on it
	GPU              GPUs
	Pods             int32
	// Tags counts the node's GPU pods by the artifact's GPU-affinity tag
	// (gpu-clustering): index 0 for GPU-sharing pods, k for pods of k whole
	// GPUs.
	Tags [MaxGPUs + 1]int32
	// Gen is bumped whenever the node changes, so a scheduler can cache
	// what it computed for a node until the node changes.
	Gen uint32
}

// CPUFree returns the node's free CPU.
func (n *GPUNode) CPUFree() int64 { return n.CPU - n.CPUUsed }

// Fits reports whether p passes the hard filters on n: CPU and memory
// (kube-scheduler's NodeResourcesFit) and the GPU count, share and model
// (the artifact's Open-Gpu-Share filter).
func (n *GPUNode) Fits(p *GPUPodSpec) bool {
	return p.CPU <= n.CPU-n.CPUUsed && p.Mem <= n.Mem-n.MemUsed && n.GPU.Fits(p.GPU)
}

// TagCount returns the number of distinct affinity tags on the node.
func (n *GPUNode) TagCount() int {
	k := 0
	for _, c := range n.Tags {
		if c > 0 {
			k++
		}
	}
	return k
}

// GPUTag returns the artifact's affinity tag index of a GPU request (see
// GPUNode.Tags), or -1 for a CPU-only request.
func GPUTag(r GPURequest) int {
	switch {
	case r.Count == 0:
		return -1
	case r.Share():
		return 0
	default:
		return int(r.Count)
	}
}

// GPUCluster is the read-only view a GPUScheduler gets.
type GPUCluster struct {
	Nodes []GPUNode
	// Types is the workload's pod-type distribution (TypicalPods with the
	// artifact's 95% threshold), the input of FGD's measure.
	Types []TypeShare
	// TypeOf is the dense pod-type id of each workload pod (PodTypes), for
	// schedulers that cache per (node state, pod type).
	TypeOf []int32
	// NumTypes is the number of distinct pod-type ids.
	NumTypes int
	// Rank orders the nodes for tie-breaks: among nodes of equal score a
	// scheduler takes the one of lowest rank. The artifact prefixes node
	// names with a permutation drawn from the run's seed and its
	// kube-scheduler (patched) picks the smallest name among the best; a
	// run draws Rank the same way (GPUArrivals).
	Rank []int32
}

// GPUScheduler places one pod of a GPU run: it returns an index into
// c.Nodes and the GPUs the pod takes there, or -1 when the pod fits
// nowhere. pod is the index of p in the workload's pods. It must not modify
// c or p.
type GPUScheduler interface {
	Name() string
	Schedule(c *GPUCluster, pod int, p *GPUPodSpec) (node int, gpus GPUMask)
}

// GPURunConfig is the experiment of FGD's artifact.
type GPURunConfig struct {
	// Inflate is the target of arrived GPU demand as a multiple of the
	// cluster's GPU capacity (the artifact's tuning ratio, 1.3); 0 keeps
	// the pod list as it is.
	Inflate float64
	// Seed drives the arrival order, the clones and the tie-break ranks (GPUArrivals); schedulers
	// have their own seeds.
	Seed uint64
}

// CurvePoints is the number of points of the curves: arrived workload
// 0..130% of GPU capacity in 1% steps.
const CurvePoints = 131

// Curve is a curve over arrived workload (index k = k% of GPU capacity), in
// percent; NaN where the run has no sample near k (JSON null).
type Curve []float64

// MarshalJSON writes NaN as null.
func (c Curve) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 8*len(c)+2)
	b = append(b, '[')
	for i, v := range c {
		if i > 0 {
			b = append(b, ',')
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			b = append(b, "null"...)
		} else {
			b = strconv.AppendFloat(b, v, 'f', 4, 64)
		}
	}
	return append(b, ']'), nil
}

// UnmarshalJSON reads null as NaN.
func (c *Curve) UnmarshalJSON(b []byte) error {
	var v []*float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*c = make(Curve, len(v))
	for i, p := range v {
		if p == nil {
			(*c)[i] = math.NaN()
		} else {
			(*c)[i] = *p
		}
	}
	return nil
}

// GPUResult is the outcome of one GPU run.
type GPUResult struct {
	Scheduler string `json:"scheduler"`
	Pods      int    `json:"pods"`   // pods that arrived (originals and clones)
	Placed    int    `json:"placed"` // pods placed
	Failed    int    `json:"failed"` // pods that fit nowhere
	GPUs      int64  `json:"gpus"`   // cluster GPU capacity
	// ArrivedPct is the arrived GPU demand at the end, % of capacity.
	ArrivedPct float64 `json:"arrived_pct"`
	// AllocPct is the allocated milli-GPU at the end, % of capacity.
	AllocPct float64 `json:"alloc_pct"`
	// AllocCurve and FragCurve: GPU allocation and FGD's GPU fragmentation
	// (GPUFrag summed over nodes), % of capacity, against arrived GPU
	// demand k = 0..130% (see RunGPU for the binning).
	AllocCurve Curve `json:"gpu_alloc_curve"`
	FragCurve  Curve `json:"gpu_frag_curve"`
	// Waste is where the unallocated GPUs are at 100% arrived (GPUWaste);
	// nil in results written before it existed.
	Waste *GPUWaste `json:"waste,omitempty"`
}

// GPUArrivals returns the arrival order of the artifact's experiment, as
// indices into w.Pods (a clone repeats the index of the pod it copies):
// the pods shuffled by the seed, then, when the pods' GPU demand is below
// inflate x capacity, clones of uniformly drawn pods appended until the
// first draw that would overshoot (the artifact compares the demand plus the
// drawn pod's milli per GPU, not its total, against the target: kept as is),
// or, when it is above, uniformly drawn pods removed until it is not; and
// then the nodes' tie-break ranks, a permutation (GPUCluster.Rank). A list
// without GPU demand is not inflated. The list grows to about inflate /
// (its demand / capacity) times its length: callers bound inflate (the
// command line and experiment files take 0..10).
func GPUArrivals(w *GPUWorkload, inflate float64, seed uint64) (order, rank []int32) {
	rng := rand.New(rand.NewPCG(seed, 0x6f70656e62)) // stream "openb"
	n := len(w.Pods)
	order = make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	rng.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
	defer func() {
		rank = make([]int32, len(w.Nodes))
		for i, r := range rng.Perm(len(w.Nodes)) {
			rank[i] = int32(r)
		}
	}()
	if inflate <= 0 || n == 0 {
		return order, nil
	}
	demand := w.GPUDemand()
	target := inflate * float64(w.GPUCapacity()*GPUMilli)
	switch {
	case demand == 0:
		// no pod asks for a GPU: clones would never reach the target (the
		// artifact loops for ever here)
	case float64(demand) < target:
		for {
			k := rng.IntN(n)
			g := w.Pods[k].GPU
			if float64(demand+int64(g.Milli)) > target {
				break
			}
			demand += g.Total()
			order = append(order, int32(k))
		}
	case float64(demand) > target:
		for float64(demand) > target && len(order) > 0 {
			k := rng.IntN(len(order))
			demand -= w.Pods[order[k]].GPU.Total()
			order = append(order[:k], order[k+1:]...)
		}
	}
	return order, nil
}

// NewGPUCluster returns the empty cluster of w with the workload's pod-type
// distribution and the tie-break ranks (nil: node order).
func NewGPUCluster(w *GPUWorkload, rank []int32) *GPUCluster {
	c := &GPUCluster{Nodes: make([]GPUNode, len(w.Nodes)), Rank: rank}
	if rank == nil {
		c.Rank = make([]int32, len(w.Nodes))
		for i := range c.Rank {
			c.Rank[i] = int32(i)
		}
	}
	for i := range w.Nodes {
		s := &w.Nodes[i]
		c.Nodes[i] = GPUNode{CPU: s.CPU, Mem: s.Mem, GPU: NewGPUs(int(s.GPUs), s.Model)}
	}
	c.Types = TypicalPods(w.Pods, TypicalThreshold)
	ids, types := w.PodTypes()
	c.TypeOf, c.NumTypes = ids, len(types)
	return c
}

// TypicalThreshold is the share of pods the artifact's typical pod types
// cover (its podPopularityThreshold, 95%).
const TypicalThreshold = 0.95

// Place puts pod p on node i taking the GPUs of m, after checking that it
// fits; it reports whether it did.
func (c *GPUCluster) Place(i int, p *GPUPodSpec, m GPUMask) bool {
	if i < 0 || i >= len(c.Nodes) {
		return false
	}
	n := &c.Nodes[i]
	if !n.Fits(p) || !n.GPU.CanTake(p.GPU, m) {
		return false
	}
	n.CPUUsed += p.CPU
	n.MemUsed += p.Mem
	n.GPU.Take(p.GPU, m)
	n.Pods++
	if t := GPUTag(p.GPU); t >= 0 {
		n.Tags[t]++
	}
	n.Gen++
	return true
}

// Remove takes pod p, placed on node i with the GPUs of m by Place, off
// the node again: the inverse of Place (for a packing that moves pods, such
// as sched.GPUHindsight; a run's pods never leave). Removing what was not
// placed there corrupts the node.
func (c *GPUCluster) Remove(i int, p *GPUPodSpec, m GPUMask) {
	n := &c.Nodes[i]
	n.CPUUsed -= p.CPU
	n.MemUsed -= p.Mem
	n.GPU.Release(p.GPU, m)
	n.Pods--
	if t := GPUTag(p.GPU); t >= 0 {
		n.Tags[t]--
	}
	n.Gen++
}

// RunGPU replays w under s as FGD's artifact runs its experiment: pods
// arrive in GPUArrivals' order and never leave; after each pod the allocated
// milli-GPU and the cluster's fragmentation (GPUFrag summed over nodes) are
// recorded against the GPU demand arrived so far (failed pods included).
// The curves bin the records as the artifact's analysis does: arrived % of
// capacity rounded to an integer k, the mean over the records of bin k, or
// over bins k-1..k+1 when bin k has none; NaN when those are empty too.
// A scheduler that returns a node the pod does not fit is an error.
func RunGPU(w *GPUWorkload, s GPUScheduler, cfg GPURunConfig) (GPUResult, error) {
	if err := w.Validate(); err != nil {
		return GPUResult{}, err
	}
	if cfg.Inflate < 0 || cfg.Inflate > 10 || math.IsNaN(cfg.Inflate) {
		return GPUResult{}, fmt.Errorf("gpu run %s: inflate %g: want 0 (none) to 10", w.Name, cfg.Inflate)
	}
	order, rank := GPUArrivals(w, cfg.Inflate, cfg.Seed)
	c := NewGPUCluster(w, rank)
	return runGPU(w, c, s, order)
}

// RunGPUOrder is RunGPU with an arrival order and a cluster computed once
// for several schedulers (GPUArrivals, NewGPUCluster on the same workload
// and seed; the cluster is copied, not modified).
func RunGPUOrder(w *GPUWorkload, base *GPUCluster, s GPUScheduler, order []int32) (GPUResult, error) {
	c := *base
	c.Nodes = append([]GPUNode(nil), base.Nodes...)
	return runGPU(w, &c, s, order)
}

func runGPU(w *GPUWorkload, c *GPUCluster, s GPUScheduler, order []int32) (GPUResult, error) {
	st, err := NewGPUStep(w, c, s.Name(), order)
	if err != nil {
		return GPUResult{Scheduler: s.Name(), Pods: len(order), GPUs: w.GPUCapacity()}, err
	}
	for !st.Done() {
		k, p := st.Pod()
		ni, m := s.Schedule(c, k, p)
		if err := st.Decide(ni, m); err != nil {
			return st.Result(), err
		}
	}
	return st.Result(), nil
}
