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
	// MaxNodeCPUUtil is the highest node CPU utilisation (actual use capped
	// at allocatable, over allocatable). Hot: it is above
	// Config.HotNodeThreshold while CPUUtil is below HotClusterThreshold.
	MaxNodeCPUUtil float64 `json:"max_node_cpu_util"`
	Hot            bool    `json:"hot"`
	// FragExpCPU is the expected fragmentation of CPU (FGD's idea): per
	// node, free CPU times the probability that a pod drawn from the
	// workload's pod-shape distribution does not fit the node's free
	// resources (or the node is at its pod limit); summed over nodes and
	// divided by the cluster's free CPU, 0 when nothing is free. FragExpMem
	// likewise for memory.
	FragExpCPU float64 `json:"frag_exp_cpu"`
	FragExpMem float64 `json:"frag_exp_mem"`
}

// Latency summarises pending latency (arrival to first bind) in
// milliseconds over the pods that were bound, and in the censored variants
// also over the pods never bound, with their wait up to the end of the run
// (Censored counts those). Zeros when there is no sample.
type Latency struct {
	Count    int     `json:"count"`
	Censored int     `json:"censored"`
	Mean     float64 `json:"mean_ms"`
	P50      float64 `json:"p50_ms"`
	P95      float64 `json:"p95_ms"`
	P99      float64 `json:"p99_ms"`
}

// Result is the summary of a run. The JSON keys of the first block are the
// ones `kubesim replay --json` promises; the rest are extra detail. Every
// figure counts from Config.WarmUp on (see there); a Stat is n/a (JSON
// null) when it has no sample.
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
	// NodeCPUVarOffPeak and NodeCPUStdOffPeak are NodeCPUVar and NodeCPUStd
	// averaged over the off-peak samples (Config.OffPeakQuantile); n/a
	// without samples.
	NodeCPUVarOffPeak    Stat    `json:"node_cpu_var_off_peak"`
	NodeCPUStdOffPeak    Stat    `json:"node_cpu_std_off_peak"`
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
	// (Workload.Initial) applied at time 0 and refused by the filters. They
	// describe the initial state and ignore Config.WarmUp.
	WarmPods     int64 `json:"warm_pods"`
	WarmRejected int64 `json:"warm_rejected"`
	// SLAWaitViolations counts high-priority pods whose wait from arrival to
	// first bind exceeded Config.SLADeadline, the wait of a pod never bound
	// running to the end of the run; SLANeverPlaced counts high-priority
	// pods never bound. SLAAnyPer1k: high-priority pods with any SLA
	// violation (throttled, evicted, waited past the deadline, never bound),
	// each counted once, per 1,000 pods (SLAViolationsPer1k's denominator).
	SLAWaitViolations int64   `json:"sla_wait_violations"`
	SLANeverPlaced    int64   `json:"sla_never_placed"`
	SLAAnyPer1k       float64 `json:"sla_any_per_1k"`
	// UnschedulableMemGiB is the memory requested by the pods that
	// Unschedulable counts, in GiB: what the count weighs. A scheduler that
	// leaves one large pod pending so that three small ones fit lowers the
	// count and not this.
	UnschedulableMemGiB float64 `json:"unschedulable_mem_gib"`
	// UnschedulableAfterGrace counts the pods of Unschedulable that are
	// still pending after Config.Grace without arrivals, and
	// UnschedulableAfterGraceMemGiB their memory requests in GiB. Without a
	// grace period they equal Unschedulable and UnschedulableMemGiB.
	UnschedulableAfterGrace       int64   `json:"unschedulable_after_grace"`
	UnschedulableAfterGraceMemGiB float64 `json:"unschedulable_after_grace_mem_gib"`
	// Censored pending latency: pods never bound count with their wait up to
	// the end of the run. HighPrioPendingMeanMs and
	// HighPrioPendingP95CensoredMs are HighPrioCensored's mean and p95.
	PendingCensored              Latency `json:"pending_latency_censored"`
	HighPrioCensored             Latency `json:"high_prio_latency_censored"`
	LowPrioCensored              Latency `json:"low_prio_latency_censored"`
	HighPrioPendingMeanMs        float64 `json:"high_prio_pending_mean_ms"`
	HighPrioPendingP95CensoredMs float64 `json:"high_prio_pending_p95_censored_ms"`
	// MaxNodeCPUUtilMean is the mean over samples of Sample.MaxNodeCPUUtil,
	// HotNodeShare the share of samples that are Hot; n/a without samples.
	MaxNodeCPUUtilMean Stat `json:"max_node_cpu_util_mean"`
	HotNodeShare       Stat `json:"hot_node_share"`
	// FragExpCPU and FragExpMem are the means over samples of the expected
	// fragmentation (Sample.FragExpCPU, FragExpMem); 0 without samples, like
	// the other means over samples.
	FragExpCPU       float64 `json:"frag_exp_cpu"`
	FragExpMem       float64 `json:"frag_exp_mem"`
	SimulatedSeconds float64 `json:"simulated_seconds"`
	// SchedulerStats is what the scheduler reported of its own decisions
	// (StatsReporter); absent for the heuristics.
	SchedulerStats map[string]float64 `json:"scheduler_stats,omitempty"`
	// Samples are the samples the summary uses: those taken at or after
	// Config.WarmUp (Engine.Samples has them all).
	Samples []Sample `json:"-"`
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
	m.latency[prioClass(p)] = append(m.latency[prioClass(p)], int64(d))
}

