package sweep

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/kubesim/kubesim/sim"
)

// Cluster compaction (issue 13; Verma, Korupolu and Wilkes, "Evaluating
// job packing in warehouse-scale computing", IEEE CLUSTER 2014, and the
// Borg paper, EuroSys 2015): for a scheduler and a workload, the smallest
// cluster on which the scheduler still places the workload, up to a
// threshold share of unschedulable pods. A better packer needs fewer nodes.
// The search is repeated per seed (each seed its own predicate) and the
// answers are reported as a distribution.

// DefaultCompactionThreshold is the share of pods that may be left
// unschedulable at the compacted size: 0.1%.
const DefaultCompactionThreshold = 0.001

// ErrCompactionBound is wrapped by Compact's error when the predicate fails
// at the upper bound of the search, so no size in range is known to pass.
var ErrCompactionBound = errors.New("compaction: the upper bound does not pass")

// Probe is one evaluation of the predicate: a cluster of Nodes nodes, and
// whether it passed.
type Probe struct {
	Nodes int  `json:"nodes"`
	OK    bool `json:"ok"`
}

// CompactTrace records a search, for reports: its range, its probes in the
// order they were made, and its answer.
type CompactTrace struct {
	Lo     int     `json:"lo"`
	Hi     int     `json:"hi"`
	Probes []Probe `json:"probes"`
	// Nodes is the answer (0 when the search failed).
	Nodes int `json:"nodes"`
	// NonMonotone is set when some probe failed above a size that passed,
	// so the predicate is not monotone in the node count (see CompactChecked).
	NonMonotone bool `json:"non_monotone"`
}

// Compact finds the smallest n in [lo, hi] with ok(n), by binary search,
// assuming ok is monotone: once a size passes, every bigger one passes. It
// probes hi first and then halves the range, about log2(hi-lo+1)+1 probes
// in all; each size is probed at most once. It returns ErrCompactionBound
// (wrapped, naming hi) when ok(hi) is false, the error of ok wrapped with
// the size it was probing, and ctx's error once ctx is done (checked before
// every probe; ok gets ctx too). The trace is returned in every case.
//
// When ok is not monotone the answer is still a size that passed, the
// smallest that did, and either lo or a size whose predecessor failed: a
// crossing point, not necessarily the smallest. Binary search cannot see
// it: its failing probes all lie below its passing ones, so its trace never
// contradicts monotonicity. CompactChecked probes the sizes just above the
// answer as well and reports (and repairs) a contradiction.
func Compact(ctx context.Context, lo, hi int, ok func(ctx context.Context, nodes int) (bool, error)) (int, CompactTrace, error) {
	return CompactChecked(ctx, lo, hi, 0, ok)
}

// CompactChecked is Compact followed by a check of the check sizes just
// above the answer (those up to hi not probed yet). If one of them fails,
// ok is not monotone: the trace says so, and the search starts again above
// the highest failing probe. The answer n therefore passed, every probe at
// or above it passed, and so did the check sizes above it (or up to hi): it
// is the smallest size with no failing probe above it, which is the claim
// "the scheduler needs n nodes" that a report can make when ok is not
// monotone (online placement has anomalies: more room can admit a big pod
// that later blocks several small ones). Each size is probed at most once,
// so at most hi-lo+1 probes happen.
func CompactChecked(ctx context.Context, lo, hi, check int, ok func(ctx context.Context, nodes int) (bool, error)) (int, CompactTrace, error) {
	tr := CompactTrace{Lo: lo, Hi: hi}
	if lo < 1 || hi < lo {
		return 0, tr, fmt.Errorf("compaction: range [%d, %d] of node counts: want 1 <= lo <= hi", lo, hi)
	}
	if check < 0 {
		return 0, tr, fmt.Errorf("compaction: check %d: must not be negative", check)
	}
	seen := map[int]bool{}
	probe := func(n int) (bool, error) {
		if r, done := seen[n]; done {
			return r, nil
		}
		if err := ctx.Err(); err != nil {
			return false, fmt.Errorf("compaction stopped before probing %d nodes: %w", n, err)
		}
		r, err := ok(ctx, n)
		if err != nil {
			return false, fmt.Errorf("compaction probe at %d nodes: %w", n, err)
		}
		seen[n] = r
		tr.Probes = append(tr.Probes, Probe{Nodes: n, OK: r})
		if !r {
			for _, p := range tr.Probes {
				if p.OK && p.Nodes < n {
					tr.NonMonotone = true
				}
			}
		}
		return r, nil
	}
	pass, err := probe(hi)
	if err != nil {
		return 0, tr, err
	}
	if !pass {
		return 0, tr, fmt.Errorf("%w: %d nodes, the most searched, fail the predicate", ErrCompactionBound, hi)
	}
	l, r := lo, hi // r passed; every failing probe is below l
	for {
		for l < r {
			m := l + (r-l)/2
			pass, err := probe(m)
			if err != nil {
				return 0, tr, err
			}
			if pass {
				r = m
			} else {
				l = m + 1
			}
		}
		// Check the sizes above r. If one fails, start again above the
		// highest failing probe: every probe above it passed, and the
		// smallest of those (hi at worst) bounds the new range.
		bad := false
		for n := r + 1; n <= min(hi, r+check); n++ {
			pass, err := probe(n)
			if err != nil {
				return 0, tr, err
			}
			bad = bad || !pass
		}
		if !bad {
			break
		}
		l, r = lo, hi
		for _, p := range tr.Probes {
			if !p.OK {
				l = max(l, p.Nodes+1)
			}
		}
		for _, p := range tr.Probes {
			if p.OK && p.Nodes >= l {
				r = min(r, p.Nodes)
			}
		}
	}
	tr.Nodes = r
	return r, tr, nil
}

