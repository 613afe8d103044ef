package sweep

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

// Metric is a column of the summary tables: a number read from a replay's
// result, in the unit of its header. Lower is better for every metric of
// the focused set.
type Metric struct {
	Key    string // the sim.Result JSON key it reads
	Header string
	Digits int
	Value  func(r *sim.Result) float64
	// Bound says whether the fluid relaxation's value estimates a limit
	// for this metric (see FluidBound); the others read n/a in its row.
	Bound bool
	// Lower says whether AdmissionBound's row has a value for this metric
	// (a lower bound); the others read n/a in its row.
	Lower bool
}

// Focused are the columns of the summary tables (every metric stays in the
// JSON and CSV outputs): unschedulable pods; high-priority pending latency
// (mean and p95, in seconds, pods never bound censored at the window end);
// SLA violations of any kind per 1,000 pods; expected fragmentation of CPU
// and memory (percent of free); node CPU-utilisation variance (x 1e-4); the
// hottest node's CPU utilisation, averaged over time (percent; the share of
// time with a hot node while the cluster is not busy, hot_node_share, is in
// the JSON and CSV outputs); node-hours.
var Focused = []Metric{
	{"unschedulable", "unsched", 1, func(r *sim.Result) float64 { return float64(r.Unschedulable) }, true, true},
	{"high_prio_pending_mean_ms", "hi pend s", 1, func(r *sim.Result) float64 { return r.HighPrioPendingMeanMs / 1000 }, true, false},
	{"high_prio_pending_p95_censored_ms", "hi p95 s", 1, func(r *sim.Result) float64 { return r.HighPrioPendingP95CensoredMs / 1000 }, true, false},
	{"sla_any_per_1k", "sla/1k", 1, func(r *sim.Result) float64 { return r.SLAAnyPer1k }, false, false},
	{"frag_exp_cpu", "frag cpu%", 1, func(r *sim.Result) float64 { return 100 * r.FragExpCPU }, false, false},
	{"frag_exp_mem", "frag mem%", 1, func(r *sim.Result) float64 { return 100 * r.FragExpMem }, false, false},
	{"node_cpu_var_mean", "var e-4", 2, func(r *sim.Result) float64 { return 1e4 * r.NodeCPUVarMean }, false, false},
	{"max_node_cpu_util_mean", "max node%", 1, func(r *sim.Result) float64 { return 100 * float64(r.MaxNodeCPUUtilMean) }, false, false},
	{"node_hours", "node-h", 1, func(r *sim.Result) float64 { return r.NodeHours }, false, false},
}

// AfterGrace is the column that the tables add, last, when the simulator
// runs a grace period after each window (sim.Config.Grace): of the pods
// pending at the window's end, those still pending after it. Neither bound
// row bounds it (both reason about the window's end), so they read n/a.
var AfterGrace = Metric{"unschedulable_after_grace", "+grace", 1, func(r *sim.Result) float64 { return float64(r.UnschedulableAfterGrace) }, false, false}

// MetricsFor returns the summary tables' columns: Focused, and AfterGrace
// after them when grace is set. Appending keeps Focused's indices, which
// the plots use.
func MetricsFor(grace bool) []Metric {
	if !grace {
		return Focused
	}
	return append(slices.Clip(Focused), AfterGrace)
}

// Learned is the row name of the learned policy; every other scheduler
// but the bound rows (FluidBound, AdmissionBound) is a heuristic.
const Learned = "ppo"

// reference reports whether the summary tables may take their differences
// against scheduler name: a heuristic that sched registers by itself, not
// the learned policy, a bound row, or a variant with a size cap or an
// admission rule (sched.Variant). A variant is measured against the
// heuristics, as the learned policy is.
func reference(name string) bool { return name != Learned && !isBound(name) && !sched.Variant(name) }

