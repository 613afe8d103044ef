package sched

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/kubesim/kubesim/sim"
)

// LookaheadOptions configure GPULookahead.
type LookaheadOptions struct {
	// Horizon is the number of pods after the current one that a rollout
	// places (with FGD).
	Horizon int
	// Candidates is the number of FGD's best nodes tried (by score, then
	// rank); FGD's own choice is always the first.
	Candidates int
	// Samples is the number of futures a decision draws from the arrival
	// history (pods that arrived so far, the current one included, drawn
	// uniformly with replacement), the same futures for every candidate.
	// 0 uses the true future of the run's order instead: a clairvoyant
	// oracle, not a scheduler that could run.
	Samples int
	// Seed drives the sampled futures.
	Seed uint64
	// Refuse adds a candidate that fails the pod (it is not retried, as
	// every failed pod of the artifact's experiment): admission, which pays
	// when the pods it keeps room for place more than the pod would.
	Refuse bool
}

// GPULookahead is one step of policy improvement over FGD: each of FGD's
// best Candidates nodes for the pod is tried, the next Horizon pods are
// placed after it by FGD, and the pod goes to the candidate whose rollouts
// place the most GPU milli (FGD's own node on ties, and whenever its
// rollouts place every pod, since no candidate can do better then); with
// Refuse, failing the pod is one more candidate, the last. With
// Samples 0 the rollouts see the run's true future (an oracle that bounds
// what lookahead with FGD can give); otherwise futures drawn from the
// arrival history, which a scheduler knows at decision time.
//
// It keeps a copy of the cluster for its rollouts and restores the nodes a
// rollout changed, so a decision costs about Candidates x Samples x Horizon
// FGD decisions, and far less while FGD's rollouts place every pod.
// Schedule must be called for the pods of order, in order (sim.RunGPUOrder
// does): Err reports a call out of order.
type GPULookahead struct {
	w     *sim.GPUWorkload
	order []int32
	pos   int
	opts  LookaheadOptions
	rng   *rand.Rand
	err   error

	real fgd          // FGD's scores on the real cluster
	roll gpuFramework // FGD in the rollouts, on buf
	rf   *fgd         // roll's scorer
	buf  sim.GPUCluster
	bufN []sim.GPUNode // buf.Nodes' backing array, kept across runs
	src  *sim.GPUNode  // the first node of the real cluster buf copies
	// dirty lists buf's nodes a rollout changed; mark[i] is true for them.
	dirty []int32
	mark  []bool
	gen   uint32 // the next Gen a rollout gives a node it changes
	hist  []int32
	fut   []int32
	cands []lookCand
	stats LookaheadStats
}

// LookaheadStats counts what a run's decisions did.
type LookaheadStats struct {
	Decisions int // pods scheduled
	Searched  int // decisions where FGD's rollouts failed a pod, so the other candidates were tried
	Changed   int // decisions off FGD's node (refusals included)
	Refused   int // pods failed by choice
	Rollouts  int // rollouts run
}

type lookCand struct {
	node  int
	score int64
	gpus  sim.GPUMask
}

// rollGen0 is the first Gen a rollout gives a node: above any real node's
// (a real Gen counts the pods placed on the node).
const rollGen0 = 1 << 31

// NewGPULookahead returns the lookahead scheduler for the arrivals order
// of w (sim.GPUArrivals).
func NewGPULookahead(w *sim.GPUWorkload, order []int32, opts LookaheadOptions) (*GPULookahead, error) {
	if opts.Horizon < 1 || opts.Candidates < 1 || opts.Samples < 0 {
		return nil, fmt.Errorf("lookahead: horizon %d, candidates %d, samples %d: want horizon and candidates of at least 1, samples of at least 0",
			opts.Horizon, opts.Candidates, opts.Samples)
	}
	l := &GPULookahead{w: w, order: order, opts: opts, rng: newGPURand(opts.Seed, 7)}
	l.rf = &fgd{}
	l.roll = gpuFramework{name: NameFGD, score: l.rf}
	return l, nil
}

// Name is "fgd-lookahead" (sampled futures) or "fgd-oracle" (the true
// future), with "-admit" when it may refuse pods.
func (l *GPULookahead) Name() string {
	n := "fgd-lookahead"
	if l.opts.Samples == 0 {
		n = "fgd-oracle"
	}
	if l.opts.Refuse {
		n += "-admit"
	}
	return n
}

// Err reports a Schedule call out of the order's sequence.
func (l *GPULookahead) Err() error { return l.err }

// Stats returns the counts of the run so far.
func (l *GPULookahead) Stats() LookaheadStats { return l.stats }

// sync makes buf a copy of c: nodes whose Gen differs are copied (after a
// rollout's restore only the nodes the real run changed differ).
func (l *GPULookahead) sync(c *sim.GPUCluster) {
	if l.src != &c.Nodes[0] || len(l.bufN) != len(c.Nodes) {
		l.src = &c.Nodes[0]
		l.bufN = append(l.bufN[:0], c.Nodes...)
		l.mark = make([]bool, len(c.Nodes))
		l.rf = &fgd{} // a new cluster: a new cache
		l.roll.score = l.rf
		l.gen = rollGen0
	}
	l.buf = *c
	l.buf.Nodes = l.bufN
	for i := range c.Nodes {
		if l.bufN[i].Gen != c.Nodes[i].Gen {
			l.bufN[i] = c.Nodes[i]
		}
	}
}

