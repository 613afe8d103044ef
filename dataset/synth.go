package dataset

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// SynthOptions controls the synthetic trace. Zero fields take the defaults
// of DefaultSynthOptions.
type SynthOptions struct {
	// Machines is the number of machines in service at t = 0 (96 cores,
	// normalised memory 100 each); 3.6% more (of all) join during the
	// trace, as in the real one: 400 give 415 machines, 15 joining.
	Machines int
	Days     float64 // trace length in days
	Seed     uint64
	// BatchConcurrency is the mean number of batch instances running per
	// machine; it sets the batch job arrival rate. The real trace runs
	// several dozen; a small value keeps files small.
	BatchConcurrency float64
	// MachineUsageStep and ContainerUsageStep are the sampling periods of
	// machine_usage and container_usage, in seconds (the real trace samples
	// about every 10 s).
	MachineUsageStep   int64
	ContainerUsageStep int64
}

// DefaultSynthOptions is the trace that EnsureDefault generates: 400
// machines over 2 days, enough to sample different sets of 10 to 200
// machines per seed (78 MB of CSV, 35 MB of LZ4-compressed Arrow). Changing it makes existing
// default traces regenerate (EnsureDefault compares it with the trace's
// stamp).
func DefaultSynthOptions() SynthOptions {
	return SynthOptions{Machines: 400, Days: 2, Seed: 1, BatchConcurrency: 0.4, MachineUsageStep: 300, ContainerUsageStep: 1800}
}

func (o *SynthOptions) defaults() error {
	d := DefaultSynthOptions()
	if o.Machines == 0 {
		o.Machines = d.Machines
	}
	if o.Days == 0 {
		o.Days = d.Days
	}
	if o.BatchConcurrency == 0 {
		o.BatchConcurrency = d.BatchConcurrency
	}
	if o.MachineUsageStep == 0 {
		o.MachineUsageStep = d.MachineUsageStep
	}
	if o.ContainerUsageStep == 0 {
		o.ContainerUsageStep = d.ContainerUsageStep
	}
	switch {
	case o.Machines < 1 || o.Machines > 1_000_000:
		return fmt.Errorf("synth options: machines %d out of [1, 1000000]", o.Machines)
	case !(o.Days >= 1.0/24) || o.Days > 366:
		return fmt.Errorf("synth options: days %v out of [1/24, 366]", o.Days)
	case !(o.BatchConcurrency >= 0) || o.BatchConcurrency > 1000:
		return fmt.Errorf("synth options: batch concurrency %v out of [0, 1000]", o.BatchConcurrency)
	case o.MachineUsageStep < 10 || o.ContainerUsageStep < 10:
		return fmt.Errorf("synth options: usage steps must be at least 10 s")
	}
	return nil
}

// Calibration of the synthetic trace to the real figures of
// cluster-trace-v2018 (../shared/traces/calibration.md, README.md; the
// distributions themselves are the targets in fidelity.go).
const (
	synthCores = 96  // every machine has 96 cores
	synthMem   = 100 // and the largest memory

	// machine_meta: 17,592 rows for 4,034 machines over 8 days, 4.4 per
	// machine: the first, then 0.42 per machine and day, nearly all USING
	// re-reports. IMPORT_INSTALLING: 5 rows on one machine in 8 days,
	// 0.00015 per machine-day (rounded up here). 147 machines (3.6%) first
	// appear after t = 0.
	rereportPerDay    = 0.42
	maintenancePerDay = 0.0002
	joiningShare      = 0.036
	// failure domains: 292 values of failure_domain_1 and 21 of _2 for
	// 4,034 machines; 69.5% of the level-1 values span several level-2
	// values. A machine takes its level-1 domain's usual level-2 value with
	// probability domainHome, another at random otherwise.
	domain2PerMachine = 21.0 / 4034
	domainHome        = 0.85

	// online containers: 71,476 in 9,790 app groups (7.3 per group), about
	// 5.2 container_meta rows per container over 8 days.
	groupMean        = 7.3
	containerRowsDay = 0.52
	onlineMemFillLo  = 0.78 // online memory requests fill 78-88% of a machine
	onlineMemFillHi  = 0.88
	onlineCPUCap     = 0.60 // and at most 60% of its cores
	// churnPerDay is the share of containers that stop per day, each
	// replaced on its machine by a new container of the same app and spec
	// (a reschedule), so that the requests on a machine stay flat. Every
	// container ever on a machine fits it together (churnMemCap, churnCPUCap):
	// a loader that does not interpret the stop still fits its warm start.
	churnPerDay = 0.00625
	churnMemCap = 0.98
	churnCPUCap = 0.95

	dagJobShare        = 0.6
	dagPlanCPUOther    = 0.005 // DAG tasks with plan_cpu other than 50 or 100
	systemCPUCoresLo   = 5.0   // kernel, daemons: cores busy on every machine
	systemCPUCoresHi   = 9.0
	systemMemLo        = 13.0 // page cache and daemons: share of memory
	systemMemHi        = 17.0
	utilInvalidPerMill = 0.5 // utilisation samples written as -1 or 101

	// instancesPerMachine caps instance_num at this many instances per
	// machine of the synthetic cluster: the real trace's largest task,
	// 31,939 instances, is 7.9 per machine of its 4,034.
	instancesPerMachine = 8
	// instanceTailAlpha is the Pareto exponent of instance_num above its
	// p99 (874): with it, the uncapped mean is the real 42.
	instanceTailAlpha = 1.85
	// depthCorrelation couples a DAG job's depth to its size (Gaussian
	// copula); a job is never deeper than it has tasks.
	depthCorrelation = 0.7
	// instanceCorrelation couples the instance counts of one job's tasks
	// (Gaussian copula): big jobs have big tasks, which makes instance
	// starts as bursty as the trace's.
	instanceCorrelation = 0.8
	// rootShare is the share of a DAG job's tasks beyond its longest chain
	// that have no dependency (level 1).
	rootShare = 0.4
)