// FluidBound is the row name of the fluid relaxation (sim.Fluid): each
// workload replayed on one node that pools the cluster's capacity. It
// estimates how far placement could go for the metrics marked Bound; it is
// not a scheduler, so it is never the best of a column nor the heuristic
// the differences are taken against, and its difference against the best
// heuristic is the distance to the estimate. It is an estimate, not a
// bound: near saturation greedy online admission on the pooled node can
// leave more pods unschedulable than a real cluster (sim.Fluid says why).
const FluidBound = "fluid-bound"

// AdmissionBound is the row name of sim.AdmissionBound: a lower bound on
// the unschedulable pods of each workload that no scheduler can beat (the
// metrics marked Lower; n/a elsewhere). Like FluidBound it is never the
// best of a column nor the heuristic the differences are taken against;
// its difference against the best heuristic is the headroom that remains.
const AdmissionBound = "admission-bound"

// isBound reports whether name is a bound row rather than a scheduler.
func isBound(name string) bool { return name == FluidBound || name == AdmissionBound }

// gives reports whether the row of scheduler name has a value for mt:
// bound rows only for the metrics they bound.
func gives(name string, mt Metric) bool {
	switch name {
	case FluidBound:
		return mt.Bound
	case AdmissionBound:
		return mt.Lower
	}
	return true
}

// Cell is one scheduler's value of one metric at one size: the mean and
// 95% interval over seeds (each seed's value the mean over its windows), and
// the paired difference against the best heuristic of the column.
type Cell struct {
	Interval
	// Diff is this scheduler minus the best heuristic, paired by seed; zero
	// N for the best heuristic itself.
	Diff Interval
	// Best marks the lowest mean in the column; BestHeuristic the
	// heuristic the differences are taken against.
	Best, BestHeuristic bool
}

// SizeSummary is the summary table of one cluster size.
type SizeSummary struct {
	Nodes      int
	Seeds      int
	Windows    int // workloads per seed (test windows, or 1 synthetic workload)
	Schedulers []string
	// Cells[s][m] is scheduler s, metric m of the metrics summarised
	// (Focused, or MetricsFor's).
	Cells [][]Cell
	// HiUnbound is the largest share, over the table's schedulers (bound
	// rows aside), of high-priority pods never bound, and HiUnboundBy that
	// scheduler; NaN without high-priority pods. Above 5% the censored
	// p95 is a quantile of the unbound pods' waits to the window's end, so
	// it orders schedulers by when those pods arrived (WriteSummary then
	// says so under the table; docs/suite.md, "The latency clause").
	HiUnbound   float64
	HiUnboundBy string
}

// censoredP95Limit is the share of never-bound high-priority pods above
// which a censored p95 stops being a latency.
const censoredP95Limit = 0.05

