package sched

import (
	"math"
	"math/bits"

	"github.com/kubesim/kubesim/sim"
)

// PodTopologySpread is kube-scheduler v1.35's PodTopologySpread plugin as
// its default profile scores a pod without constraints of its own that a
// Service or controller selects: the system default constraints
//
//	kubernetes.io/hostname       maxSkew 3, ScheduleAnyway
//	topology.kubernetes.io/zone  maxSkew 5, ScheduleAnyway
//
// both soft, so the plugin scores and never filters. In kubesim a pod is
// selected when its PodSpec.Group is not empty, and the pods matching it
// are the bound pods (Bound or Running) of the same group; upstream matches
// only pods of the pod's namespace, and kubesim has one namespace. A pod
// without a group is not scored (upstream's PreScore Skip).
//
// For candidates F (the nodes that passed the filters, after sampling),
// every node has the hostname label (the kubelet sets it), and a node
// without the zone label is still scored (system defaults do not require
// every topology key):
//
//	w_host = ln(|F| + 2)
//	w_zone = ln(Z + 2), Z = distinct zone values among F, where the missing
//	         label counts as one more value when some candidate lacks it
//	raw(n) = round(c_host(n)*w_host + 2 + [n has a zone] (c_zone(zone(n))*w_zone + 4))
//
// in float64, summed in that order, rounded half away from zero; c_host(n)
// is the group's pods on n; c_zone(z) the group's pods on every node of the
// cluster in zone z (not only candidates, but only on nodes that match the
// pod's required node affinity: nodeAffinityPolicy Honor; taints are
// ignored: nodeTaintsPolicy Ignore). Normalised over the candidates with
// min and max of raw: 100 * (max + min - raw) / max (integer division), so
// the node with the fewest pods of the group around scores 100.
//
// It keeps scratch buffers between decisions, so one instance serves one
// framework at a time (a Profile's plugins are shared by the frameworks
// built from it; run those one at a time, as every Framework's contract
// already requires).
type PodTopologySpread struct {
	host  []int32  // per node slot: the group's pods there; all 0 between decisions
	zone  []int32  // per zone id: the group's pods, when recounted for required affinity
	seen  []uint32 // per zone id: the stamp of the last decision that saw it among the candidates
	stamp uint32
	norm  [256]int64 // normalised score by raw - min
}

var _ ClusterScorePlugin = (*PodTopologySpread)(nil)

// PodTopologySpreadName is the upstream plugin name.
const PodTopologySpreadName = "PodTopologySpread"

// System default constraints of kube-scheduler v1.35 (plugin.go), and the
// default profile's weight of the plugin.
const (
	hostnameMaxSkew               = 3
	zoneMaxSkew                   = 5
	PodTopologySpreadWeight int64 = 2
)

// NewPodTopologySpread returns the plugin with empty scratch buffers.
func NewPodTopologySpread() *PodTopologySpread { return &PodTopologySpread{} }

// Name returns PodTopologySpreadName.
func (*PodTopologySpread) Name() string { return PodTopologySpreadName }

// Score returns false: without the cluster the plugin cannot count the
// pod's group, so it has nothing to say. The framework calls ScoreCluster.
func (*PodTopologySpread) Score([]sim.Node, *sim.PodSpec, []int32, []int64) bool { return false }

