package dataset

import (
	"context"
	"fmt"
	"io"
	"math"
)

// Calibration targets: aggregates of real cluster-trace-v2018 rows
// (../shared/traces/calibration.md). batch_task figures come from a sample
// of 1,084 DAG jobs (27,306 tasks); machine_meta from all 17,592 rows of
// 4,034 machines; machine_usage from four machines (weak evidence).
var (
	// plan_cpu: quantiles 50/50/100/100/100/100 (p5..p99), max 200; the
	// share of 50 (44%) follows from the mean of 78.
	targetPlanCPU = dist{{50, 0}, {50, 0.44}, {100, 0.44}, {100, 0.99}, {200, 1}}
	// plan_mem: the published shares of its values (0.2: 30.6%, 0.3: 18.6%,
	// 0.39: 15.5%, 0.49: 26.6%, 0.59: 6.8%, empty 0.7%), over the non-empty
	// rows; the other 1.2% spread up to the maximum 0.97.
	targetPlanMem = dist{{0.2, 0}, {0.2, 0.308}, {0.3, 0.308}, {0.3, 0.4955}, {0.39, 0.4955}, {0.39, 0.6516},
		{0.49, 0.6516}, {0.49, 0.9194}, {0.59, 0.9194}, {0.59, 0.9879}, {0.97, 1}}
	// instance_num: 70% are 1; p75 3, p95 128, p99 874, max 31,939.
	targetInstances = dist{{1, 0}, {1, 0.70}, {3, 0.75}, {128, 0.95}, {874, 0.99}, {31939, 1}}
	// task duration (end - start), seconds: 1/4/12/62/504/1,671, max 5,129.
	targetDuration = dist{{0, 0}, {1, 0.05}, {4, 0.25}, {12, 0.5}, {62, 0.75}, {504, 0.95}, {1671, 0.99}, {5129, 1}}
	// tasks per DAG job: 2/4/11/27/101/127, max 199.
	targetTasks = dist{{1, 0}, {2, 0.05}, {4, 0.25}, {11, 0.5}, {27, 0.75}, {101, 0.95}, {127, 0.99}, {199, 1}}
	// DAG depth, longest chain in tasks: 2/3/4/7/10/19, max 54.
	targetDepth = dist{{1, 0}, {2, 0.05}, {3, 0.25}, {4, 0.5}, {7, 0.75}, {10, 0.95}, {19, 0.99}, {54, 1}}
	// dependencies per task: 0/0/1/1/3/8, max 19.
	targetDeps = dist{{0, 0}, {0, 0.25}, {1, 0.5}, {1, 0.75}, {3, 0.95}, {8, 0.99}, {19, 1}}
	// machines per failure_domain_1 value: 2/7/9/16/39/46; the maximum is
	// not published (60 assumed).
	targetDomainSize = dist{{1, 0}, {2, 0.05}, {7, 0.25}, {9, 0.5}, {16, 0.75}, {39, 0.95}, {46, 0.99}, {60, 1}}
	// machine_meta rows per machine over the 8 days: 1/2/3/6/10/15, mean
	// 4.4 (the maximum is not published; 20 assumed).
	targetEvents = dist{{1, 0}, {1, 0.05}, {2, 0.25}, {3, 0.5}, {6, 0.75}, {10, 0.95}, {15, 0.99}, {20, 1}}
	// machine memory utilisation, %: flat at about 91, p99 97, max 98.
	// CPU utilisation of busy machines, %: p5/p50/p95 23/39/66, mean 41.
)

