package sweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

// Sweep modes (Spec.Mode).
const (
	// ModeEvaluate replays every evaluation cell at each size of eval.nodes
	// and tabulates the metrics per size (the default).
	ModeEvaluate = "evaluate"
	// ModeCompaction finds, per scheduler and workload, the fewest nodes
	// that run the workload with at most compaction.threshold of its pods
	// left unschedulable (Verma et al., "Evaluating job packing in
	// warehouse-scale computing", IEEE CLUSTER 2014).
	ModeCompaction = "compaction"
)

// Compaction configures mode: compaction. The workload of a cell is the
// test window sampled on eval.nodes machines (its pods and arrivals stay
// fixed); the search resizes the cluster under it (sim.Resize) between
// ceil(min_factor*n) and ceil(max_factor*n) nodes.
type Compaction struct {
	// Threshold is the largest share of the workload's pods that may be
	// left unschedulable at the end of the window (default 0.001: 0.1%).
	Threshold float64 `yaml:"threshold" json:"threshold"`
	// MinFactor and MaxFactor bound the search relative to the workload's
	// machine count (defaults 0.25 and 2).
	MinFactor float64 `yaml:"min_factor" json:"min_factor"`
	MaxFactor float64 `yaml:"max_factor" json:"max_factor"`
}

// DefaultCompaction is the compaction section's defaults.
func DefaultCompaction() Compaction {
	return Compaction{Threshold: 0.001, MinFactor: 0.25, MaxFactor: 2}
}

// validate checks the section, naming the key at fault.
func (c Compaction) validate() error {
	switch {
	case !(c.Threshold >= 0 && c.Threshold < 1):
		return fmt.Errorf("compaction.threshold = %v: want a share in [0, 1)", c.Threshold)
	case !(c.MinFactor > 0) || math.IsInf(c.MinFactor, 0):
		return fmt.Errorf("compaction.min_factor = %v: must be positive", c.MinFactor)
	case !(c.MaxFactor >= c.MinFactor) || math.IsInf(c.MaxFactor, 0):
		return fmt.Errorf("compaction.max_factor = %v: must be finite and at least compaction.min_factor (%v)", c.MaxFactor, c.MinFactor)
	}
	return nil
}

// bounds is the search range for a workload of n machines.
func (c Compaction) bounds(n int) (lo, hi int) {
	lo = max(1, int(math.Ceil(c.MinFactor*float64(n))))
	hi = max(lo, int(math.Ceil(c.MaxFactor*float64(n))))
	return lo, hi
}

// compactCase loads a case's workload once and, for each scheduler, finds
// the fewest nodes that run it within the threshold. Each row holds the
// workload's size in Nodes, the answer in Needed, the replay at that size
// in Result and every probe of the search. The spec has been validated, so
// the autoscaler is off (Spec.Validate refuses it in this mode).
func compactCase(ctx context.Context, c Case, scheds []Scheduler, comp Compaction) ([]Row, error) {
	w, cfg, err := c.load()
	if err != nil {
		return nil, err
	}
	lo, hi := comp.bounds(len(w.Nodes))
	rows := make([]Row, 0, len(scheds))
	for _, sc := range scheds {
		results := map[int]*sim.Result{}
		ok := ResizedReplay(w, cfg, sc, comp.Threshold, func(n int, r *sim.Result) {
			r.Samples = nil
			results[n] = r
		})
		// the two sizes above the answer are probed too, which catches
		// (and repairs) most non-monotone searches
		n, trace, err := CompactChecked(ctx, lo, hi, 2, ok)
		if errors.Is(err, ErrCompactionBound) {
			err = fmt.Errorf("%w: raise compaction.max_factor (%v)", err, comp.MaxFactor)
		}
		if err != nil {
			return nil, fmt.Errorf("compacting %s of %d machines under %s (seed %d): %w", c.Workload, c.Nodes, sc.Name, c.Seed, err)
		}
		rows = append(rows, Row{Nodes: c.Nodes, Seed: c.Seed, Workload: c.Workload, Result: results[n], Needed: n, Search: &trace})
	}
	return rows, nil
}

// CompactionSummary is the compaction table of one workload size.
type CompactionSummary struct {
	Nodes      int // machines the workloads were sampled on
	Seeds      int
	Windows    int
	Schedulers []string
	Needed     []Interval // per scheduler: nodes needed, mean and 95% CI over seeds x windows
	Min, Max   []int      // per scheduler: the fewest and most nodes needed over the workloads
	// Saving is per scheduler the paired difference kube-default - scheduler
	// in nodes (positive: fewer nodes than kube-default); NaN without a
	// kube-default row.
	Saving []Interval
}

