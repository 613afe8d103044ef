package sched

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/kubesim/kubesim/sim"
)

// WeightedScore is a score plugin and its weight in a profile.
type WeightedScore struct {
	Plugin ScorePlugin
	Weight int64
}

// Selection is how a profile picks a node among the feasible ones.
type Selection uint8

// Selections.
const (
	// SelectBest scores the candidates and picks the highest weighted sum;
	// ties are broken uniformly at random from the seed (kube-scheduler's
	// selectHost). With no score plugins every candidate ties, so the choice
	// is uniform over the candidates.
	SelectBest Selection = iota
	// SelectFirst picks the first feasible node in node order, without
	// scoring and without sampling.
	SelectFirst
	// SelectBestLowest scores the candidates as SelectBest does and breaks
	// ties by the lowest node index instead of a random draw: the rule of a
	// learned policy's greedy argmax over the same scores (model.Policy.Act
	// takes the first maximum), so that a policy whose correction is zero
	// can be compared with its prior exactly (ties.go).
	SelectBestLowest
)

// Profile is a scheduling profile: filter plugins, weighted score plugins and
// how to pick a node.
type Profile struct {
	Name    string
	Filters []FilterPlugin
	Scores  []WeightedScore
	// PercentageOfNodesToScore is kube-scheduler's option of the same name:
	// once that share of the N nodes has been found feasible, the search
	// stops and only those are scored; the next decision's search starts
	// where this one stopped. Clusters of at most 100 nodes are always
	// searched in full, and at least 100 feasible nodes are kept. 0 is
	// upstream's adaptive default (numFeasibleNodesToFind: 50 - N/125
	// percent, at least 5 percent); 100 scores every feasible node.
	PercentageOfNodesToScore int
	Select                   Selection
}

// Validate reports the first problem with the profile, naming the field.
func (pr *Profile) Validate() error {
	if pr.Name == "" {
		return errors.New("profile without a name")
	}
	for i, f := range pr.Filters {
		if f == nil {
			return fmt.Errorf("profile %q: filter %d is nil", pr.Name, i)
		}
	}
	for i, s := range pr.Scores {
		if s.Plugin == nil {
			return fmt.Errorf("profile %q: score %d is nil", pr.Name, i)
		}
		if s.Weight <= 0 {
			return fmt.Errorf("profile %q: score %d (%s): weight %d must be positive", pr.Name, i, s.Plugin.Name(), s.Weight)
		}
	}
	if pr.PercentageOfNodesToScore < 0 || pr.PercentageOfNodesToScore > 100 {
		return fmt.Errorf("profile %q: percentageOfNodesToScore %d outside [0, 100]", pr.Name, pr.PercentageOfNodesToScore)
	}
	switch pr.Select {
	case SelectBest, SelectBestLowest:
	case SelectFirst:
		if len(pr.Scores) > 0 {
			return fmt.Errorf("profile %q: first-feasible selection would ignore its %d score plugins", pr.Name, len(pr.Scores))
		}
	default:
		return fmt.Errorf("profile %q: unknown selection %d", pr.Name, pr.Select)
	}
	return nil
}

// Framework runs a Profile as a sim.Scheduler, the way kube-scheduler's
// scheduling cycle runs one: find feasible nodes (stopping early when
// sampling), score them with every score plugin, sum the scores times their
// weights, and pick the best node.
//
// The search for feasible nodes is kube-scheduler's findNodesThatPassFilters
// made sequential and therefore deterministic: nodes are examined in index
// order starting at a rotating start index; the search stops when one more
// than numFeasibleNodesToFind nodes have been found (that node is not kept,
// as upstream cancels on it), and the next decision starts after the last
// node examined. Upstream runs the filters on 16 goroutines, so which nodes
// it examines varies from run to run; here it does not.
//
// A Framework owns its buffers and random source and reuses them: a decision
// allocates nothing once the buffers have grown to the cluster size. It is
// not safe for concurrent use; give each engine its own instance.
type Framework struct {
	prof  Profile
	rng   *rand.Rand
	next  int // kube-scheduler's nextStartNodeIndex
	cand  []int32
	iota  []int32 // 0, 1, 2, ...
	buf   []int64
	total []int64
	chunk [chunkSize]int32
	// defaultFilters is set when the profile's filters are exactly
	// DefaultFilters (in any order): findFeasible then runs them as one pass
	// (findFeasibleDefault) instead of one pass per plugin.
	defaultFilters bool
	// res, when not nil, scores NodeResourcesFit and
	// NodeResourcesBalancedAllocation together (see resourceFusion).
	res *resourceFusion
	// cluster[k] is prof.Scores[k] as a ClusterScorePlugin, or nil.
	cluster []ClusterScorePlugin
}

