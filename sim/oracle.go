package sim

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// OraclePod is one measured pod as AdmissionOracle sees it: when it
// arrives, its memory request (MiB) and whether it is high-priority.
type OraclePod struct {
	Arrival Time
	Mem     int64
	High    bool
}

// OraclePods returns the pods of w that every replay under cfg measures and
// that have a pending-latency sample: the pods that arrive (no
// dependencies, an arrival at or after cfg.WarmUp and before w.End) and that
// the warm start did not place. Which pods those are, and when they arrive,
// does not depend on the scheduler. A workload with dependencies (a pod's
// arrival then depends on the schedule) or without an end is an error.
func OraclePods(w *Workload, cfg Config) ([]OraclePod, error) {
	if w.End == 0 {
		return nil, fmt.Errorf("oracle pods of %q: the workload has no end", w.Name)
	}
	for i := range w.Pods {
		if len(w.Pods[i].After) > 0 {
			return nil, fmt.Errorf("oracle pods of %q: pod %q has dependencies", w.Name, w.Pods[i].Name)
		}
	}
	e, err := New(w, cfg) // applies the warm start
	if err != nil {
		return nil, fmt.Errorf("oracle pods: %w", err)
	}
	var out []OraclePod
	for i := range w.Pods {
		p := &w.Pods[i]
		if e.pods[i].warm || !measured(w, cfg, p) {
			continue
		}
		out = append(out, OraclePod{Arrival: max(p.Arrival, 0), Mem: p.Requests.Mem, High: p.Priority >= High})
	}
	return out, nil
}

// AdmissionOracle returns the fewest pods that a set of pods left pending at
// end can have when it must (a) request at least atLeastMiB of memory in
// all and (b) be compatible with a high-priority censored pending p95
// (Result.HighPrioPendingP95CensoredMs) of at most p95. It is round 5's
// "oracle frontier" (docs/ppo.md, results/admission-round5/): how far any
// admission rule could go below a reference scheduler's count while leaving
// as much memory pending as it (the cluster ends full in memory) and
// keeping its p95, even with knowledge of the future. ok is false when no
// such set exists.
//
// The argument. Of the n high-priority pods, the p95 is the
// ceil(0.95 n)-th smallest wait (Percentile), so it is at most p95 only if
// at most A = n - ceil(0.95 n) of them wait longer than p95. A pod pending
// at end waits end - Arrival (censored), so among the high-priority pods
// older than p95 (end - Arrival > p95) at most A can be pending; the pods
// bound are assumed to wait no longer than p95, which only helps the set.
// The fewest pods reaching the memory are then the largest ones: the set
// takes pods in decreasing order of memory from the candidates, which are
// every low-priority pod, every young high-priority pod and the A largest
// old high-priority ones, until their memory reaches atLeastMiB. It ignores
// whether any schedule can leave exactly that set pending, so it is a
// bound on the rules, not a rule; and (a) is an empirical regularity (the
// pending memory varies by 5-10% between rules), not a law.
func AdmissionOracle(pods []OraclePod, end, p95 Time, atLeastMiB float64) (count int, ok bool) {
	if atLeastMiB <= 0 {
		return 0, true // the empty set (round 5's script counted one pod here)
	}
	var n int
	for _, p := range pods {
		if p.High {
			n++
		}
	}
	slots := n - int(math.Ceil(0.95*float64(n)))
	var old, cand []int64
	for _, p := range pods {
		if p.High && end-p.Arrival > p95 {
			old = append(old, p.Mem)
		} else {
			cand = append(cand, p.Mem)
		}
	}
	desc := func(a, b int64) int { return cmp.Compare(b, a) }
	slices.SortFunc(old, desc)
	cand = append(cand, old[:min(slots, len(old))]...)
	slices.SortFunc(cand, desc)
	var sum int64
	for k, m := range cand {
		sum += m
		if float64(sum) >= atLeastMiB {
			return k + 1, true
		}
	}
	return 0, false
}
