package dataset

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
)

// TraceStats are the samples and figures of one converted trace that the
// fidelity report compares.
type TraceStats struct {
	// Samples, sorted, of the tasks of DAG jobs (jobs whose task names all
	// encode a DAG, like M5_3_4) and of the DAG jobs themselves.
	PlanCPU, PlanMem, Instances, Duration []float64
	Tasks, Depth, Deps                    []float64
	// DomainSize is machines per failure_domain_1 value; Events is
	// machine_meta rows per machine.
	DomainSize, Events []float64

	// Dispersion is the index of dispersion (variance / mean) of batch
	// instances started per 10 minutes (from batch_instance's start times,
	// or batch_task's instance_num at each task's start without it), over
	// the 10-minute bins from the first start to the last; StartsPerBin is
	// their mean.
	Dispersion, StartsPerBin float64
	// NonUsing is the share of machine_meta rows whose status is not
	// USING; Joining the share of machines first seen after t = 0;
	// DomainSpread the share of failure_domain_1 values seen with more
	// than one failure_domain_2 value.
	NonUsing, Joining, DomainSpread float64
	Machines, MetaRows              int
	// MemUtil is the mean machine memory utilisation (%), MemP99 its 99th
	// percentile, MemDrift the slope of its hourly means (points per day,
	// least squares); BusyCPU the mean CPU utilisation of machines whose
	// mean is at least 15%, BusyCPUQ its p5/p50/p95. NaN without
	// machine_usage.
	MemUtil, MemP99, MemDrift, BusyCPU float64
	BusyCPUQ                           [3]float64
	// Span is the largest time stamp of machine_meta and the batch tables, seconds.
	Span int64
	// DAGJobs and Jobs count the jobs of batch_task.
	DAGJobs, Jobs int
}

// MeasureTrace reads the converted trace in dir (Arrow files and manifest,
// as Convert writes them) and computes its TraceStats. Missing tables leave
// their figures empty (NaN).
func MeasureTrace(ctx context.Context, dir string) (*TraceStats, error) {
	src, err := openArrowSource(dir)
	if err != nil {
		return nil, err
	}
	st := &TraceStats{Dispersion: math.NaN(), StartsPerBin: math.NaN(), NonUsing: math.NaN(), Joining: math.NaN(),
		DomainSpread: math.NaN(), MemUtil: math.NaN(), MemP99: math.NaN(), MemDrift: math.NaN(), BusyCPU: math.NaN(),
		BusyCPUQ: [3]float64{math.NaN(), math.NaN(), math.NaN()}}
	if src.has(MachineMeta) {
		if err := st.machineMeta(ctx, src); err != nil {
			return nil, fmt.Errorf("measuring %s: %w", dir, err)
		}
	}
	if src.has(BatchTask) {
		if err := st.batchTasks(ctx, src); err != nil {
			return nil, fmt.Errorf("measuring %s: %w", dir, err)
		}
	}
	if src.has(BatchInstance) {
		if err := st.instanceStarts(ctx, src); err != nil {
			return nil, fmt.Errorf("measuring %s: %w", dir, err)
		}
	}
	if src.has(MachineUsage) {
		if err := st.machineUsage(ctx, src); err != nil {
			return nil, fmt.Errorf("measuring %s: %w", dir, err)
		}
	}
	for _, xs := range [][]float64{st.PlanCPU, st.PlanMem, st.Instances, st.Duration, st.Tasks, st.Depth, st.Deps, st.DomainSize, st.Events} {
		sort.Float64s(xs)
	}
	return st, nil
}