var _ sim.Scheduler = (*Framework)(nil)

// chunkSize is how many nodes go through the filter chain per batch while
// searching for feasible nodes.
const chunkSize = 64

// NewFramework validates prof and returns a framework running it, with its
// random choices drawn from seed.
func NewFramework(prof Profile, seed uint64) (*Framework, error) {
	if err := prof.Validate(); err != nil {
		return nil, fmt.Errorf("new framework: %w", err)
	}
	return newFramework(prof, seed), nil
}

// newFramework is NewFramework for profiles built by this package, which
// the tests validate.
func newFramework(prof Profile, seed uint64) *Framework {
	// The second PCG word is a fixed constant so that the seed alone
	// selects the stream.
	cluster := make([]ClusterScorePlugin, len(prof.Scores))
	for k, ws := range prof.Scores {
		cluster[k], _ = ws.Plugin.(ClusterScorePlugin)
	}
	return &Framework{
		prof:           prof,
		rng:            rand.New(rand.NewPCG(seed, 0x6b75626573696d21)),
		defaultFilters: isDefaultFilters(prof.Filters),
		res:            fuseResources(prof.Scores),
		cluster:        cluster,
	}
}

// Name returns the profile's name.
func (f *Framework) Name() string { return f.prof.Name }

// Profile returns the profile the framework runs. Its slices are shared
// with the framework; do not modify them.
func (f *Framework) Profile() Profile { return f.prof }

// Schedule returns the index in c.Nodes() of the node chosen for p, or
// sim.PendingDecision when no node passes the filters.
func (f *Framework) Schedule(c *sim.Cluster, p *sim.Pod) int {
	nodes := c.Nodes()
	n := len(nodes)
	if n == 0 || p == nil || p.Spec == nil {
		return sim.PendingDecision
	}
	f.grow(n)
	spec := p.Spec
	if f.prof.Select == SelectFirst {
		cand := f.findFeasible(nodes, spec, 0, 1)
		if len(cand) == 0 {
			return sim.PendingDecision
		}
		return int(cand[0])
	}

	k := numFeasibleNodesToFind(f.prof.PercentageOfNodesToScore, n)
	start := f.next % n // the cluster may have shrunk since the last decision
	cand := f.findFeasible(nodes, spec, start, k+1)
	processed := n
	if len(cand) > k {
		// The search stopped at the (k+1)-th feasible node: everything
		// before it was examined.
		processed = int(cand[k]) - start
		if processed < 0 {
			processed += n
		}
		cand = cand[:k]
	}
	f.next = (start + processed) % n

	switch len(cand) {
	case 0:
		return sim.PendingDecision
	case 1:
		return int(cand[0]) // upstream skips scoring a single feasible node
	}
	if len(f.prof.Scores) == 0 && f.prof.Select == SelectBest {
		// Every candidate would score 0 and tie: draw one directly.
		return int(cand[f.rng.IntN(len(cand))])
	}
	total := f.score(c, p, cand)
	if f.prof.Select == SelectBestLowest {
		return int(cand[selectLowest(total, cand)])
	}
	return int(cand[f.selectBest(total)])
}

// Scores writes into dst (grown to len(c.Nodes()) if needed) the total
// weighted score of every feasible node for p, and -1 for every infeasible
// one, and returns dst. Unlike Schedule it scores every feasible node (no
// sampling), so normalising plugins see all of them; it does not advance the
// rotating start index or draw from the random source. For tests, tools and
// explanations; it may allocate.
func (f *Framework) Scores(c *sim.Cluster, p *sim.Pod, dst []int64) []int64 {
	nodes := c.Nodes()
	n := len(nodes)
	if cap(dst) < n {
		dst = make([]int64, n)
	}
	dst = dst[:n]
	for i := range dst {
		dst[i] = -1
	}
	if n == 0 || p == nil || p.Spec == nil {
		return dst
	}
	f.grow(n)
	cand := f.findFeasible(nodes, p.Spec, 0, n+1)
	total := f.score(c, p, cand)
	for j, i := range cand {
		dst[i] = total[j]
	}
	return dst
}

