package env

import (
	"math"

	"github.com/kubesim/kubesim/sim"
)

// Pod feature columns of Obs.Pod. Only what a scheduler knows when it
// decides: never the pod's true duration, nothing from the trace's future.
const (
	PodCPU      = iota // CPU request / Reference.CPU
	PodMem             // memory request / Reference.Mem
	PodPriority        // 0 batch (sim.Low), 1 online (sim.High)
	// PodLifetime is the estimated lifetime, ln(1 + est/1 s) / ln(1 + 86400)
	// capped at 1: the mean of ln(1 + lifetime/1 s) over the finished pods
	// of the pod's task, else its group, else all pods (sim.Cluster.Lifetime),
	// else 5 minutes (about 0.5); 1 for a long-running pod.
	PodLifetime
	// PodLifetimeLevel says where PodLifetime comes from: 1 the pod's task
	// (or a long-running pod, whose lifetime is known), 2/3 its group, 1/3
	// all finished pods, 0 the constant (no pod has finished yet).
	PodLifetimeLevel
	PodService  // 1 for a long-running pod (a Deployment, not a Job), else 0
	PodAttempts // ln(1 + decisions already taken for the pod) / ln(1 + 16)
	PodWaited   // ln(1 + time since the pod (re)entered the queue / 1 s) / ln(1 + 3600)
	// PodQueue is ln(1 + P) / ln(1 + 1000) with P the pending pods, this one
	// included (sim.Cluster.PendingRequests).
	PodQueue
	// PodQueueCPU is Q/(Q + F) for CPU, with Q the summed requests of the
	// pending pods (this one included) and F the cluster's free allocatable
	// (sum over nodes of allocatable - requested): 0 with nothing pending,
	// 1/2 when the queue would exactly fill the free room, near 1 when it
	// is far larger; 0 when Q + F = 0.
	PodQueueCPU
	PodQueueMem // the same for memory
	// PodQueueRank is the pod's size rank among the other pending pods: the
	// share of them with a smaller dominant share (max of CPU and memory
	// request over Reference), ties counting one half; 1/2 when it is the
	// only pending pod.
	PodQueueRank
	// PodArrivals is ln(1 + r/N) / ln(1 + 10), r the recent arrival rate in
	// pods per minute (sim.Cluster.ArrivalRate: arrivals decayed with a
	// 5-minute time constant) and N the node count (r itself when N = 0).
	PodArrivals
	PodFeatures // number of pod features
)

// Node feature columns of one row of Obs.Nodes; ratios are over the node's
// allocatable unless said otherwise.
const (
	NodeCPUAlloc     = iota // requested CPU ratio
	NodeMemAlloc            // requested memory ratio
	NodeCPUUtil             // actual CPU use ratio (not capped: above 1 the node is throttling)
	NodeMemUtil             // actual memory use ratio
	NodeCPUAfter            // requested CPU ratio if the pod were placed here
	NodeMemAfter            // requested memory ratio if the pod were placed here
	NodePods                // pods bound / pod limit
	NodeTaint               // 1 when a NoSchedule or NoExecute taint is not tolerated by the pod
	NodeSoftTaint           // 1 when a PreferNoSchedule taint is not tolerated by the pod
	NodeAffinityMiss        // 1 when the pod's required node affinity excludes the node
	NodeAffinityPref        // share of the pod's preferred-affinity weight the node matches (0 without preferences)
	NodeFits                // 1 when kube-scheduler's filters pass (equals Mask[i])
	NodeCPUSize             // allocatable CPU / Reference.CPU
	NodeMemSize             // allocatable memory / Reference.Mem
	NodeFeatures            // number of node features
)