// ScoreCluster writes the normalised spreading score of each candidate for
// a pod with a group, and returns false for a pod without one.
func (pl *PodTopologySpread) ScoreCluster(c *sim.Cluster, p *sim.Pod, cand []int32, dst []int64) bool {
	s := p.Spec
	if s.Group == "" || len(cand) == 0 {
		return false
	}
	nodes := c.Nodes()
	pl.grow(len(nodes), c.Domains(0))
	members := c.GroupNodes(p.Group)

	// Zone sizes: distinct zone ids among the candidates, and the missing
	// label as one more value.
	values := pl.zoneValues(nodes, cand, c.Domains(0))
	wHost := math.Log(float64(len(cand) + 2))
	wZone := math.Log(float64(values + 2))

	// The group's pods per zone: the cluster's running count, or, for a pod
	// with required node affinity, a recount over the nodes that match it.
	perZone := c.GroupZones(p.Group)
	if s.Affinity != nil && len(s.Affinity.Required) > 0 {
		perZone = pl.zone[:c.Domains(0)]
		clear(perZone)
		for _, m := range members {
			n := &nodes[m.Slot]
			if z := n.Domain[0]; z >= 0 && sim.MatchesAffinity(n, s) {
				perZone[z] += m.Pods
			}
		}
	}
	for _, m := range members {
		pl.host[m.Slot] = m.Pods
	}

	minRaw, maxRaw := int64(math.MaxInt64), int64(0)
	for j, i := range cand {
		n := &nodes[i]
		// The explicit float64 conversions keep each product rounded on
		// its own (no fused multiply-add), as upstream's separate
		// statements are on amd64.
		x := float64(float64(pl.host[i])*wHost) + (hostnameMaxSkew - 1)
		if z := n.Domain[0]; z >= 0 {
			var k int32
			if int(z) < len(perZone) {
				k = perZone[z]
			}
			x += float64(float64(k)*wZone) + (zoneMaxSkew - 1)
		}
		raw := roundPositive(x)
		dst[j] = raw
		minRaw = min(minRaw, raw)
		maxRaw = max(maxRaw, raw)
	}
	for _, m := range members {
		pl.host[m.Slot] = 0
	}

	// Every raw score is at least hostnameMaxSkew-1 = 2, so maxRaw > 0 and
	// upstream's all-MaxNodeScore case for maxRaw == 0 cannot arise. Raw
	// scores take few distinct values (small counts), so each result is
	// computed once and looked up: a 64-bit division per node was a
	// quarter of the plugin's time (pprof, BenchmarkSchedule).
	dst = dst[:len(cand)]
	if span := maxRaw - minRaw; span < int64(len(pl.norm)) {
		norm := pl.norm[:span+1]
		for v := range norm {
			norm[v] = MaxNodeScore * (maxRaw - int64(v)) / maxRaw // raw = minRaw + v
		}
		for j, raw := range dst {
			dst[j] = norm[raw-minRaw]
		}
		return true
	}
	for j, raw := range dst {
		dst[j] = MaxNodeScore * (maxRaw + minRaw - raw) / maxRaw
	}
	return true
}

// zoneValues returns the number of distinct zone ids among the candidates,
// plus one when some candidate has no zone label. With fewer than 64 zones
// it collects them in a bit mask (bit z+1 for zone z, bit 0 for none);
// otherwise it stamps a per-zone array.
func (pl *PodTopologySpread) zoneValues(nodes []sim.Node, cand []int32, zones int) int {
	if zones < 63 {
		var mask uint64
		for _, i := range cand {
			mask |= 1 << uint(nodes[i].Domain[0]+1)
		}
		return bits.OnesCount64(mask)
	}
	pl.stamp++
	if pl.stamp == 0 { // wrapped: forget every old stamp
		clear(pl.seen)
		pl.stamp = 1
	}
	values, unlabelled := 0, 0
	for _, i := range cand {
		z := nodes[i].Domain[0]
		if z < 0 {
			unlabelled = 1
			continue
		}
		if pl.seen[z] != pl.stamp {
			pl.seen[z] = pl.stamp
			values++
		}
	}
	return values + unlabelled
}

// grow makes the scratch buffers hold n nodes and z zones.
func (pl *PodTopologySpread) grow(n, z int) {
	if len(pl.host) < n {
		pl.host = make([]int32, n+n/4+16)
	}
	if len(pl.zone) < z {
		pl.zone = make([]int32, z+4)
		seen := make([]uint32, z+4)
		copy(seen, pl.seen)
		pl.seen = seen
	}
}

// roundPositive is math.Round for 1 <= x < 2^52, where it is exactly
// int64(x + 0.5): adding 0.5 to such an x either is exact or, when the sum
// reaches the next power of two, rounds to a value whose integer part is
// still the rounded x. Unlike math.Round it is inlined, so the score loop
// makes no call (see shares). TestRoundPositive checks it against
// math.Round.
func roundPositive(x float64) int64 { return int64(x + 0.5) }