// grow makes the buffers hold n nodes.
func (f *Framework) grow(n int) {
	if cap(f.cand) >= n {
		return
	}
	m := n + n/4 + chunkSize
	f.cand = make([]int32, 0, m)
	f.iota = make([]int32, m)
	for i := range f.iota {
		f.iota[i] = int32(i)
	}
	f.buf = make([]int64, m)
	f.total = make([]int64, m)
}

// findFeasible runs the filters over the nodes in index order from start,
// wrapping around, until at least stopAt feasible nodes have been found or
// every node has been examined. It returns the feasible nodes in
// examination order; it may return more than stopAt.
func (f *Framework) findFeasible(nodes []sim.Node, p *sim.PodSpec, start, stopAt int) []int32 {
	n := len(nodes)
	if f.defaultFilters {
		cand := findFeasibleDefault(nodes, p, start, stopAt, f.cand[:0])
		f.cand = cand
		return cand
	}
	if stopAt > n-chunkSize {
		// The search will (nearly) cover every node: filter them all in
		// one batch, in place.
		cand := f.filter(nodes, p, f.rotation(f.cand[:n], start, n))
		f.cand = cand
		return cand
	}
	// Sampling: filter one chunk at a time so the search can stop early.
	cand := f.cand[:0]
	for pos := 0; pos < n && len(cand) < stopAt; {
		m := min(chunkSize, n-pos)
		ch := f.filter(nodes, p, f.rotation(f.chunk[:m], start+pos, n))
		cand = append(cand, ch...)
		pos += m
	}
	f.cand = cand
	return cand
}

// filter runs the profile's filters over cand (compacting it in place) and
// returns the nodes that pass, in order.
func (f *Framework) filter(nodes []sim.Node, p *sim.PodSpec, cand []int32) []int32 {
	for _, fl := range f.prof.Filters {
		cand = fl.Filter(nodes, p, cand)
		if len(cand) == 0 {
			break
		}
	}
	return cand
}

// isDefaultFilters reports whether filters are TaintToleration,
// NodeAffinity and NodeResourcesFit, each once, in any order (the filters
// are independent, so their order does not change the result).
func isDefaultFilters(filters []FilterPlugin) bool {
	var seen [3]bool
	for _, fl := range filters {
		var k int
		switch fl.(type) {
		case TaintToleration:
			k = 0
		case NodeAffinity:
			k = 1
		case *NodeResourcesFit:
			k = 2 // the filter does not depend on the scoring strategy
		default:
			return false
		}
		if seen[k] {
			return false
		}
		seen[k] = true
	}
	return len(filters) == 3
}

// findFeasibleDefault is findFeasible for DefaultFilters: the same search
// (the nodes from start on, wrapping around; whole when it will nearly cover
// the cluster, else in chunks until stopAt feasible nodes are found),
// appending the feasible nodes to dst, whose capacity must hold every node.
// It walks node index ranges instead of a list of indices, and the resource
// fit and, for a pod without tolerations of NoSchedule or NoExecute taints
// (which then admit it nowhere), the taint filter are plain field tests in a
// loop without calls (fitRange). The TaintToleration and NodeAffinity
// plugins then run over the nodes that passed, chunk by chunk, and only when
// a tolerating pod fits a hard-tainted node or the pod has required
// affinity. Every decision of every scheduler in this package goes through
// here; at 100 nodes the separate filter passes were a fifth of
// kube-default's instructions (cachegrind, BenchmarkSchedule).
func findFeasibleDefault(nodes []sim.Node, p *sim.PodSpec, start, stopAt int, dst []int32) []int32 {
	n := len(nodes)
	noTol := !sim.MayTolerate(p, sim.NoSchedule) && !sim.MayTolerate(p, sim.NoExecute)
	required := p.Affinity != nil && len(p.Affinity.Required) > 0
	step := n // the whole cluster in one chunk
	if stopAt <= n-chunkSize {
		step = chunkSize
	}
	for pos := 0; pos < n && len(dst) < stopAt; pos += step {
		m := min(step, n-pos)
		lo := start + pos
		if lo >= n {
			lo -= n
		}
		hi := min(lo+m, n)
		before := len(dst)
		var hard bool
		dst, hard = fitRange(nodes, p, noTol, lo, hi, dst)
		if rest := m - (hi - lo); rest > 0 { // wrapped around
			var h bool
			dst, h = fitRange(nodes, p, noTol, 0, rest, dst)
			hard = hard || h
		}
		if hard || required {
			ch := dst[before:]
			if hard {
				ch = TaintToleration{}.Filter(nodes, p, ch)
			}
			ch = NodeAffinity{}.Filter(nodes, p, ch) // ch itself without required terms
			dst = dst[:before+len(ch)]
		}
	}
	return dst
}

