package sim

import (
	"cmp"
	"math"
	"slices"
)

// Sample is one metrics sample of the cluster, taken every
// Config.SampleInterval and at the end of a run. Shares are in [0, 1].
type Sample struct {
	At      Time `json:"at_ms"`
	Nodes   int  `json:"nodes"`
	Pending int  `json:"pending"`
	// CPUAlloc and MemAlloc: summed requests over summed allocatable.
	CPUAlloc float64 `json:"cpu_alloc"`
	MemAlloc float64 `json:"mem_alloc"`
	// CPUUtil and MemUtil: summed actual use (CPU capped at each node's
	// allocatable, as throttling does) over summed allocatable.
	CPUUtil float64 `json:"cpu_util"`
	MemUtil float64 `json:"mem_util"`
	// Fragmentation is 1 - min(A_cpu, A_mem) / max(A_cpu, A_mem), A_r the
	// unallocated share of resource r; 0 when nothing is free.
	Fragmentation float64 `json:"fragmentation"`
	// StrandedCPU is the share of free CPU on nodes where a typical pod does
	// not fit by memory (or the pod limit is reached); StrandedMem likewise
	// for free memory on nodes short of a typical pod's CPU.
	StrandedCPU float64 `json:"stranded_cpu"`
	StrandedMem float64 `json:"stranded_mem"`
	// NodeCPUVar and NodeCPUStd: population variance and standard deviation
	// of node CPU utilisation (actual use over allocatable, capped at 1).
	NodeCPUVar float64 `json:"node_cpu_var"`
	NodeCPUStd float64 `json:"node_cpu_std"`
}

// Latency summarises pending latency (arrival to first bind) in
// milliseconds over the pods that were bound.
type Latency struct {
	Count int     `json:"count"`
	Mean  float64 `json:"mean_ms"`
	P50   float64 `json:"p50_ms"`
	P95   float64 `json:"p95_ms"`
	P99   float64 `json:"p99_ms"`
}

// Result is the summary of a run. The JSON keys of the first block are the
// ones `kubesim replay --json` promises; the rest are extra detail.
type Result struct {
	Scheduler            string  `json:"scheduler"`
	Pods                 int64   `json:"pods"`
	Unschedulable        int64   `json:"unschedulable"`
	FragmentationMean    float64 `json:"fragmentation_mean"`
	FragmentationAtPeak  float64 `json:"fragmentation_at_peak"`
	StrandedCPU          float64 `json:"stranded_cpu"`
	StrandedMem          float64 `json:"stranded_mem"`
	NodeCPUVarMean       float64 `json:"node_cpu_var_mean"`
	NodeCPUStdMean       float64 `json:"node_cpu_std_mean"`
	PendingLatencyMeanMs float64 `json:"pending_latency_mean_ms"`
	PendingLatencyP95Ms  float64 `json:"pending_latency_p95_ms"`
	PendingLatencyP99Ms  float64 `json:"pending_latency_p99_ms"`
	HighPrioPendingP95Ms float64 `json:"high_prio_pending_p95_ms"`
	SLAViolationsPer1k   float64 `json:"sla_violations_per_1k"`
	Evictions            int64   `json:"evictions"`
	Preemptions          int64   `json:"preemptions"`
	NodeHours            float64 `json:"node_hours"`
	MeanCPUUtil          float64 `json:"mean_cpu_util"`
	MeanMemUtil          float64 `json:"mean_mem_util"`
	MeanCPUAlloc         float64 `json:"mean_cpu_alloc"`
	MeanMemAlloc         float64 `json:"mean_mem_alloc"`
	NodeCPUVarOffPeak    float64 `json:"node_cpu_var_off_peak"`
	NodeCPUStdOffPeak    float64 `json:"node_cpu_std_off_peak"`
	ViolationSeconds     float64 `json:"sla_violation_seconds"`
	FailedAttempts       int64   `json:"failed_attempts"`
	Drained              int64   `json:"drained"`
	ScaleUps             int64   `json:"scale_ups"`
	ScaleDowns           int64   `json:"scale_downs"`
	NodesMin             int     `json:"nodes_min"`
	NodesMax             int     `json:"nodes_max"`
	PendingLatency       Latency `json:"pending_latency"`
	HighPrioLatency      Latency `json:"high_prio_latency"`
	LowPrioLatency       Latency `json:"low_prio_latency"`
	IgnoredMachineEvents int64   `json:"ignored_machine_events"`
	// WarmPods and WarmRejected count the warm start's placements
	// (Workload.Initial) applied at time 0 and refused by the filters.
	WarmPods         int64    `json:"warm_pods"`
	WarmRejected     int64    `json:"warm_rejected"`
	SimulatedSeconds float64  `json:"simulated_seconds"`
	Samples          []Sample `json:"-"`
}