// Summarise builds one table per size from rows (as Replay returns them):
// per scheduler and seed, each metric is averaged over the seed's windows;
// the table gives the mean and 95% interval over seeds, and the difference
// against the best heuristic paired by seed. Sizes and schedulers keep their
// order of first appearance.
func Summarise(rows []Row, metrics []Metric) []SizeSummary {
	type key struct {
		n    int
		name string
		seed uint64
	}
	sums := map[key][]float64{}
	counts := map[key][]int{}
	var sizes []int
	names := map[int][]string{}
	seeds := map[int][]uint64{}
	windows := map[key]int{} // workloads per (size, scheduler, seed)
	type sizeSched struct {
		n    int
		name string
	}
	hiPods, hiNever := map[sizeSched]int{}, map[sizeSched]int{}
	for _, r := range rows {
		n, name := r.Nodes, r.Result.Scheduler
		if !slices.Contains(sizes, n) {
			sizes = append(sizes, n)
		}
		if !slices.Contains(names[n], name) {
			names[n] = append(names[n], name)
		}
		if !slices.Contains(seeds[n], r.Seed) {
			seeds[n] = append(seeds[n], r.Seed)
		}
		k := key{n, name, r.Seed}
		windows[k]++
		if !isBound(name) {
			hiPods[sizeSched{n, name}] += r.Result.HighPrioCensored.Count
			hiNever[sizeSched{n, name}] += r.Result.HighPrioCensored.Censored
		}
		if sums[k] == nil {
			sums[k], counts[k] = make([]float64, len(metrics)), make([]int, len(metrics))
		}
		for m, mt := range metrics {
			if !gives(name, mt) {
				continue // n/a: one node's fragmentation or variance says nothing, the bound bounds one metric
			}
			if v := mt.Value(r.Result); !math.IsNaN(v) {
				sums[k][m] += v
				counts[k][m]++
			}
		}
	}
	var out []SizeSummary
	for _, n := range sizes {
		t := SizeSummary{Nodes: n, Seeds: len(seeds[n]), Windows: windows[key{n, names[n][0], seeds[n][0]}], Schedulers: names[n]}
		t.HiUnbound = math.NaN()
		for _, name := range names[n] {
			if c := hiPods[sizeSched{n, name}]; c > 0 {
				if sh := float64(hiNever[sizeSched{n, name}]) / float64(c); math.IsNaN(t.HiUnbound) || sh > t.HiUnbound {
					t.HiUnbound, t.HiUnboundBy = sh, name
				}
			}
		}
		// perSeed[s][m][k]: scheduler s, metric m, seed k
		perSeed := make([][][]float64, len(names[n]))
		for s, name := range names[n] {
			perSeed[s] = make([][]float64, len(metrics))
			for m := range metrics {
				v := make([]float64, len(seeds[n]))
				for k, sd := range seeds[n] {
					v[k] = math.NaN()
					if c := counts[key{n, name, sd}]; c != nil && c[m] > 0 {
						v[k] = sums[key{n, name, sd}][m] / float64(c[m])
					}
				}
				perSeed[s][m] = v
			}
		}
		t.Cells = make([][]Cell, len(names[n]))
		for s := range names[n] {
			t.Cells[s] = make([]Cell, len(metrics))
			for m := range metrics {
				t.Cells[s][m].Interval = MeanCI(perSeed[s][m])
			}
		}
		for m := range metrics {
			best, bestH := -1, -1
			for s, name := range names[n] {
				mean := t.Cells[s][m].Mean
				if math.IsNaN(mean) || isBound(name) {
					continue
				}
				if best < 0 || mean < t.Cells[best][m].Mean {
					best = s
				}
				if reference(name) && (bestH < 0 || mean < t.Cells[bestH][m].Mean) {
					bestH = s
				}
			}
			for s, name := range names[n] {
				if best >= 0 && !isBound(name) && t.Cells[s][m].Mean == t.Cells[best][m].Mean {
					t.Cells[s][m].Best = true // ties are all best
				}
			}
			if bestH < 0 {
				continue
			}
			t.Cells[bestH][m].BestHeuristic = true
			for s := range names[n] {
				if s != bestH {
					t.Cells[s][m].Diff = PairedCI(perSeed[s][m], perSeed[bestH][m])
				}
			}
		}
		out = append(out, t)
	}
	return out
}

// formatIV writes mean±half with the metric's digits, fewer for large
// values (none from 100, one from 10), so that columns stay narrow; "n/a"
// without a value, no ± without an interval.
func formatIV(iv Interval, digits int, sign bool) string {
	if math.IsNaN(iv.Mean) {
		return "n/a"
	}
	switch a := math.Abs(iv.Mean); {
	case a >= 100:
		digits = 0
	case a >= 10:
		digits = min(digits, 1)
	}
	m := strconv.FormatFloat(iv.Mean, 'f', digits, 64)
	if sign && iv.Mean >= 0 {
		m = "+" + m
	}
	if math.IsNaN(iv.Half) {
		return m
	}
	return m + "±" + strconv.FormatFloat(iv.Half, 'f', digits, 64)
}