// Targets for the figures that are not distributions.
const (
	TargetDispersion   = 10000   // variance / mean of instances started per 10 minutes
	TargetNonUsing     = 0.0003  // share of machine_meta rows whose status is not USING
	TargetJoining      = 0.036   // share of machines first seen after t = 0
	TargetMemUtil      = 91.0    // mean machine memory utilisation, %
	TargetMemDrift     = 0.0     // its trend, points per day
	TargetBusyCPU      = 41.0    // mean CPU utilisation of busy machines, %
	dispersionBin      = 600     // seconds
	busyMachineCPUMean = 15.0    // a machine whose mean CPU use is below this is idle
	targetDomainSpread = 0.695   // failure_domain_1 values spanning more than one failure_domain_2 value
	targetEventsPerDay = 0.42    // machine_meta rows per machine and day beyond the first
	targetInstanceMean = 42.0    // mean instance_num (for the report)
	targetDurationMean = 112.0   // mean task duration, s (for the report)
	targetTasksMean    = 25.2    // mean tasks per DAG job (for the report)
	targetDepthMean    = 5.15    // mean DAG depth (for the report)
	targetDepsMean     = 1.15    // mean dependencies per task (for the report)
	targetPlanMemMean  = 0.356   // mean plan_mem (for the report)
	targetPlanCPUMean  = 78.0    // mean plan_cpu (for the report)
	targetDomainMean   = 13.8    // 4,034 machines over 292 values
	targetEventsMean   = 4.4     // rows per machine over 8 days
	targetDomainMax    = 60.0    // assumed
	targetInstanceMax  = 31939.0 // largest instance_num
)

// FidelityRow compares one property of a trace with its target.
type FidelityRow struct {
	Property string
	// N is the trace's sample size (0 for a single figure).
	N int
	// Got and Want are p5, p25, p50, p75, p95, p99, mean and max; for a
	// single figure only Got[0] and Want[0] are set. NaN: not known.
	Got, Want [8]float64
	// KS is the Kolmogorov-Smirnov D between the trace's sample and the
	// target (NaN when no distribution is compared).
	KS float64
	// Single is true for a figure that is not a distribution.
	Single bool
}

// FidelityReport compares a trace's calibrated properties with the real
// figures of cluster-trace-v2018 or with another trace.
type FidelityReport struct {
	Trace, Against string // Against is empty for the built-in targets
	Stats          *TraceStats
	Rows           []FidelityRow
}

// Row returns the row of a property, and whether there is one.
func (r *FidelityReport) Row(property string) (FidelityRow, bool) {
	for _, row := range r.Rows {
		if row.Property == property {
			return row, true
		}
	}
	return FidelityRow{}, false
}

// Properties of the report, in its order.
const (
	PropPlanCPU    = "plan_cpu"
	PropPlanMem    = "plan_mem"
	PropInstances  = "instance_num"
	PropDuration   = "task duration, s"
	PropTasks      = "tasks per DAG job"
	PropDepth      = "DAG depth"
	PropDeps       = "dependencies per task"
	PropDomainSize = "machines per failure_domain_1"
	PropEvents     = "machine_meta rows per machine"
	PropDispersion = "dispersion index, instances started / 10 min"
	PropStarts     = "instances started / 10 min, mean"
	PropNonUsing   = "non-USING machine_meta rows, share"
	PropJoining    = "machines joining after t=0, share"
	PropSpread     = "failure_domain_1 spanning >1 failure_domain_2"
	PropMemUtil    = "machine memory utilisation, %"
	PropMemDrift   = "memory utilisation drift, points/day"
	PropBusyCPU    = "CPU utilisation of busy machines, %"
)