// restore undoes a rollout's changes to buf.
func (l *GPULookahead) restore(c *sim.GPUCluster) {
	for _, i := range l.dirty {
		l.bufN[i] = c.Nodes[i]
		l.mark[i] = false
	}
	l.dirty = l.dirty[:0]
}

func (l *GPULookahead) place(i int, p *sim.GPUPodSpec, m sim.GPUMask) {
	l.buf.Place(i, p, m)
	if l.gen == ^uint32(0) {
		// the Gens ran out: a new cache (never in runs of this size)
		l.rf = &fgd{}
		l.roll.score = l.rf
		l.gen = rollGen0
	}
	l.bufN[i].Gen = l.gen
	l.gen++
	if !l.mark[i] {
		l.mark[i] = true
		l.dirty = append(l.dirty, int32(i))
	}
}

// rollout places p on cand and then the pods of fut with FGD; it returns
// the GPU milli placed (p's included) and whether every pod was placed.
func (l *GPULookahead) rollout(c *sim.GPUCluster, p *sim.GPUPodSpec, cand lookCand, fut []int32) (int64, bool) {
	l.stats.Rollouts++
	placed, all := int64(0), true
	if cand.node >= 0 {
		l.place(cand.node, p, cand.gpus)
		placed = p.GPU.Total()
	}
	for _, q := range fut {
		qs := &l.w.Pods[q]
		i, m := l.roll.Schedule(&l.buf, int(q), qs)
		if i < 0 {
			all = false
			continue
		}
		l.place(i, qs, m)
		placed += qs.GPU.Total()
	}
	l.restore(c)
	return placed, all
}

// Schedule places the pod where the rollouts place the most.
func (l *GPULookahead) Schedule(c *sim.GPUCluster, pod int, p *sim.GPUPodSpec) (int, sim.GPUMask) {
	l.stats.Decisions++
	l.hist = append(l.hist, int32(pod))
	if l.opts.Samples == 0 {
		if l.pos >= len(l.order) || l.order[l.pos] != int32(pod) {
			if l.err == nil {
				l.err = fmt.Errorf("%w: decision %d is for pod %d", ErrLookaheadOrder, l.pos, pod)
			}
		}
		l.pos++
	}
	// FGD's candidates on the real cluster, best first
	l.real.prepare(c, pod, p)
	l.cands = l.cands[:0]
	for i := range c.Nodes {
		if !c.Nodes[i].Fits(p) {
			continue
		}
		s := l.real.score(c, i, p)
		l.cands = insertCand(l.cands, lookCand{node: i, score: s}, l.opts.Candidates, c.Rank)
	}
	if len(l.cands) == 0 {
		return -1, 0
	}
	for k := range l.cands {
		l.cands[k].gpus = l.real.gpus(c, l.cands[k].node, p)
	}
	if l.opts.Refuse && l.err == nil {
		l.cands = append(l.cands, lookCand{node: -1})
	}
	if len(l.cands) == 1 || l.err != nil {
		return l.cands[0].node, l.cands[0].gpus
	}
	l.sync(c)
	futures := l.futures()
	n := len(futures)
	best, bestVal := 0, int64(-1)
	for k := range l.cands {
		var val int64
		all := true
		for s := range n {
			v, a := l.rollout(c, p, l.cands[k], futures[s])
			val += v
			all = all && a
		}
		if k == 0 && all {
			return l.cands[0].node, l.cands[0].gpus
		}
		if k == 0 {
			l.stats.Searched++
		}
		if val > bestVal {
			best, bestVal = k, val
		}
	}
	if best != 0 {
		l.stats.Changed++
	}
	if l.cands[best].node < 0 {
		l.stats.Refused++
		return -1, 0
	}
	return l.cands[best].node, l.cands[best].gpus
}

// futures returns the pods each rollout places after the current one.
func (l *GPULookahead) futures() [][]int32 {
	h := l.opts.Horizon
	if l.opts.Samples == 0 {
		end := min(l.pos+h, len(l.order))
		return [][]int32{l.order[l.pos:end]}
	}
	n := l.opts.Samples
	l.fut = l.fut[:0]
	for range n * h {
		l.fut = append(l.fut, l.hist[l.rng.IntN(len(l.hist))])
	}
	out := make([][]int32, n)
	for s := range n {
		out[s] = l.fut[s*h : (s+1)*h]
	}
	return out
}

// insertCand keeps cs the best k candidates by score, then lowest rank.
func insertCand(cs []lookCand, c lookCand, k int, rank []int32) []lookCand {
	before := func(a, b lookCand) bool {
		return a.score > b.score || a.score == b.score && rank[a.node] < rank[b.node]
	}
	if len(cs) == k && !before(c, cs[k-1]) {
		return cs
	}
	if len(cs) < k {
		cs = append(cs, c)
	} else {
		cs[k-1] = c
	}
	for j := len(cs) - 1; j > 0 && before(cs[j], cs[j-1]); j-- {
		cs[j], cs[j-1] = cs[j-1], cs[j]
	}
	return cs
}

// ErrLookaheadOrder is GPULookahead.Err's error when the scheduler saw the
// pods out of the order it was made for (it then places as FGD).
var ErrLookaheadOrder = errors.New("lookahead: pods out of order")
