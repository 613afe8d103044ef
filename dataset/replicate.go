package dataset

import (
	"cmp"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/kubesim/kubesim/sim"
)

// ref is one pod of the replicated workload: its arrival, its pre-order
// index (units in order, pods of a unit in trace order, copies in order), and
// its block in replicate.
type ref struct {
	arrival sim.Time
	pre     int32
	block   int32
}

// replicate applies the load factor to the units and returns the pods
// sorted by arrival; ties keep a fixed order (unit key, then trace order,
// then copy). After is rewritten to the final indices, and pods that shared
// an After slice still share one. It also returns the initial placements of
// the warm units' first copies (WarmStart), in pod order.
func (l *loader) replicate() ([]sim.PodSpec, []sim.Placement) {
	slices.SortStableFunc(l.units, compareUnits)
	f := l.opts.LoadFactor
	whole, frac := math.Floor(f), f-math.Floor(f)
	salt := l.streamSalt()
	rng := rand.New(rand.NewPCG(l.opts.Seed, 0x6c6f6164666163^salt)) // stream "loadfac"
	var end sim.Time
	if l.opts.Window.To != 0 {
		end = l.opts.Window.To - l.opts.Window.From
	}
	// the arrivals in a compact array, read in order: the loop below visits
	// the pods unit by unit, and reading each from l.all would miss the
	// cache once per pod
	arrival := make([]sim.Time, len(l.all))
	for i := range l.all {
		arrival[i] = l.all[i].Arrival
	}
	// Extra copies of warm containers arrive uniformly over [0, spread),
	// drawn from a stream of their own: every other copy keeps the jitter
	// it would have without WarmStart.
	var warmRng *rand.Rand
	var spread sim.Time
	if l.opts.WarmStart && whole+frac > 1 {
		warmRng = rand.New(rand.NewPCG(l.opts.Seed, 0x7761726d636f7079^salt)) // stream "warmcopy"
		spread = end
		if spread == 0 { // open-ended window: up to its latest arrival
			for _, a := range arrival {
				spread = max(spread, a+1)
			}
		}
	}
	// one block per (unit, copy), in pre-order
	type block struct {
		u, copy int32
		base    int32 // pre-order index of its first pod
		shift   sim.Time
	}
	var blocks []block
	n := 0
	for ui, u := range l.units {
		copies := int(whole)
		if frac > 0 && rng.Float64() < frac {
			copies++
		}
		for c := range copies {
			var shift sim.Time
			if c > 0 && l.opts.Jitter > 0 {
				shift = sim.Time(rng.Int64N(int64(l.opts.Jitter)))
			}
			if c > 0 && u.warm {
				shift = sim.Time(warmRng.Int64N(int64(spread)))
			}
			blocks = append(blocks, block{u: int32(ui), copy: int32(c), base: int32(n), shift: shift})
			n += len(u.pods)
		}
	}
	refs := make([]ref, 0, n)
	for bi, b := range blocks {
		for i, k := range l.units[b.u].pods {
			a := arrival[k] + b.shift
			if b.copy > 0 && end > 0 && a >= end {
				a = end - 1
			}
			refs = append(refs, ref{arrival: a, pre: b.base + int32(i), block: int32(bi)})
		}
	}
	// refs are in pre-order: a stable sort by arrival orders by (arrival, pre)
	refs = sortRefs(refs)
	final := make([]int32, n) // pre-order index -> final index
	for i, r := range refs {
		final[r.pre] = int32(i)
	}
	// Every pod once, in place (the load factor 1 case): permute l.all
	// rather than copy it into a second array of n pods, which would double
	// the loader's largest allocation. src[i] is where out[i] comes from.
	inPlace := n == len(l.all)
	for _, b := range blocks {
		inPlace = inPlace && b.copy == 0
	}
	var out []sim.PodSpec
	if inPlace {
		src := make([]int32, n)
		for i, r := range refs {
			b := blocks[r.block]
			src[i] = l.units[b.u].pods[r.pre-b.base]
		}
		permute(l.all, src)
		out = l.all
	} else {
		out = make([]sim.PodSpec, n)
		for i, r := range refs {
			b := blocks[r.block]
			out[i] = l.all[l.units[b.u].pods[r.pre-b.base]]
		}
	}
	type afterKey struct {
		block int32
		first *int32
	}
	remapped := make(map[afterKey][]int32)
	var lastKey afterKey
	var lastAfter []int32
	for i, r := range refs {
		b := blocks[r.block]
		p := &out[i]
		p.Arrival = r.arrival
		if b.copy > 0 {
			p.Name += "#" + strconv.Itoa(int(b.copy))
		}
		if len(p.After) > 0 {
			// Pods that shared an After slice still do (the key is the
			// slice's first element, which moving the pods does not change).
			// The pods of a task mostly arrive together: try the last key
			// before the map.
			k := afterKey{r.block, &p.After[0]}
			if k == lastKey {
				p.After = lastAfter
				continue
			}
			a, ok := remapped[k]
			if !ok {
				a = make([]int32, len(p.After))
				for j, d := range p.After {
					a[j] = final[b.base+d]
				}
				slices.Sort(a)
				remapped[k] = a
			}
			p.After, lastKey, lastAfter = a, k, a
		}
	}
	// a warm unit is one container: its first copy is the pod at final[base]
	var initial []sim.Placement
	for _, b := range blocks {
		if u := &l.units[b.u]; b.copy == 0 && u.warm && u.node >= 0 {
			initial = append(initial, sim.Placement{Pod: final[b.base], Node: u.node})
		}
	}
	slices.SortFunc(initial, func(a, b sim.Placement) int { return cmp.Compare(a.Pod, b.Pod) })
	return out, initial
}