// Scales of the log-scaled pod features.
var (
	durationScale = 1 / math.Log1p(86400) // a day in seconds
	attemptScale  = 1 / math.Log1p(16)
	waitScale     = 1 / math.Log1p(3600) // an hour in seconds
	queueScale    = 1 / math.Log1p(1000)
	arrivalScale  = 1 / math.Log1p(10) // pods per minute per node
	// fallbackLifetime is PodLifetime before any pod has finished: 5 minutes.
	fallbackLifetime = math.Log1p(300) * durationScale
)

// lifetimeLevel is PodLifetimeLevel by sim.LifetimeLevel.
var lifetimeLevel = [...]float64{
	sim.LifetimeNone: 0, sim.LifetimeAll: 1.0 / 3, sim.LifetimeGroup: 2.0 / 3, sim.LifetimeTask: 1,
}

// Obs is the observation of one decision. Its slices belong to the Env (or
// VecEnv) that returned it and are overwritten by the next Step or Reset:
// copy it (Clone, CopyTo) to keep it.
type Obs struct {
	// N is the number of nodes now: Nodes has N rows, Domain N entries and
	// Mask N+1. It changes during an episode (autoscaler, machine events).
	N int
	// Pod holds PodFeatures values (the Pod* columns); all zero in the
	// final observation of a terminated episode, where no pod waits.
	Pod []float64
	// Nodes is the N x NodeFeatures node matrix, row-major: node i's row is
	// Nodes[i*NodeFeatures:(i+1)*NodeFeatures]. Row i is
	// sim.Engine.Cluster().Nodes()[i] at this decision.
	Nodes []float64
	// Domain holds each node's failure-domain id at Config.Domain's level
	// (sim.Node.Domain: dense per episode, in order of first appearance), or
	// -1 for a node without that label (autoscaled nodes have none). Nodes
	// with equal ids are neighbours in the GNN.
	Domain []int32
	// Mask allows action i < N when the pod passes kube-scheduler's filters
	// on node i (sim.Feasible); Mask[N], Pending, is always true.
	Mask []bool
	// Prior holds N+1 additive log-prior terms, one per action (Pending
	// last), that the policy adds to its logits: a heuristic's preference,
	// so that a policy with a zero learned correction acts as that
	// heuristic. Nil when the configuration has no prior.
	Prior []float64
}

// Row returns node i's features.
func (o *Obs) Row(i int) []float64 { return o.Nodes[i*NodeFeatures : (i+1)*NodeFeatures] }

// CopyTo copies o into dst, reusing dst's slices when they are large enough.
func (o *Obs) CopyTo(dst *Obs) {
	dst.N = o.N
	dst.Pod = append(dst.Pod[:0], o.Pod...)
	dst.Nodes = append(dst.Nodes[:0], o.Nodes...)
	dst.Domain = append(dst.Domain[:0], o.Domain...)
	dst.Mask = append(dst.Mask[:0], o.Mask...)
	if o.Prior == nil {
		dst.Prior = nil
	} else {
		dst.Prior = append(dst.Prior[:0], o.Prior...)
	}
}

// Clone returns a copy of o that owns its slices.
func (o *Obs) Clone() Obs {
	var c Obs
	o.CopyTo(&c)
	return c
}

// clusterStats are the cluster-wide sums behind the fragmentation ratio and
// stranded resources, as sim's metrics samples define them: alloc is summed
// allocatable, free summed allocatable minus requested, strand the free CPU
// on nodes where a typical pod does not fit by memory or pod count (and free
// memory on nodes short of its CPU). Integer sums, so updating them node by
// node is exact.
type clusterStats struct {
	alloc, free, strand sim.Resources
}

// add adds (sign 1) or removes (sign -1) node n's contribution.
func (s *clusterStats) add(n *sim.Node, typical sim.Resources, sign int64) {
	f := n.Free()
	s.alloc.CPU += sign * n.Alloc.CPU
	s.alloc.Mem += sign * n.Alloc.Mem
	s.free.CPU += sign * f.CPU
	s.free.Mem += sign * f.Mem
	full := n.Pods >= n.MaxPods
	if full || f.Mem < typical.Mem {
		s.strand.CPU += sign * f.CPU
	}
	if full || f.CPU < typical.CPU {
		s.strand.Mem += sign * f.Mem
	}
}

