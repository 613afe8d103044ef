package env

import (
	"math"

	"github.com/kubesim/kubesim/sim"
)

// Pod feature columns of Obs.Pod.
const (
	PodCPU      = iota // CPU request / Reference.CPU
	PodMem             // memory request / Reference.Mem
	PodPriority        // 0 batch (sim.Low), 1 online (sim.High)
	PodDuration        // ln(1 + duration/1 s) / ln(1 + 86400): 1 for a day; 1 for long-running pods too
	PodService         // 1 for a long-running pod (no duration), else 0
	PodAttempts        // ln(1 + decisions already taken for the pod) / ln(1 + 16)
	PodWaited          // ln(1 + time since the pod (re)entered the queue / 1 s) / ln(1 + 3600)
	PodFeatures        // number of pod features
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
)

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
			en.pod[PodDuration] = math.Log1p(spec.Duration.Seconds()) * durationScale
		} else {
			en.pod[PodDuration], en.pod[PodService] = 1, 1
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

		var u float64
		if en.signal == Requested {
			u = min(row[NodeCPUAlloc], 1)
		} else {
			u = float64(min(nd.Used.CPU, nd.Alloc.CPU)) / float64(nd.Alloc.CPU)
		}
		sum += u
		sumSq += u * u
	}
	mask[n] = true
	en.stats = st
	en.std = 0
	if n > 0 {
		mean := sum / float64(n)
		en.std = math.Sqrt(max(0, sumSq/float64(n)-mean*mean))
	}
	return Obs{N: n, Pod: en.pod[:], Nodes: feat, Domain: dom, Mask: mask, Prior: en.prior.fill(c, p, mask)}
}