// AllowedUnschedulable is the most unschedulable pods that threshold (a
// share in [0, 1]) allows among pods: floor(threshold * pods), with a
// relative tolerance of 1e-9 so that a decimal threshold lands on the
// integer it means (0.29 of 100 is 29, although 0.29*100 is 28.999... in
// float64). 0.001 of 2,345 pods allows 2.
func AllowedUnschedulable(pods int64, threshold float64) int64 {
	if pods <= 0 || threshold <= 0 {
		return 0
	}
	return int64(math.Floor(threshold * float64(pods) * (1 + 1e-9)))
}

// Within reports whether a replay left at most threshold of its pods
// unschedulable: r.Unschedulable (pods still pending when the run ended,
// counted from the warm-up on) <= AllowedUnschedulable(r.Pods, threshold)
// (r.Pods: the pods that arrived, counted from the warm-up on).
func Within(r *sim.Result, threshold float64) bool {
	return r.Unschedulable <= AllowedUnschedulable(r.Pods, threshold)
}

// ResizedReplay is a compaction predicate: ok(n) replays w resized to n
// nodes (sim.Resize: w's first n nodes, or its nodes repeated) under cfg
// with a fresh scheduler from s (seeded with cfg.Seed), and reports
// whether the replay is Within threshold. keep, when not nil, gets every
// replay's result (named after s) with its node count. Several seeds are
// several predicates (one per workload and config), searched separately.
func ResizedReplay(w *sim.Workload, cfg sim.Config, s Scheduler, threshold float64, keep func(nodes int, r *sim.Result)) func(ctx context.Context, nodes int) (bool, error) {
	return func(ctx context.Context, nodes int) (bool, error) {
		rw, err := sim.Resize(w, nodes)
		if err != nil {
			return false, err
		}
		pol, err := s.New(cfg.Seed)
		if err != nil {
			return false, err
		}
		r, err := sim.Run(ctx, rw, cfg, pol)
		if err != nil {
			return false, fmt.Errorf("%s on %s: %w", s.Name, rw.Name, err)
		}
		r.Scheduler = s.Name
		if keep != nil {
			keep(nodes, r)
		}
		return Within(r, threshold), nil
	}
}

// String summarises the trace: its range, answer and probes by node count
// ("[10, 40]: 23 nodes; probes 22 fail, 23 ok, 25 ok, 40 ok").
func (t *CompactTrace) String() string {
	p := slices.Clone(t.Probes)
	slices.SortFunc(p, func(a, b Probe) int { return cmp.Compare(a.Nodes, b.Nodes) })
	parts := make([]string, len(p))
	for i, q := range p {
		parts[i] = fmt.Sprintf("%d fail", q.Nodes)
		if q.OK {
			parts[i] = fmt.Sprintf("%d ok", q.Nodes)
		}
	}
	s := fmt.Sprintf("[%d, %d]: %d nodes; probes %s", t.Lo, t.Hi, t.Nodes, strings.Join(parts, ", "))
	if t.NonMonotone {
		s += " (not monotone)"
	}
	return s
}