// sample records the current state of the cluster.
func (e *Engine) sample() {
	s := Sample{At: e.c.now, Nodes: len(e.c.nodes), Pending: e.pending}
	var alloc, req, used, free, strand Resources
	var sum, sumSq, fragCPU, fragMem float64
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
		s.MaxNodeCPUUtil = max(s.MaxNodeCPUUtil, u)
		if p := e.noFitShare(n, f); p > 0 {
			fragCPU += float64(f.CPU) * p
			fragMem += float64(f.Mem) * p
		}
	}
	s.CPUAlloc = ratio(req.CPU, alloc.CPU)
	s.MemAlloc = ratio(req.Mem, alloc.Mem)
	s.CPUUtil = ratio(used.CPU, alloc.CPU)
	s.MemUtil = ratio(used.Mem, alloc.Mem)
	s.Fragmentation = Fragmentation(ratio(free.CPU, alloc.CPU), ratio(free.Mem, alloc.Mem))
	s.StrandedCPU = ratio(strand.CPU, free.CPU)
	s.StrandedMem = ratio(strand.Mem, free.Mem)
	if free.CPU > 0 {
		s.FragExpCPU = fragCPU / float64(free.CPU)
	}
	if free.Mem > 0 {
		s.FragExpMem = fragMem / float64(free.Mem)
	}
	s.Hot = s.MaxNodeCPUUtil > e.cfg.HotNodeThreshold && s.CPUUtil < e.cfg.HotClusterThreshold
	if k := float64(len(e.c.nodes)); k > 0 {
		mean := sum / k
		s.NodeCPUVar = max(0, sumSq/k-mean*mean)
		s.NodeCPUStd = math.Sqrt(s.NodeCPUVar)
	}
	e.m.samples = append(e.m.samples, s)
}

// maxShapes is how many of the workload's most frequent pod shapes the
// expected fragmentation draws from.
const maxShapes = 32

// podShape is a request vector of the workload's pods and how many pods
// have it.
type podShape struct {
	req   Resources
	count int64
}