// permute rearranges v in place so that the new v[i] is the old v[src[i]];
// src must be a permutation of 0..len(v)-1. It follows the permutation's
// cycles, moving each element once, and marks visited positions in src
// (which it leaves unusable).
func permute[T any](v []T, src []int32) {
	for start := range src {
		if src[start] < 0 {
			continue
		}
		tmp := v[start]
		j := start
		for {
			k := int(src[j])
			src[j] = -1
			if k == start {
				v[j] = tmp
				break
			}
			v[j] = v[k]
			j = k
		}
	}
}

// sortRefs sorts refs by arrival, keeping the order of equal arrivals: an
// LSD radix sort in as few passes of at most 16 bits as the latest arrival
// needs, the digits split evenly between them (two passes of 14 bits for a
// two-day window, whose 2^16 buckets per pass would scatter every write
// to its own cache line). It is written for ref alone: through a generic key
// function, each key is an indirect call and the sort of a two-day load took
// 6 ms instead of 2.5.
func sortRefs(v []ref) []ref {
	var top uint64
	for _, r := range v {
		top = max(top, uint64(r.arrival))
	}
	if len(v) < 2 || top == 0 {
		return v
	}
	width := uint(bits.Len64(top))
	passes := (width + 15) / 16
	digit := (width + passes - 1) / passes
	mask := uint64(1)<<digit - 1
	tmp := make([]ref, len(v))
	count := make([]int32, 1<<digit)
	for shift := uint(0); shift < width; shift += digit {
		clear(count)
		for _, r := range v {
			count[uint64(r.arrival)>>shift&mask]++
		}
		var sum int32
		for i, c := range count {
			count[i] = sum
			sum += c
		}
		for _, r := range v {
			d := uint64(r.arrival) >> shift & mask
			tmp[count[d]] = r
			count[d]++
		}
		v, tmp = tmp, v
	}
	return v
}

// streamSalt is mixed into the load factor's random streams: 0 (the
// streams of Seed alone) unless LoadOptions.WindowStreams, then a hash of
// the window's start, so that windows of one seed draw independently.
func (l *loader) streamSalt() uint64 {
	if !l.opts.WindowStreams {
		return 0
	}
	// splitmix64's finaliser: nearby starts give unrelated salts
	z := uint64(l.opts.Window.From) + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