// diurnal is the CPU demand of online services over the day, relative to
// the peak: high from 08:00 to 21:00, lowest around 04:00. Hours are trace
// time modulo 24 h (trace time 0 is taken as midnight).
var diurnalKnots = [...][2]float64{
	{0, 0.70}, {2, 0.55}, {4, 0.42}, {6, 0.55}, {8, 0.95}, {10, 1.0},
	{14, 1.0}, {18, 1.0}, {21, 0.95}, {23, 0.80}, {24, 0.70},
}

func diurnal(sec float64) float64 {
	h := math.Mod(sec/3600, 24)
	for i := 1; i < len(diurnalKnots); i++ {
		a, b := diurnalKnots[i-1], diurnalKnots[i]
		if h <= b[0] {
			return a[1] + (b[1]-a[1])*(h-a[0])/(b[0]-a[0])
		}
	}
	return diurnalKnots[0][1]
}

// Synth writes a synthetic trace in the CSV schema of cluster-trace-v2018
// (six files named table.csv, no header, columns in schema.txt order) to
// outDir, calibrated to the real figures of the trace (docs/dataset.md):
// 96-core machines of memory 100, 3.6% of them joining during the trace,
// rare maintenance, overlapping failure domains of skewed sizes; online
// containers in app groups of mean size 7.3 that fill 80-90% of machine
// memory but at most 60% of the cores, a few of them stopping and replaced
// on their machine; machine memory use near 90% and flat; CPU use near 40%
// with a daily cycle (high 08:00-21:00, lowest near 04:00); batch jobs
// arriving whole, DAG jobs with the real sizes, depths and fan-in, task
// durations, plan_mem shares and heavy-tailed instance counts (capped at 8
// per machine). The same options give the same bytes.
func Synth(ctx context.Context, opts SynthOptions, outDir string) error {
	if err := opts.defaults(); err != nil {
		return err
	}
	sw, err := newSynthWriters(outDir)
	if err != nil {
		return err
	}
	g := &synth{opts: opts, w: sw.bufs, span: int64(math.Round(opts.Days * 86400))}
	if err := g.run(ctx); err != nil {
		sw.abort()
		return err
	}
	return sw.commit()
}

type synth struct {
	opts SynthOptions
	w    map[string]*bufio.Writer
	span int64 // seconds
	ms   []*synthMachine
	r    row
}

// rng returns an independent stream for one part of the generator, so that
// changing one part does not shift the others.
func (g *synth) rng(stream uint64) *rand.Rand { return rand.New(rand.NewPCG(g.opts.Seed, stream)) }

func (g *synth) run(ctx context.Context) error {
	if err := g.machines(); err != nil {
		return err
	}
	if err := g.containers(ctx); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := g.batch(ctx); err != nil {
		return err
	}
	return g.machineUsage(ctx)
}

func poisson(r *rand.Rand, mean float64) int {
	// Knuth's method for small means, normal approximation for large ones.
	if mean > 50 {
		return max(0, int(math.Round(mean+math.Sqrt(mean)*r.NormFloat64())))
	}
	l, k, p := math.Exp(-mean), 0, 1.0
	for {
		p *= r.Float64()
		if p <= l {
			return k
		}
		k++
	}
}

// sample returns the inverse of the distribution's CDF at u in [0, 1):
// linear between knots, or linear in log x on segments from logFrom up (a
// heavy tail's density falls within a segment). An atom returns its x.
func (d dist) sample(u, logFrom float64) float64 {
	i := sort.Search(len(d), func(i int) bool { return d[i].p > u })
	if i == 0 {
		return d[0].x
	}
	if i == len(d) {
		return d[len(d)-1].x
	}
	a, b := d[i-1], d[i]
	if a.x == b.x {
		return a.x
	}
	f := (u - a.p) / (b.p - a.p)
	if a.x >= logFrom && a.x > 0 {
		return a.x * math.Pow(b.x/a.x, f)
	}
	return a.x + f*(b.x-a.x)
}