// stranded is the mean of the stranded shares of free CPU and free memory.
func (s *clusterStats) stranded() float64 {
	return (ratio(s.strand.CPU, s.free.CPU) + ratio(s.strand.Mem, s.free.Mem)) / 2
}

// fragmentation is DESIGN's fragmentation ratio.
func (s *clusterStats) fragmentation() float64 {
	return sim.Fragmentation(ratio(s.free.CPU, s.alloc.CPU), ratio(s.free.Mem, s.alloc.Mem))
}

func ratio(a, b int64) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// encoder writes observations into buffers it owns and measures the
// cluster on the way.
type encoder struct {
	ref    Reference
	level  int           // index into sim.Node.Domain
	signal BalanceSignal // what balance measures

	pod    [PodFeatures]float64
	nodes  []float64
	domain []int32
	mask   []bool

	stats clusterStats // of the cluster as last encoded
	std   float64      // std of node CPU utilisation (per signal) as last encoded

	prior priorState // Obs.Prior (observation.go)
}

// encode fills the buffers for pod p (nil: no pod) on cluster c with typical
// pod size typical, and returns the observation.
func (en *encoder) encode(c *sim.Cluster, p *sim.Pod, typical sim.Resources) Obs {
	nodes := c.Nodes()
	n := len(nodes)
	if cap(en.mask) < n+1 { // room for twice as many nodes, so growth is rare
		en.nodes = make([]float64, 2*(n+1)*NodeFeatures)
		en.domain = make([]int32, 2*(n+1))
		en.mask = make([]bool, 2*(n+1))
	}
	feat := en.nodes[:n*NodeFeatures]
	dom := en.domain[:n]
	mask := en.mask[:n+1]

	var spec *sim.PodSpec
	var req sim.Resources
	var prefTotal int64
	en.pod = [PodFeatures]float64{}
	if p != nil {
		spec = p.Spec
		req = spec.Requests
		en.pod[PodCPU] = float64(req.CPU) / float64(en.ref.CPU)
		en.pod[PodMem] = float64(req.Mem) / float64(en.ref.Mem)
		if spec.Priority >= sim.High {
			en.pod[PodPriority] = 1
		}
		if spec.Duration > 0 {
			// Known at decision time: the pod is a Job's, not a Deployment's.
			// Its duration itself is not known; only finished pods are.
			est := c.Lifetime(p)
			en.pod[PodLifetime] = fallbackLifetime
			if est.Level != sim.LifetimeNone {
				en.pod[PodLifetime] = min(est.LogMean*durationScale, 1)
			}
			en.pod[PodLifetimeLevel] = lifetimeLevel[est.Level]
		} else {
			en.pod[PodLifetime], en.pod[PodLifetimeLevel], en.pod[PodService] = 1, 1, 1
		}
		en.pod[PodAttempts] = math.Log1p(float64(p.Attempts)) * attemptScale
		en.pod[PodWaited] = math.Log1p(max(c.Now()-p.QueuedAt, 0).Seconds()) * waitScale
		if spec.Affinity != nil {
			for _, pt := range spec.Affinity.Preferred {
				prefTotal += int64(pt.Weight)
			}
		}
	}

	var st clusterStats
	var sum, sumSq float64
	for i := range nodes {
		nd := &nodes[i]
		st.add(nd, typical, 1)
		ac, am := 1/float64(nd.Alloc.CPU), 1/float64(nd.Alloc.Mem)
		row := feat[i*NodeFeatures : (i+1)*NodeFeatures : (i+1)*NodeFeatures]
		row[NodeCPUAlloc] = float64(nd.Requested.CPU) * ac
		row[NodeMemAlloc] = float64(nd.Requested.Mem) * am
		row[NodeCPUUtil] = float64(nd.Used.CPU) * ac
		row[NodeMemUtil] = float64(nd.Used.Mem) * am
		row[NodeCPUAfter] = float64(nd.Requested.CPU+req.CPU) * ac
		row[NodeMemAfter] = float64(nd.Requested.Mem+req.Mem) * am
		row[NodePods] = float64(nd.Pods) / float64(nd.MaxPods)
		row[NodeCPUSize] = float64(nd.Alloc.CPU) / float64(en.ref.CPU)
		row[NodeMemSize] = float64(nd.Alloc.Mem) / float64(en.ref.Mem)
		fits := false
		row[NodeTaint], row[NodeSoftTaint], row[NodeAffinityMiss], row[NodeAffinityPref] = 0, 0, 0, 0
		if spec != nil {
			tol := sim.ToleratesTaints(nd, spec)
			aff := sim.MatchesAffinity(nd, spec)
			fits = tol && aff && sim.FitsResources(nd, spec)
			if !tol {
				row[NodeTaint] = 1
			}
			if len(nd.Spec.Taints) > 0 && sim.CountIntolerablePreferNoSchedule(nd, spec) > 0 {
				row[NodeSoftTaint] = 1
			}
			if !aff {
				row[NodeAffinityMiss] = 1
			}
			if prefTotal > 0 {
				row[NodeAffinityPref] = float64(sim.PreferredAffinityWeight(nd, spec)) / float64(prefTotal)
			}
		}
		mask[i] = fits
		row[NodeFits] = 0
		if fits {
			row[NodeFits] = 1
		}
		dom[i] = nd.Domain[en.level]

		u := cpuSignal(nd, en.signal)
		sum += u
		sumSq += u * u
	}
	mask[n] = true
	if p != nil {
		en.queueFeatures(c, p, st.free, n)
	}
	en.stats = st
	en.std = 0
	if n > 0 {
		mean := sum / float64(n)
		en.std = math.Sqrt(max(0, sumSq/float64(n)-mean*mean))
	}
	return Obs{N: n, Pod: en.pod[:], Nodes: feat, Domain: dom, Mask: mask, Prior: en.prior.fill(c, p, mask)}
}