// fitRange appends to dst the nodes lo..hi-1 that pass the resource filter
// (sim.FitsResources) and, when noTol is set, have no NoSchedule or
// NoExecute taint, and reports whether it kept a node with such taints; dst
// must have room for hi-lo more.
func fitRange(nodes []sim.Node, p *sim.PodSpec, noTol bool, lo, hi int, dst []int32) ([]int32, bool) {
	k := len(dst)
	dst = dst[:k+hi-lo]
	hard := false
	for i := lo; i < hi; i++ {
		n := &nodes[i]
		ok := sim.FitsResources(n, p) && !(noTol && n.HardTaints)
		dst[k] = int32(i)
		if ok {
			k++
			hard = hard || n.HardTaints
		}
	}
	return dst[:k], hard
}

// rotation fills dst with the node indices from, from+1, ... modulo n,
// copying from f.iota (0..n-1), and returns it; 0 <= from < 2n and
// len(dst) <= n.
func (f *Framework) rotation(dst []int32, from, n int) []int32 {
	if from >= n {
		from -= n
	}
	k := copy(dst, f.iota[from:n])
	copy(dst[k:], f.iota[:n])
	return dst
}

// score returns the total weighted score of each candidate.
func (f *Framework) score(c *sim.Cluster, pod *sim.Pod, cand []int32) []int64 {
	nodes, p := c.Nodes(), pod.Spec
	total := f.total[:len(cand)]
	buf := f.buf[:len(cand)]
	first := true
	fused := f.res != nil && f.res.applies(p)
	if fused {
		f.res.score(nodes, p.Requests, cand, total)
		first = false
	}
	for k, ws := range f.prof.Scores {
		if fused && (k == f.res.fit || k == f.res.balanced) {
			continue
		}
		if cs := f.cluster[k]; cs != nil {
			if !cs.ScoreCluster(c, pod, cand, buf) {
				continue
			}
		} else if !ws.Plugin.Score(nodes, p, cand, buf) {
			continue
		}
		w := ws.Weight
		if first {
			for j, s := range buf {
				total[j] = w * s
			}
			first = false
			continue
		}
		for j, s := range buf {
			total[j] += w * s
		}
	}
	if first {
		clear(total) // every plugin skipped: all candidates score 0
	}
	return total
}

// selectBest returns the position of the highest total, choosing uniformly
// at random among equal highest totals. Upstream's selectHost does the same
// by reservoir sampling, one random draw per tie; counting the ties and
// drawing once gives every tied node the same probability 1/k.
func (f *Framework) selectBest(total []int64) int {
	best, first, ties := total[0], 0, 1
	for j := 1; j < len(total); j++ {
		s := total[j]
		if s < best {
			continue
		}
		if s > best {
			best, first, ties = s, j, 1
			continue
		}
		ties++
	}
	if ties == 1 {
		return first
	}
	r := f.rng.IntN(ties)
	for j := first; ; j++ {
		if total[j] == best {
			if r == 0 {
				return j
			}
			r--
		}
	}
}

// Upstream constants of numFeasibleNodesToFind.
const (
	minFeasibleNodesToFind           = 100
	minFeasibleNodesPercentageToFind = 5
	basePercentageOfNodesToScore     = 50
)

// numFeasibleNodesToFind is kube-scheduler's rule for how many feasible
// nodes to find before scoring, for percentage in [0, 100] (0 adaptive).
func numFeasibleNodesToFind(percentage, numAllNodes int) int {
	if numAllNodes < minFeasibleNodesToFind {
		return numAllNodes
	}
	if percentage == 0 {
		percentage = basePercentageOfNodesToScore - numAllNodes/125
		if percentage < minFeasibleNodesPercentageToFind {
			percentage = minFeasibleNodesPercentageToFind
		}
	}
	num := numAllNodes * percentage / 100
	if num < minFeasibleNodesToFind {
		return minFeasibleNodesToFind
	}
	return num
}