// Fidelity measures the converted trace in dir and compares it with the
// built-in targets (against == "") or with the converted trace in against.
//
// Against the built-in targets, a distribution's KS D is computed against
// the piecewise-linear CDF through the published quantiles (and shares,
// where calibration.md gives them), discretised with a continuity
// correction for integer-valued properties (see ksTarget). Against another
// trace, it is the two-sample KS D of the two traces' samples.
func Fidelity(ctx context.Context, dir, against string) (*FidelityReport, error) {
	st, err := MeasureTrace(ctx, dir)
	if err != nil {
		return nil, err
	}
	rep := &FidelityReport{Trace: dir, Against: against, Stats: st}
	var ref *TraceStats
	if against != "" {
		if ref, err = MeasureTrace(ctx, against); err != nil {
			return nil, err
		}
	}
	nan := math.NaN()
	type prop struct {
		name    string
		got     func(*TraceStats) []float64
		target  dist
		integer bool
		want    [8]float64 // published p5..p99, mean, max
	}
	props := []prop{
		{PropPlanCPU, func(s *TraceStats) []float64 { return s.PlanCPU }, targetPlanCPU, false,
			[8]float64{50, 50, 100, 100, 100, 100, targetPlanCPUMean, 200}},
		{PropPlanMem, func(s *TraceStats) []float64 { return s.PlanMem }, targetPlanMem, false,
			[8]float64{0.2, 0.2, 0.35, 0.49, 0.59, 0.59, targetPlanMemMean, 0.97}},
		{PropInstances, func(s *TraceStats) []float64 { return s.Instances }, targetInstances, true,
			[8]float64{1, 1, 1, 3, 128, 874, targetInstanceMean, targetInstanceMax}},
		{PropDuration, func(s *TraceStats) []float64 { return s.Duration }, targetDuration, true,
			[8]float64{1, 4, 12, 62, 504, 1671, targetDurationMean, 5129}},
		{PropTasks, func(s *TraceStats) []float64 { return s.Tasks }, targetTasks, true,
			[8]float64{2, 4, 11, 27, 101, 127, targetTasksMean, 199}},
		{PropDepth, func(s *TraceStats) []float64 { return s.Depth }, targetDepth, true,
			[8]float64{2, 3, 4, 7, 10, 19, targetDepthMean, 54}},
		{PropDeps, func(s *TraceStats) []float64 { return s.Deps }, targetDeps, true,
			[8]float64{0, 0, 1, 1, 3, 8, targetDepsMean, 19}},
		{PropDomainSize, func(s *TraceStats) []float64 { return s.DomainSize }, targetDomainSize, true,
			[8]float64{2, 7, 9, 16, 39, 46, targetDomainMean, nan}},
		{PropEvents, func(s *TraceStats) []float64 { return s.Events }, targetEvents, true,
			[8]float64{1, 2, 3, 6, 10, 15, targetEventsMean, nan}},
	}
	for _, p := range props {
		xs := p.got(st)
		row := FidelityRow{Property: p.name, N: len(xs), Got: summary(xs), Want: p.want, KS: ksTarget(xs, p.target, p.integer)}
		if ref != nil {
			ys := p.got(ref)
			row.Want, row.KS = summary(ys), ksSamples(xs, ys)
		}
		rep.Rows = append(rep.Rows, row)
	}
	single := func(name string, got, want float64, refGot func(*TraceStats) float64) {
		row := FidelityRow{Property: name, Single: true, KS: nan}
		for i := range row.Got {
			row.Got[i], row.Want[i] = nan, nan
		}
		row.Got[0], row.Want[0] = got, want
		if ref != nil {
			row.Want[0] = refGot(ref)
		}
		rep.Rows = append(rep.Rows, row)
	}
	single(PropDispersion, st.Dispersion, TargetDispersion, func(s *TraceStats) float64 { return s.Dispersion })
	single(PropStarts, st.StartsPerBin, 1100, func(s *TraceStats) float64 { return s.StartsPerBin })
	single(PropNonUsing, st.NonUsing, TargetNonUsing, func(s *TraceStats) float64 { return s.NonUsing })
	single(PropJoining, st.Joining, TargetJoining, func(s *TraceStats) float64 { return s.Joining })
	single(PropSpread, st.DomainSpread, targetDomainSpread, func(s *TraceStats) float64 { return s.DomainSpread })
	single(PropMemUtil, st.MemUtil, TargetMemUtil, func(s *TraceStats) float64 { return s.MemUtil })
	single(PropMemDrift, st.MemDrift, TargetMemDrift, func(s *TraceStats) float64 { return s.MemDrift })
	busy := len(rep.Rows)
	single(PropBusyCPU, st.BusyCPU, TargetBusyCPU, func(s *TraceStats) float64 { return s.BusyCPU })
	// the busy machines' CPU quantiles: p5, p50, p95 in the p5, p50, p95 columns
	r := &rep.Rows[busy]
	r.Single = false
	r.Got[6], r.Got[0], r.Got[2], r.Got[4] = st.BusyCPU, st.BusyCPUQ[0], st.BusyCPUQ[1], st.BusyCPUQ[2]
	r.Want[6], r.Want[0], r.Want[2], r.Want[4] = TargetBusyCPU, 23, 39, 66
	if ref != nil {
		r.Want[6], r.Want[0], r.Want[2], r.Want[4] = ref.BusyCPU, ref.BusyCPUQ[0], ref.BusyCPUQ[1], ref.BusyCPUQ[2]
	}
	mem := &rep.Rows[busy-2]
	mem.Single = false
	mem.Got[6], mem.Got[5], mem.Got[0] = st.MemUtil, st.MemP99, nan
	mem.Want[6], mem.Want[5], mem.Want[7], mem.Want[0] = TargetMemUtil, 97, 98, nan
	if ref != nil {
		mem.Want[6], mem.Want[5], mem.Want[7] = ref.MemUtil, ref.MemP99, nan
	}
	return rep, nil
}