// SummariseCompaction groups compaction rows by workload size and
// scheduler (in order of first appearance).
func SummariseCompaction(rows []Row) []CompactionSummary {
	var sizes []int
	for _, r := range rows {
		if !slices.Contains(sizes, r.Nodes) {
			sizes = append(sizes, r.Nodes)
		}
	}
	var out []CompactionSummary
	for _, n := range sizes {
		s := CompactionSummary{Nodes: n}
		type key struct {
			seed uint64
			wl   string
		}
		var keys []key
		needed := map[string]map[key]float64{}
		seeds := map[uint64]bool{}
		for _, r := range rows {
			if r.Nodes != n {
				continue
			}
			name := r.Result.Scheduler
			if needed[name] == nil {
				needed[name] = map[key]float64{}
				s.Schedulers = append(s.Schedulers, name)
			}
			k := key{r.Seed, r.Workload}
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
			needed[name][k] = float64(r.Needed)
			seeds[r.Seed] = true
		}
		// workloads per seed (a synthetic workload is named by its seed)
		s.Seeds, s.Windows = len(seeds), len(keys)/max(1, len(seeds))
		series := func(name string) []float64 {
			v := make([]float64, len(keys))
			for i, k := range keys {
				x, ok := needed[name][k]
				if !ok {
					x = math.NaN()
				}
				v[i] = x
			}
			return v
		}
		var ref []float64 // kube-default's, the savings' reference
		if _, ok := needed[sched.NameKubeDefault]; ok {
			ref = series(sched.NameKubeDefault)
		}
		for _, name := range s.Schedulers {
			v := series(name)
			s.Needed = append(s.Needed, MeanCI(v))
			lo, hi := math.MaxInt, 0
			for _, x := range v {
				if !math.IsNaN(x) {
					lo, hi = min(lo, int(x)), max(hi, int(x))
				}
			}
			s.Min, s.Max = append(s.Min, lo), append(s.Max, hi)
			if ref != nil {
				s.Saving = append(s.Saving, PairedCI(ref, v))
			} else {
				s.Saving = append(s.Saving, Interval{Mean: math.NaN(), Half: math.NaN()})
			}
		}
		out = append(out, s)
	}
	return out
}

// WriteCompaction renders compaction tables: per workload size, each
// scheduler's nodes needed (mean ± 95% CI, * the fewest), its range over
// the workloads, and the paired saving against kube-default in nodes and in
// percent of kube-default's mean.
func WriteCompaction(w io.Writer, title string, tables []CompactionSummary, threshold float64) error {
	var b strings.Builder
	for i, t := range tables {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s: workloads of %d machines, %d seeds x %d windows: nodes needed for at most %.2g%% unschedulable pods; mean ± 95%% CI (* fewest)\n",
			title, t.Nodes, t.Seeds, t.Windows, 100*threshold)
		best := math.Inf(1)
		for _, iv := range t.Needed {
			best = math.Min(best, iv.Mean)
		}
		kd := math.NaN()
		if k := slices.Index(t.Schedulers, sched.NameKubeDefault); k >= 0 {
			kd = t.Needed[k].Mean
		}
		header := []string{"scheduler", "nodes needed", "range", "saving vs kube-default", "saving %"}
		var body [][]string
		for s, name := range t.Schedulers {
			v := formatIV(t.Needed[s], 1, false)
			if t.Needed[s].Mean == best {
				v += "*"
			}
			saving, pct := "n/a", "n/a"
			switch {
			case name == sched.NameKubeDefault:
				saving, pct = "=", "="
			case !math.IsNaN(t.Saving[s].Mean):
				saving = formatIV(t.Saving[s], 1, true)
				if t.Saving[s].Excludes0() && !shownZero(saving) {
					saving += "!"
				}
				if kd > 0 {
					pct = fmt.Sprintf("%+.1f%%", 100*t.Saving[s].Mean/kd)
				}
			}
			body = append(body, []string{name, v, fmt.Sprintf("%d-%d", t.Min[s], t.Max[s]), saving, pct})
		}
		if err := writeAligned(&b, header, body); err != nil {
			return err
		}
		b.WriteString("saving: kube-default's nodes minus the scheduler's, paired by seed and window (! the 95% CI excludes 0)\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