// metrics accumulates what the Result needs during a run.
type metrics struct {
	samples       []Sample
	latency       [2][]int64 // by priority class (Low, High), in ms
	nodeMs        int64      // integral of the node count over time
	violationMs   int64
	violatedPods  int64
	ignoredEvents int64
	warmPods      int64    // Workload.Initial placements applied
	warmRejected  int64    // Workload.Initial placements that failed the filters
	warmedUp      bool     // the warm-up is over (base holds the counters at its end)
	base          Counters // counters at the end of the warm-up
	ignoredBase   int64    // ignoredEvents at the end of the warm-up
}

func (m *metrics) init(pods int) {
	m.latency[0] = make([]int64, 0, pods)
}

func (m *metrics) addLatency(p Priority, d Time) {
	k := 0
	if p >= High {
		k = 1
	}
	m.latency[k] = append(m.latency[k], int64(d))
}

// sample records the current state of the cluster.
func (e *Engine) sample() {
	s := Sample{At: e.c.now, Nodes: len(e.c.nodes), Pending: e.pending}
	var alloc, req, used, free, strand Resources
	var sum, sumSq float64
	for i := range e.c.nodes {
		n := &e.c.nodes[i]
		alloc = alloc.Add(n.Alloc)
		req = req.Add(n.Requested)
		used.CPU += min(n.Used.CPU, n.Alloc.CPU)
		used.Mem += min(n.Used.Mem, n.Alloc.Mem)
		f := n.Free()
		free = free.Add(f)
		full := n.Pods >= n.MaxPods
		if full || f.Mem < e.typical.Mem {
			strand.CPU += f.CPU
		}
		if full || f.CPU < e.typical.CPU {
			strand.Mem += f.Mem
		}
		u := float64(min(n.Used.CPU, n.Alloc.CPU)) / float64(n.Alloc.CPU)
		sum += u
		sumSq += u * u
	}
	s.CPUAlloc = ratio(req.CPU, alloc.CPU)
	s.MemAlloc = ratio(req.Mem, alloc.Mem)
	s.CPUUtil = ratio(used.CPU, alloc.CPU)
	s.MemUtil = ratio(used.Mem, alloc.Mem)
	s.Fragmentation = Fragmentation(ratio(free.CPU, alloc.CPU), ratio(free.Mem, alloc.Mem))
	s.StrandedCPU = ratio(strand.CPU, free.CPU)
	s.StrandedMem = ratio(strand.Mem, free.Mem)
	if k := float64(len(e.c.nodes)); k > 0 {
		mean := sum / k
		s.NodeCPUVar = max(0, sumSq/k-mean*mean)
		s.NodeCPUStd = math.Sqrt(s.NodeCPUVar)
	}
	e.m.samples = append(e.m.samples, s)
}

// Fragmentation is DESIGN's fragmentation ratio 1 - min(a, b) / max(a, b)
// of the unallocated shares a (CPU) and b (memory); 0 when both are 0.
func Fragmentation(a, b float64) float64 {
	hi := max(a, b)
	if hi <= 0 {
		return 0
	}
	return 1 - min(a, b)/hi
}

func ratio(a, b int64) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// Samples returns the metrics time series so far.
func (e *Engine) Samples() []Sample { return e.m.samples }