// queueFeatures fills the queue columns of en.pod for pod p on cluster c
// of n nodes with free allocatable free.
func (en *encoder) queueFeatures(c *sim.Cluster, p *sim.Pod, free sim.Resources, n int) {
	req := p.Spec.Requests
	pending := c.PendingRequests()
	q := c.PendingTotal()
	en.pod[PodQueue] = math.Log1p(float64(len(pending))) * queueScale
	en.pod[PodQueueCPU] = queueShare(q.CPU, free.CPU)
	en.pod[PodQueueMem] = queueShare(q.Mem, free.Mem)

	ic, im := 1/float64(en.ref.CPU), 1/float64(en.ref.Mem)
	own := max(float64(req.CPU)*ic, float64(req.Mem)*im)
	var less, equal int
	for _, r := range pending {
		switch d := max(float64(r.CPU)*ic, float64(r.Mem)*im); {
		case d < own:
			less++
		case d == own:
			equal++
		}
	}
	// The pod itself, when listed (always, in an engine's cluster), is one
	// of the equal ones.
	others := len(pending)
	if c.Listed(p) && equal > 0 {
		equal--
		others--
	}
	en.pod[PodQueueRank] = 0.5
	if others > 0 {
		en.pod[PodQueueRank] = (float64(less) + 0.5*float64(equal)) / float64(others)
	}

	r := c.ArrivalRate()
	if n > 0 {
		r /= float64(n)
	}
	en.pod[PodArrivals] = math.Log1p(r) * arrivalScale
}

// queueShare is q/(q + free), 0 when both are 0 (free below 0 counts 0).
func queueShare(q, free int64) float64 {
	free = max(free, 0)
	if q+free <= 0 {
		return 0
	}
	return float64(q) / float64(q+free)
}