// summary returns p5, p25, p50, p75, p95, p99, mean and max of sorted xs.
func summary(xs []float64) [8]float64 {
	var s [8]float64
	for i, p := range []float64{0.05, 0.25, 0.5, 0.75, 0.95, 0.99} {
		s[i] = quantile(xs, p)
	}
	s[6] = mean(xs)
	s[7] = math.NaN()
	if len(xs) > 0 {
		s[7] = xs[len(xs)-1]
	}
	return s
}

// Write prints the report as a table: per property the trace's figures on
// one line and the target's below, the KS D on the first.
func (r *FidelityReport) Write(w io.Writer) error {
	want := "target (calibration.md); KS D against the target's piecewise-linear CDF"
	if r.Against != "" {
		want = r.Against + "; two-sample KS D"
	}
	st := r.Stats
	if _, err := fmt.Fprintf(w, "trace %s: %d machines, %d machine_meta rows, %d jobs (%d DAG), span %.1f days\n"+
		"compared with: %s\n\n",
		r.Trace, st.Machines, st.MetaRows, st.Jobs, st.DAGJobs, float64(st.Span)/86400, want); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "%-46s %-6s %8s %8s %8s %8s %8s %8s %8s %8s %8s %6s\n",
		"property", "", "n", "p5", "p25", "p50", "p75", "p95", "p99", "mean", "max", "KS D"); err != nil {
		return err
	}
	for _, row := range r.Rows {
		if row.Single {
			if _, err := fmt.Fprintf(w, "%-46s %-6s %8s %8s   target %s\n", row.Property, "", "", num(row.Got[0]), num(row.Want[0])); err != nil {
				return err
			}
			continue
		}
		for k, v := range []*[8]float64{&row.Got, &row.Want} {
			name, label, n, ks := row.Property, "trace", fmt.Sprint(row.N), num(row.KS)
			if k == 1 {
				name, label, n, ks = "", "target", "", ""
			}
			line := fmt.Sprintf("%-46s %-6s %8s", name, label, n)
			for _, x := range v {
				line += fmt.Sprintf(" %8s", num(x))
			}
			if _, err := fmt.Fprintf(w, "%s %6s\n", line, ks); err != nil {
				return err
			}
		}
	}
	return nil
}

// num formats a figure compactly; NaN is "-".
func num(x float64) string {
	switch {
	case math.IsNaN(x):
		return "-"
	case x == math.Trunc(x) && math.Abs(x) < 1e7:
		return fmt.Sprintf("%.0f", x)
	case math.Abs(x) >= 100:
		return fmt.Sprintf("%.0f", x)
	case math.Abs(x) >= 1:
		return fmt.Sprintf("%.2f", x)
	case math.Abs(x) >= 0.001 || x == 0:
		return fmt.Sprintf("%.3f", x)
	}
	return fmt.Sprintf("%.1e", x)
}