func (st *TraceStats) machineMeta(ctx context.Context, src source) error {
	type mach struct {
		first int64
		rows  int
	}
	machines := make(map[string]*mach) // keys are copies: records alias memory unmapped after each batch
	canon := make(map[*mach]string)
	domain := make(map[int64]map[string]bool)
	spread := make(map[int64]map[string]bool)
	nonUsing := 0
	err := src.scan(ctx, MachineMeta, allRows, func(rec arrow.Record) error {
		id, tm, fd1, fd2, status := strColumn(rec, mmMachine), intColumn(rec, mmTime), intColumn(rec, mmDomain1),
			strColumn(rec, mmDomain2), strColumn(rec, mmStatus)
		for i := range int(rec.NumRows()) {
			name, ok := id.value(i)
			if !ok {
				continue
			}
			t, _ := tm.get(i)
			st.Span = max(st.Span, t)
			st.MetaRows++
			if s, _ := status.value(i); s != "USING" {
				nonUsing++
			}
			m := machines[name]
			if m == nil {
				m = &mach{first: t}
				machines[strings.Clone(name)] = m
				canon[m] = strings.Clone(name)
			}
			name = canon[m]
			m.first = min(m.first, t)
			m.rows++
			if d, ok := fd1.get(i); ok {
				if domain[d] == nil {
					domain[d], spread[d] = make(map[string]bool), make(map[string]bool)
				}
				if !domain[d][name] {
					domain[d][name] = true
				}
				if d2, ok := fd2.value(i); ok && !spread[d][d2] {
					spread[d][strings.Clone(d2)] = true
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	st.Machines = len(machines)
	joining := 0
	for _, m := range machines {
		if m.first > 0 {
			joining++
		}
		st.Events = append(st.Events, float64(m.rows))
	}
	spanning := 0
	for d, ms := range domain {
		st.DomainSize = append(st.DomainSize, float64(len(ms)))
		if len(spread[d]) > 1 {
			spanning++
		}
	}
	if st.MetaRows > 0 {
		st.NonUsing = float64(nonUsing) / float64(st.MetaRows)
		st.Joining = float64(joining) / float64(len(machines))
	}
	if len(domain) > 0 {
		st.DomainSpread = float64(spanning) / float64(len(domain))
	}
	return nil
}

// fidTask is one batch_task row as the report needs it.
type fidTask struct {
	name             string
	n, start, end    int64
	cpu, mem         float64
	hasStart, hasEnd bool
}

func (st *TraceStats) batchTasks(ctx context.Context, src source) error {
	jobIndex := make(map[string]int) // job name (a copy) -> index in jobs
	var jobs [][]fidTask
	var starts []fidTask // for the dispersion without batch_instance
	err := src.scan(ctx, BatchTask, allRows, func(rec arrow.Record) error {
		task, num, job := strColumn(rec, btTask), intColumn(rec, btInstances), strColumn(rec, btJob)
		start, end, cpu, mem := intColumn(rec, btStart), intColumn(rec, btEnd), realColumn(rec, btCPU), realColumn(rec, btMem)
		for i := range int(rec.NumRows()) {
			jn, ok1 := job.value(i)
			tn, ok2 := task.value(i)
			if !ok1 || !ok2 {
				continue
			}
			t := fidTask{name: strings.Clone(tn), cpu: cpu.getOrNaN(i), mem: mem.getOrNaN(i)}
			t.n, _ = num.get(i)
			t.start, t.hasStart = start.get(i)
			t.end, t.hasEnd = end.get(i)
			st.Span = max(st.Span, t.start, t.end)
			k, ok := jobIndex[jn]
			if !ok {
				k = len(jobs)
				jobIndex[strings.Clone(jn)] = k
				jobs = append(jobs, nil)
			}
			jobs[k] = append(jobs[k], t)
			if t.hasStart && t.start > 0 && t.n > 0 {
				starts = append(starts, fidTask{n: t.n, start: t.start})
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	st.Jobs = len(jobs)
	for _, tasks := range jobs {
		st.dagJob(tasks)
	}
	if !src.has(BatchInstance) {
		var bins []float64
		for _, t := range starts {
			b := int(t.start / dispersionBin)
			for len(bins) <= b {
				bins = append(bins, 0)
			}
			bins[b] += float64(t.n)
		}
		st.setDispersion(bins)
	}
	return nil
}

// dagJob adds the figures of one job when all its task names encode a DAG.
func (st *TraceStats) dagJob(tasks []fidTask) {
	deps := make(map[int][]int, len(tasks))
	for _, t := range tasks {
		id, d, ok := parseTaskName(t.name)
		if !ok {
			return
		}
		deps[id] = d
	}
	st.DAGJobs++
	st.Tasks = append(st.Tasks, float64(len(tasks)))
	// the longest chain, in tasks; dependencies on tasks missing from the
	// job are ignored, and a cycle is cut where it closes
	depth := make(map[int]int, len(deps))
	var chain func(id int) int
	chain = func(id int) int {
		if d, ok := depth[id]; ok {
			return max(d, 1) // 0: on the current path (a cycle)
		}
		depth[id] = 0
		best := 0
		for _, d := range deps[id] {
			if _, ok := deps[d]; ok {
				best = max(best, chain(d))
			}
		}
		depth[id] = best + 1
		return best + 1
	}
	longest := 0
	for _, t := range tasks {
		id, d, _ := parseTaskName(t.name)
		longest = max(longest, chain(id))
		st.Deps = append(st.Deps, float64(len(d)))
		if !math.IsNaN(t.cpu) {
			st.PlanCPU = append(st.PlanCPU, t.cpu)
		}
		if !math.IsNaN(t.mem) {
			st.PlanMem = append(st.PlanMem, t.mem)
		}
		if t.n > 0 {
			st.Instances = append(st.Instances, float64(t.n))
		}
		if t.hasStart && t.hasEnd && t.start > 0 && t.end >= t.start {
			st.Duration = append(st.Duration, float64(t.end-t.start))
		}
	}
	st.Depth = append(st.Depth, float64(longest))
}

func (st *TraceStats) instanceStarts(ctx context.Context, src source) error {
	var bins []float64
	err := src.scan(ctx, BatchInstance, allRows, func(rec arrow.Record) error {
		start := intColumn(rec, biStart)
		for i := range int(rec.NumRows()) {
			s, ok := start.get(i)
			if !ok || s <= 0 {
				continue
			}
			st.Span = max(st.Span, s)
			b := int(s / dispersionBin)
			for len(bins) <= b {
				bins = append(bins, 0)
			}
			bins[b]++
		}
		return nil
	})
	if err != nil {
		return err
	}
	st.setDispersion(bins)
	return nil
}

// setDispersion computes the index over the bins from the first non-empty
// one to the last.
func (st *TraceStats) setDispersion(bins []float64) {
	lo := 0
	for lo < len(bins) && bins[lo] == 0 {
		lo++
	}
	if lo < len(bins) {
		st.Dispersion, st.StartsPerBin = dispersion(bins[lo:])
	}
}

func (st *TraceStats) machineUsage(ctx context.Context, src source) error {
	type acc struct{ sum, n float64 }
	var memHist, cpuBusy [102]float64
	days := make(map[int64]*acc)                 // by hour
	perMachine := make(map[string]*[102]float64) // CPU histogram per machine
	err := src.scan(ctx, MachineUsage, allRows, func(rec arrow.Record) error {
		id, tm, cpu, mem := strColumn(rec, muMachine), realColumn(rec, muTime), intColumn(rec, muCPU), intColumn(rec, muMem)
		for i := range int(rec.NumRows()) {
			t, ok := tm.get(i)
			if !ok {
				continue
			}
			if m, ok := mem.get(i); ok && m >= 0 && m <= 100 {
				memHist[m]++
				d := int64(t / 3600)
				if days[d] == nil {
					days[d] = &acc{}
				}
				days[d].sum += float64(m)
				days[d].n++
			}
			if c, ok := cpu.get(i); ok && c >= 0 && c <= 100 {
				name, _ := id.value(i)
				h := perMachine[name]
				if h == nil {
					h = new([102]float64)
					perMachine[strings.Clone(name)] = h
				}
				h[c]++
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	st.MemUtil, st.MemP99 = histMean(memHist[:]), histQuantile(memHist[:], 0.99)
	// least-squares slope of the hourly means, per day
	var xs, ys []float64
	hours := make([]int64, 0, len(days))
	for h := range days {
		hours = append(hours, h)
	}
	slices.Sort(hours) // a fixed order: the same sums every time
	for _, h := range hours {
		xs, ys = append(xs, float64(h)/24), append(ys, days[h].sum/days[h].n)
	}
	if len(xs) >= 2 {
		mx, my := mean(xs), mean(ys)
		var sxy, sxx float64
		for i := range xs {
			sxy += (xs[i] - mx) * (ys[i] - my)
			sxx += (xs[i] - mx) * (xs[i] - mx)
		}
		st.MemDrift = sxy / sxx
	}
	for _, h := range perMachine {
		if histMean(h[:]) >= busyMachineCPUMean {
			for c, n := range h {
				cpuBusy[c] += n
			}
		}
	}
	st.BusyCPU = histMean(cpuBusy[:])
	for i, p := range []float64{0.05, 0.5, 0.95} {
		st.BusyCPUQ[i] = histQuantile(cpuBusy[:], p)
	}
	return nil
}

func histMean(h []float64) float64 {
	var s, n float64
	for v, c := range h {
		s += float64(v) * c
		n += c
	}
	if n == 0 {
		return math.NaN()
	}
	return s / n
}

func histQuantile(h []float64, p float64) float64 {
	n := 0.0
	for _, c := range h {
		n += c
	}
	if n == 0 {
		return math.NaN()
	}
	k, seen := math.Ceil(p*n), 0.0
	for v, c := range h {
		seen += c
		if seen >= k {
			return float64(v)
		}
	}
	return float64(len(h) - 1)
}