// podShapes returns the workload's pod-shape distribution: the distinct
// request vectors, most frequent first (ties by CPU, then memory,
// ascending), at most k of them, and the summed count of those kept (the
// weights are counts over it).
func podShapes(pods []PodSpec, k int) ([]podShape, int64) {
	counts := make(map[Resources]int64)
	for i := range pods {
		counts[pods[i].Requests]++
	}
	shapes := make([]podShape, 0, len(counts))
	for r, c := range counts {
		shapes = append(shapes, podShape{r, c})
	}
	// The map's order is random; the sort is total, so the result is not.
	slices.SortFunc(shapes, func(a, b podShape) int {
		if c := cmp.Compare(b.count, a.count); c != 0 {
			return c
		}
		if c := cmp.Compare(a.req.CPU, b.req.CPU); c != 0 {
			return c
		}
		return cmp.Compare(a.req.Mem, b.req.Mem)
	})
	shapes = shapes[:min(k, len(shapes))]
	var total int64
	for _, s := range shapes {
		total += s.count
	}
	return shapes, total
}

// noFitShare is the probability that a pod drawn from the workload's pod
// shapes does not fit node n, whose free resources are f: 1 at the pod
// limit, else the weighted share of shapes exceeding f in either dimension.
func (e *Engine) noFitShare(n *Node, f Resources) float64 {
	if e.shapeTotal == 0 {
		return 0
	}
	if n.Pods >= n.MaxPods {
		return 1
	}
	var miss int64
	for _, s := range e.shapes {
		if !s.req.Fits(f) {
			miss += s.count
		}
	}
	return float64(miss) / float64(e.shapeTotal)
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
// earlier it summarises the run so far (the censored waits then run to now).
// With a grace period (Config.Grace), once the window is over every figure
// is the window's but the two after-grace counts, which count to now.
func (e *Engine) Result() *Result {
	if e.grace != nil {
		return e.afterGrace()
	}
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
	r := &Result{
		Pods:                 c.Arrived - base.Arrived,
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
	censored, slaAny := e.podOutcomes(r)
	if r.Pods > 0 {
		r.SLAViolationsPer1k = 1000 * float64(m.violatedPods) / float64(r.Pods)
		r.SLAAnyPer1k = 1000 * float64(slaAny) / float64(r.Pods)
	}
	e.summariseSamples(r, samples)

	// Each class is sorted once; the other series are linear merges.
	lo, hi := sorted(m.latency[0]), sorted(m.latency[1])
	loC, hiC := merge(lo, sorted(censored[0])), merge(hi, sorted(censored[1]))
	r.LowPrioLatency = summarise(lo, 0)
	r.HighPrioLatency = summarise(hi, 0)
	r.PendingLatency = summarise(merge(lo, hi), 0)
	r.PendingLatencyMeanMs = r.PendingLatency.Mean
	r.PendingLatencyP95Ms = r.PendingLatency.P95
	r.PendingLatencyP99Ms = r.PendingLatency.P99
	r.HighPrioPendingP95Ms = r.HighPrioLatency.P95

	r.LowPrioCensored = summarise(loC, len(censored[0]))
	r.HighPrioCensored = summarise(hiC, len(censored[1]))
	r.PendingCensored = summarise(merge(loC, hiC), len(censored[0])+len(censored[1]))
	r.HighPrioPendingMeanMs = r.HighPrioCensored.Mean
	r.HighPrioPendingP95CensoredMs = r.HighPrioCensored.P95
	r.UnschedulableAfterGrace, r.UnschedulableAfterGraceMemGiB = r.Unschedulable, r.UnschedulableMemGiB
	return r
}

// podOutcomes goes over the measured pods (arrived, from the warm-up on):
// it sets r's unschedulable and SLA wait counts, and returns the censored
// waits of the pods never bound (by priority class, Low then High) and the
// number of high-priority pods with any SLA violation.
func (e *Engine) podOutcomes(r *Result) (censored [2][]int64, slaAny int64) {
	for i := range e.pods {
		p := &e.pods[i]
		if p.State == NotArrived || !e.measured(p) {
			continue
		}
		if p.State == Pending {
			r.Unschedulable++
			r.UnschedulableMemGiB += float64(p.Spec.Requests.Mem) / 1024
		}
		wait := p.boundAt - p.arrivedAt
		if !p.everBound {
			wait = e.c.now - p.arrivedAt
			censored[prioClass(p.Spec.Priority)] = append(censored[prioClass(p.Spec.Priority)], int64(wait))
		}
		if p.Spec.Priority < High {
			continue
		}
		violated := p.everViolated
		if !p.everBound {
			r.SLANeverPlaced++
			violated = true
		}
		if wait > e.cfg.SLADeadline {
			r.SLAWaitViolations++
			violated = true
		}
		if violated {
			slaAny++
		}
	}
	return censored, slaAny
}

// summariseSamples sets r's means over samples, the fragmentation at peak
// allocation, the node range, the off-peak node variance and the hot-node
// statistics.
func (e *Engine) summariseSamples(r *Result, samples []Sample) {
	var peak float64 = -1
	var maxNode float64
	var hot int
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
		r.FragExpCPU += s.FragExpCPU
		r.FragExpMem += s.FragExpMem
		maxNode += s.MaxNodeCPUUtil
		if s.Hot {
			hot++
		}
		if s.CPUAlloc > peak {
			peak = s.CPUAlloc
			r.FragmentationAtPeak = s.Fragmentation
		}
		r.NodesMin = min(r.NodesMin, s.Nodes)
		r.NodesMax = max(r.NodesMax, s.Nodes)
	}
	r.NodeCPUVarOffPeak, r.NodeCPUStdOffPeak = NA(), NA()
	r.MaxNodeCPUUtilMean, r.HotNodeShare = NA(), NA()
	if len(samples) == 0 {
		r.NodesMin = 0
		return
	}
	k := float64(len(samples))
	for _, f := range []*float64{&r.FragmentationMean, &r.StrandedCPU, &r.StrandedMem, &r.NodeCPUVarMean,
		&r.NodeCPUStdMean, &r.MeanCPUUtil, &r.MeanMemUtil, &r.MeanCPUAlloc, &r.MeanMemAlloc,
		&r.FragExpCPU, &r.FragExpMem} {
		*f /= k
	}
	r.MaxNodeCPUUtilMean = Stat(maxNode / k)
	r.HotNodeShare = Stat(float64(hot) / k)

	// Off-peak: at or below the OffPeakQuantile of the sampled CPU
	// utilisations (nearest rank), so at least one sample qualifies.
	util := make([]float64, len(samples))
	for i, s := range samples {
		util[i] = s.CPUUtil
	}
	slices.Sort(util)
	q := util[max(0, min(int(math.Ceil(e.cfg.OffPeakQuantile*k))-1, len(util)-1))]
	var off int
	var offVar, offStd float64
	for _, s := range samples {
		if s.CPUUtil <= q {
			offVar += s.NodeCPUVar
			offStd += s.NodeCPUStd
			off++
		}
	}
	r.NodeCPUVarOffPeak = Stat(offVar / float64(off))
	r.NodeCPUStdOffPeak = Stat(offStd / float64(off))
}

// prioClass is the index of a priority class in per-class tables: 0 for Low,
// 1 for High.
func prioClass(p Priority) int {
	if p >= High {
		return 1
	}
	return 0
}

// summarise computes mean and nearest-rank percentiles of the sorted
// waits s, of which censored are censored; zeros when empty.
func summarise(s []int64, censored int) Latency {
	l := Latency{Count: len(s), Censored: censored}
	if len(s) == 0 {
		return l
	}
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

// sorted returns a sorted copy of v.
func sorted(v []int64) []int64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s
}

// merge returns the sorted union of the sorted slices a and b.
func merge(a, b []int64) []int64 {
	if len(b) == 0 {
		return a
	}
	if len(a) == 0 {
		return b
	}
	out := make([]int64, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if a[i] <= b[j] {
			out = append(out, a[i])
			i++
		} else {
			out = append(out, b[j])
			j++
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
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