// shownZero reports whether a formatted difference reads as zero ("+0.0",
// "-0.00±0.01").
func shownZero(s string) bool {
	m, _, _ := strings.Cut(s, "±")
	return strings.Trim(m, "+-0.") == ""
}

// WriteSummary renders the summary tables of an experiment: per size, the
// mean ± 95% interval over seeds of each focused metric (* marks the best
// mean of a column), then the paired difference against the column's best
// heuristic (= marks that heuristic; ! marks a difference whose interval
// excludes 0). title names the experiment; outside(n) says whether size n
// lies outside the training range.
func WriteSummary(w io.Writer, title string, tables []SizeSummary, metrics []Metric, outside func(n int) bool) error {
	var b strings.Builder
	for i, t := range tables {
		if i > 0 {
			b.WriteByte('\n')
		}
		note := ""
		if outside != nil && outside(t.Nodes) {
			note = ", outside the training range"
		}
		fmt.Fprintf(&b, "%s: %d nodes%s: %d seeds x %d windows, paired; mean ± 95%% CI over seeds (* best)\n",
			title, t.Nodes, note, t.Seeds, t.Windows)
		header := []string{"scheduler"}
		for _, m := range metrics {
			header = append(header, m.Header)
		}
		body := make([][]string, len(t.Schedulers))
		diff := make([][]string, len(t.Schedulers))
		for s, name := range t.Schedulers {
			body[s] = []string{name}
			diff[s] = []string{name}
			for m, mt := range metrics {
				c := t.Cells[s][m]
				v := formatIV(c.Interval, mt.Digits, false)
				if c.Best {
					v += "*"
				}
				body[s] = append(body[s], v)
				switch {
				case c.BestHeuristic:
					diff[s] = append(diff[s], "=")
				case c.Diff.N == 0:
					diff[s] = append(diff[s], "n/a")
				default:
					d := formatIV(c.Diff, mt.Digits, true)
					// "!" only where the shown difference is not zero: a
					// difference below the column's precision (+0.0±0.0) is
					// not one a reader can act on
					if c.Diff.Excludes0() && !shownZero(d) {
						d += "!"
					}
					diff[s] = append(diff[s], d)
				}
			}
		}
		if err := writeAligned(&b, header, body); err != nil {
			return err
		}
		if t.HiUnbound > censoredP95Limit && slices.ContainsFunc(metrics, func(m Metric) bool { return m.Key == "high_prio_pending_p95_censored_ms" }) {
			fmt.Fprintf(&b, "note: %.0f%% of high-priority pods never bound (%s): hi p95 s is then a quantile of their\n"+
				"waits to the window's end, ordering schedulers by when they arrived; compare sla/1k (docs/suite.md)\n",
				100*t.HiUnbound, t.HiUnboundBy)
		}
		fmt.Fprintf(&b, "difference against the best heuristic of each column (=), paired by seed (! the 95%% CI excludes 0)\n")
		if err := writeAligned(&b, header, diff); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeAligned writes a plain text table with tablewriter: no borders, the
// first column left-aligned and the others right-aligned, columns one
// space apart (values hold no spaces), a rule under the header.
func writeAligned(b *strings.Builder, header []string, rows [][]string) error {
	align := make(tw.Alignment, len(header))
	for i := range align {
		align[i] = tw.AlignRight
	}
	align[0] = tw.AlignLeft
	t := tablewriter.NewTable(b,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: tw.NewSymbols(tw.StyleASCII),
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenColumns: tw.Off, BetweenRows: tw.Off},
				Lines:      tw.Lines{ShowHeaderLine: tw.On},
			},
		})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithTrimSpace(tw.Off),
		tablewriter.WithAlignment(align),
		tablewriter.WithPadding(tw.Padding{Left: "", Right: " ", Overwrite: true}),
	)
	t.Header(header)
	if err := t.Bulk(rows); err != nil {
		return fmt.Errorf("writing table: %w", err)
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("writing table: %w", err)
	}
	return nil
}
