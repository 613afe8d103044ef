package sim

import (
	"math/bits"
	"sort"
)

// A second bound, for pods that name GPU models (gpu_spec): counting.
//
// A pod can only go on the node classes it is eligible for (model allowed,
// enough devices, CPU and memory; gpuBound's classes). For a set S of
// classes, the pods whose eligible classes all lie in S can use no GPU
// outside S, so at least excess(S) = max(0, their milli-GPU - S's milli-GPU)
// of them stays unplaced, whatever the placement; for disjoint sets S_1,
// S_2, ... the pods counted are disjoint and the excesses add (pods
// eligible nowhere are the set S = {} with no GPU, counted in no other set).
// So any placement of a
// prefix allocates at most its GPU demand minus that sum. The sets tried
// are the distinct eligibility sets of the shapes; the disjoint family is
// chosen greedily by excess (any choice is valid). The Lagrangian bound
// prices every model alike and misses this: on gpuspec33 at 100% arrived,
// T4-pinned pods ask about 1,050 GPUs of the 842 T4 GPUs.
type pinnedBound struct {
	sets   []uint64  // candidate class sets
	caps   []float64 // their milli-GPU
	in     [][]int   // per shape: the candidate sets that contain its eligibility
	demand []float64 // per candidate set: milli-GPU of the counted pods so far
	order  []int
}

func newPinnedBound(b *gpuBound) *pinnedBound {
	elig := make([]uint64, len(b.shapes))
	for ci := range b.classes {
		c := &b.classes[ci]
		for _, list := range [2][]int{c.shares, c.wholes} {
			for _, t := range list {
				elig[t] |= 1 << uint(ci)
			}
		}
	}
	p := &pinnedBound{in: make([][]int, len(b.shapes))}
	if len(b.classes) > 63 {
		return p // eligibility sets (and the marker of the empty set) do not fit a word: no counting bound
	}
	seen := make(map[uint64]bool)
	for _, m := range elig {
		if !seen[m] {
			seen[m] = true
			p.sets = append(p.sets, m)
		}
	}
	sort.Slice(p.sets, func(i, j int) bool { return p.sets[i] < p.sets[j] })
	p.caps = make([]float64, len(p.sets))
	for si, s := range p.sets {
		for ci := range b.classes {
			if s&(1<<uint(ci)) != 0 {
				p.caps[si] += b.classes[ci].k * float64(b.classes[ci].gpus) * GPUMilli
			}
		}
	}
	for t, m := range elig {
		for si, s := range p.sets {
			if m&^s == 0 && (m != 0 || s == 0) { // m within s; pods eligible nowhere only in the empty set
				p.in[t] = append(p.in[t], si)
			}
		}
	}
	p.demand = make([]float64, len(p.sets))
	return p
}

func (p *pinnedBound) reset() { clear(p.demand) }

// add counts a pod of shape t (milli-GPU g).
func (p *pinnedBound) add(t int, g float64) {
	for _, si := range p.in[t] {
		p.demand[si] += g
	}
}

// excess is the milli-GPU of the counted pods that no placement can place:
// the largest excess of one set, or a greedy sum over disjoint sets,
// whichever is larger.
func (p *pinnedBound) excess() float64 {
	p.order = p.order[:0]
	single := 0.0
	for si := range p.sets {
		if e := p.demand[si] - p.caps[si]; e > 0 {
			p.order = append(p.order, si)
			single = max(single, e)
		}
	}
	sort.Slice(p.order, func(i, j int) bool {
		a, b := p.order[i], p.order[j]
		ea, eb := p.demand[a]-p.caps[a], p.demand[b]-p.caps[b]
		if ea != eb {
			return ea > eb
		}
		return bits.OnesCount64(p.sets[a]) < bits.OnesCount64(p.sets[b])
	})
	var used uint64
	sum := 0.0
	for _, si := range p.order {
		s := p.sets[si]
		if s&used != 0 || (s == 0 && used&(1<<63) != 0) {
			continue
		}
		if s == 0 {
			used |= 1 << 63 // the empty set is counted once
		}
		used |= s
		sum += p.demand[si] - p.caps[si]
	}
	return max(single, sum)
}