// Result summarises the run. Call it once Next has returned false; called
// earlier it summarises the run so far.
func (e *Engine) Result() *Result {
	m := &e.m
	// Counters count from the end of the warm-up: the difference from their
	// snapshot there (everything, if the run ended before it).
	c, base, ignored := e.counters, m.base, m.ignoredEvents-m.ignoredBase
	if !m.warmedUp {
		base, ignored = c, 0
	}
	samples := m.samples
	if k, _ := slices.BinarySearchFunc(samples, e.cfg.WarmUp, func(s Sample, t Time) int { return cmp.Compare(s.At, t) }); k > 0 {
		samples = samples[k:]
	}
	var unsched int64
	for i := range e.pods {
		p := &e.pods[i]
		if p.State == Pending && e.measured(p) {
			unsched++
		}
	}
	r := &Result{
		Pods:                 c.Arrived - base.Arrived,
		Unschedulable:        unsched,
		Evictions:            c.Evictions - base.Evictions,
		Preemptions:          c.Preemptions - base.Preemptions,
		NodeHours:            float64(m.nodeMs) / float64(Hour),
		ViolationSeconds:     float64(m.violationMs) / float64(Second),
		FailedAttempts:       c.Unschedulable + c.Invalid - base.Unschedulable - base.Invalid,
		Drained:              c.Drained - base.Drained,
		ScaleUps:             c.ScaleUps - base.ScaleUps,
		ScaleDowns:           c.ScaleDowns - base.ScaleDowns,
		IgnoredMachineEvents: ignored,
		WarmPods:             m.warmPods,
		WarmRejected:         m.warmRejected,
		SimulatedSeconds:     e.c.now.Seconds(),
		Samples:              samples,
	}
	if r.Pods > 0 {
		r.SLAViolationsPer1k = 1000 * float64(m.violatedPods) / float64(r.Pods)
	}
	var peak, peakUtil float64 = -1, 0
	r.NodesMin = math.MaxInt
	for _, s := range samples {
		r.FragmentationMean += s.Fragmentation
		r.StrandedCPU += s.StrandedCPU
		r.StrandedMem += s.StrandedMem
		r.NodeCPUVarMean += s.NodeCPUVar
		r.NodeCPUStdMean += s.NodeCPUStd
		r.MeanCPUUtil += s.CPUUtil
		r.MeanMemUtil += s.MemUtil
		r.MeanCPUAlloc += s.CPUAlloc
		r.MeanMemAlloc += s.MemAlloc
		if s.CPUAlloc > peak {
			peak = s.CPUAlloc
			r.FragmentationAtPeak = s.Fragmentation
		}
		peakUtil = max(peakUtil, s.CPUUtil)
		r.NodesMin = min(r.NodesMin, s.Nodes)
		r.NodesMax = max(r.NodesMax, s.Nodes)
	}
	if k := float64(len(samples)); k > 0 {
		for _, f := range []*float64{&r.FragmentationMean, &r.StrandedCPU, &r.StrandedMem, &r.NodeCPUVarMean,
			&r.NodeCPUStdMean, &r.MeanCPUUtil, &r.MeanMemUtil, &r.MeanCPUAlloc, &r.MeanMemAlloc} {
			*f /= k
		}
	} else {
		r.NodesMin = 0
	}
	var off int
	for _, s := range samples {
		if s.CPUUtil <= e.cfg.OffPeakFraction*peakUtil {
			r.NodeCPUVarOffPeak += s.NodeCPUVar
			r.NodeCPUStdOffPeak += s.NodeCPUStd
			off++
		}
	}
	if off > 0 {
		r.NodeCPUVarOffPeak /= float64(off)
		r.NodeCPUStdOffPeak /= float64(off)
	}
	r.LowPrioLatency = summarise(m.latency[0])
	r.HighPrioLatency = summarise(m.latency[1])
	r.PendingLatency = summarise(append(slices.Clone(m.latency[0]), m.latency[1]...))
	r.PendingLatencyMeanMs = r.PendingLatency.Mean
	r.PendingLatencyP95Ms = r.PendingLatency.P95
	r.PendingLatencyP99Ms = r.PendingLatency.P99
	r.HighPrioPendingP95Ms = r.HighPrioLatency.P95
	return r
}

// summarise computes mean and nearest-rank percentiles; zeros when empty.
func summarise(ms []int64) Latency {
	l := Latency{Count: len(ms)}
	if len(ms) == 0 {
		return l
	}
	s := slices.Clone(ms)
	slices.Sort(s)
	var sum float64
	for _, v := range s {
		sum += float64(v)
	}
	l.Mean = sum / float64(len(s))
	l.P50 = float64(Percentile(s, 0.50))
	l.P95 = float64(Percentile(s, 0.95))
	l.P99 = float64(Percentile(s, 0.99))
	return l
}

// Percentile returns the nearest-rank q-quantile of sorted (the smallest
// value with at least q of the values at or below it).
func Percentile(sorted []int64, q float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	k := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(k, len(sorted)-1))]
}
