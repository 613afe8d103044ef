package dataset

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
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

// synthWriters holds the six CSV files being written, each to a temporary
// name renamed into place by commit.
type synthWriters struct {
	files []*os.File
	bufs  map[string]*bufio.Writer
	dir   string
}

func newSynthWriters(dir string) (*synthWriters, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating synth output: %w", err)
	}
	sw := &synthWriters{bufs: make(map[string]*bufio.Writer), dir: dir}
	for _, t := range Tables {
		f, err := os.CreateTemp(dir, "."+t+".csv.*.tmp")
		if err != nil {
			sw.abort()
			return nil, fmt.Errorf("creating synth output: %w", err)
		}
		sw.files = append(sw.files, f)
		sw.bufs[t] = bufio.NewWriterSize(f, 1<<18)
	}
	return sw, nil
}

func (sw *synthWriters) abort() {
	for _, f := range sw.files {
		f.Close()
		os.Remove(f.Name())
	}
}

func (sw *synthWriters) commit() error {
	for i, t := range Tables {
		f := sw.files[i]
		if err := sw.bufs[t].Flush(); err != nil {
			sw.abort()
			return fmt.Errorf("writing %s: %w", t, err)
		}
		if err := f.Chmod(0o644); err != nil {
			sw.abort()
			return fmt.Errorf("writing %s: %w", t, err)
		}
		if err := f.Close(); err != nil {
			sw.abort()
			return fmt.Errorf("writing %s: %w", t, err)
		}
	}
	for i, t := range Tables {
		if err := os.Rename(sw.files[i].Name(), filepath.Join(sw.dir, t+".csv")); err != nil {
			sw.abort()
			return fmt.Errorf("writing %s: %w", t, err)
		}
	}
	return nil
}

// row builds one CSV line.
type row struct {
	b []byte
	n int // fields so far
}

func (r *row) reset() *row { r.b, r.n = r.b[:0], 0; return r }
func (r *row) sep() {
	if r.n > 0 {
		r.b = append(r.b, ',')
	}
	r.n++
}
func (r *row) s(v string) *row { r.sep(); r.b = append(r.b, v...); return r }
func (r *row) i(v int64) *row  { r.sep(); r.b = strconv.AppendInt(r.b, v, 10); return r }
func (r *row) empty() *row     { r.sep(); return r }

// f writes v rounded to two decimals, as the trace does.
func (r *row) f(v float64) *row {
	r.sep()
	r.b = strconv.AppendFloat(r.b, math.Round(v*100)/100, 'f', -1, 64)
	return r
}
func (r *row) to(w io.Writer) error { r.b = append(r.b, '\n'); _, err := w.Write(r.b); return err }

// synthMachine is one generated machine.
type synthMachine struct {
	id       string
	fd1, fd2 int64
	join     int64      // first time in service (0: from the start)
	down     [][2]int64 // maintenance intervals [from, to)
	memFill  float64    // online memory target
	memUsed  float64    // online memory requested so far
	cpuUsed  float64    // online cores requested so far
	memEver  float64    // memory of every container ever placed here
	cpuEver  float64
	sysCPU   float64 // cores
	sysMem   float64 // share of memory
	online   []synthContainer
	bcpu     []float32 // batch cores per machine-usage step
	bmem     []float32 // batch memory per machine-usage step
}

func (m *synthMachine) upAt(t int64) bool {
	if t < m.join {
		return false
	}
	for _, d := range m.down {
		if t >= d[0] && t < d[1] {
			return false
		}
	}
	return true
}

type synthContainer struct {
	id       string
	app      string
	created  int64
	left     int64   // stop time; the trace's span when it runs to the end
	cpuReq   int64   // 100 = 1 core
	mem      float64 // normalised
	cpuBase  float64 // share of the request used at the daily peak
	memShare float64 // share of mem_size used
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

// domains draws failure_domain_1 groups with the real sizes (machines per
// value: p50 9, p95 39) and gives each machine a failure_domain_2 value:
// usually its group's, sometimes another, so that the levels overlap
// rather than nest.
func (g *synth) domains(r *rand.Rand) (fd1, fd2 []int64) {
	n := len(g.ms)
	nfd2 := max(2, int(math.Round(float64(n)*domain2PerMachine)))
	perm := r.Perm(n)
	fd1, fd2 = make([]int64, n), make([]int64, n)
	for next, d := 0, int64(1); next < n; d++ {
		size := max(1, int(math.Round(targetDomainSize.sample(r.Float64(), math.Inf(1)))))
		home := int64(1 + r.IntN(nfd2))
		for k := 0; k < size && next < n; k++ {
			i := perm[next]
			next++
			fd1[i], fd2[i] = d, home
			if r.Float64() >= domainHome {
				fd2[i] = 1 + (home+int64(r.IntN(nfd2-1)))%int64(nfd2) // another value
			}
		}
	}
	return fd1, fd2
}

func (g *synth) machines() error {
	r := g.rng(1)
	// Machines are in service at t = 0; 3.6% of all machines join later
	joining := int(math.Round(float64(g.opts.Machines) * joiningShare / (1 - joiningShare)))
	n := g.opts.Machines + joining
	nb := (g.span + g.opts.MachineUsageStep - 1) / g.opts.MachineUsageStep
	days := float64(g.span) / 86400
	w := g.w[MachineMeta]
	for i := range n {
		m := &synthMachine{id: "m_" + strconv.Itoa(i+1)}
		m.memFill = onlineMemFillLo + (onlineMemFillHi-onlineMemFillLo)*r.Float64()
		m.sysCPU = systemCPUCoresLo + (systemCPUCoresHi-systemCPUCoresLo)*r.Float64()
		m.sysMem = systemMemLo + (systemMemHi-systemMemLo)*r.Float64()
		m.bcpu = make([]float32, nb)
		m.bmem = make([]float32, nb)
		g.ms = append(g.ms, m)
	}
	rd := g.rng(5)
	fd1, fd2 := g.domains(rd)
	// the machines that join during the trace, at uniform times
	for _, i := range rd.Perm(n)[:joining] {
		g.ms[i].join = 1 + rd.Int64N(g.span-1)
	}
	for i, m := range g.ms {
		m.fd1, m.fd2 = fd1[i], fd2[i]
		type ev struct {
			t      int64
			status string
		}
		evs := []ev{{m.join, "USING"}}
		life := g.span - m.join
		for range poisson(r, rereportPerDay*float64(life)/86400) {
			evs = append(evs, ev{m.join + 1 + r.Int64N(life-1), "USING"})
		}
		for range poisson(r, maintenancePerDay*days) {
			from := m.join + 1 + r.Int64N(life-1)
			to := min(from+600+r.Int64N(6600), g.span-1)
			if to <= from {
				continue
			}
			m.down = append(m.down, [2]int64{from, to})
			evs = append(evs, ev{from, "IMPORT_INSTALLING"}, ev{to, "USING"})
		}
		sort.SliceStable(evs, func(a, b int) bool { return evs[a].t < evs[b].t })
		for _, e := range evs {
			// a re-report of USING inside a maintenance window would end it
			// early: report the machine's actual state at that time
			st := e.status
			if st == "USING" && !m.upAt(e.t) {
				st = "IMPORT_INSTALLING"
			}
			g.r.reset().s(m.id).i(e.t).i(m.fd1).i(m.fd2).i(synthCores).i(synthMem).s(st)
			if err := g.r.to(w); err != nil {
				return err
			}
		}
	}
	return nil
}

// container specs: cpu_request in hundredths of a core with its weight;
// memory per core (normalised units) makes online services memory-heavy.
var (
	specCPU       = [...]int64{100, 200, 400, 800}
	specCPUWeight = [...]float64{0.2, 0.35, 0.35, 0.1}
	specMemCore   = [...]float64{1.56, 1.76, 1.95}
)

func (g *synth) containers(ctx context.Context) error {
	r := g.rng(2)
	open := make([]int, len(g.ms)) // machines still below their memory target
	for i := range open {
		open[i] = i
	}
	minMem := float64(specCPU[0]) / 100 * specMemCore[0]
	nc, ng := 0, 0
	for len(open) > 0 {
		if ng%64 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		ng++
		app := "app_" + strconv.Itoa(ng)
		x, cpu := r.Float64(), specCPU[len(specCPU)-1]
		for k, wgt := range specCPUWeight {
			if x < wgt {
				cpu = specCPU[k]
				break
			}
			x -= wgt
		}
		mem := math.Round(float64(cpu)/100*specMemCore[r.IntN(len(specMemCore))]*100) / 100
		cores := float64(cpu) / 100
		size := 1
		for r.Float64() >= 1/groupMean {
			size++
		}
		used := make(map[int64]bool)
		for range size {
			pick := -1
			for try := 0; try < 16 && len(open) > 0; try++ {
				j := r.IntN(len(open))
				m := g.ms[open[j]]
				if m.memUsed+mem > m.memFill*synthMem || m.cpuUsed+cores > onlineCPUCap*synthCores {
					continue
				}
				if used[m.fd1] && try < 8 {
					continue // spread a group over failure domains
				}
				pick = j
				break
			}
			if pick < 0 {
				break
			}
			m := g.ms[open[pick]]
			nc++
			c := synthContainer{id: "c_" + strconv.Itoa(nc), app: app, cpuReq: cpu, mem: mem, left: g.span,
				cpuBase: 0.65 + 0.3*r.Float64(), memShare: 0.85 + 0.13*r.Float64()}
			if m.join > 0 { // deployed as its machine joins
				c.created = min(m.join+r.Int64N(600), g.span-1)
			}
			m.online = append(m.online, c)
			m.memUsed += mem
			m.cpuUsed += cores
			used[m.fd1] = true
			if m.memUsed+minMem > m.memFill*synthMem || m.cpuUsed+0.01 > onlineCPUCap*synthCores {
				open[pick] = open[len(open)-1]
				open = open[:len(open)-1]
			}
		}
		if ng > 100*len(g.ms)+1000 {
			break // every machine is too full for the specs drawn
		}
	}
	// churn: a container stops and a new one of its app and spec replaces
	// it on its machine up to a minute later
	rc := g.rng(6)
	for _, m := range g.ms {
		m.memEver, m.cpuEver = m.memUsed, m.cpuUsed
		for k := range len(m.online) {
			c := &m.online[k]
			life := float64(g.span-c.created) / 86400
			if rc.Float64() >= churnPerDay*life || g.span-c.created < 2 {
				continue
			}
			cores := float64(c.cpuReq) / 100
			if m.memEver+c.mem > churnMemCap*synthMem || m.cpuEver+cores > churnCPUCap*synthCores {
				continue
			}
			c.left = c.created + 1 + rc.Int64N(g.span-c.created-1)
			next := c.left + rc.Int64N(60)
			if next >= g.span {
				continue
			}
			nc++
			nw := *c
			nw.id, nw.created, nw.left = "c_"+strconv.Itoa(nc), next, g.span
			nw.cpuBase, nw.memShare = 0.65+0.3*rc.Float64(), 0.85+0.13*rc.Float64()
			m.online = append(m.online, nw)
			m.memEver += c.mem
			m.cpuEver += cores
		}
	}
	// container_meta, then container_usage, machine by machine
	wm, wu := g.w[ContainerMeta], g.w[ContainerUsage]
	step := g.opts.ContainerUsageStep
	for mi, m := range g.ms {
		if mi%64 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		for _, c := range m.online {
			ts := []int64{c.created}
			for range poisson(r, containerRowsDay*float64(c.left-c.created)/86400) {
				ts = append(ts, c.created+r.Int64N(c.left-c.created))
			}
			sort.Slice(ts, func(a, b int) bool { return ts[a] < ts[b] })
			if c.left < g.span {
				ts = append(ts, c.left)
			}
			for k, t := range ts {
				status := "started"
				if c.left < g.span && k == len(ts)-1 {
					status = "stopped"
				}
				g.r.reset().s(c.id).s(m.id).i(t).s(c.app).s(status).i(c.cpuReq).i(c.cpuReq).f(c.mem)
				if err := g.r.to(wm); err != nil {
					return err
				}
			}
			for t := (c.created + step - 1) / step * step; t < c.left; t += step {
				cpu := 100 * c.cpuBase * diurnal(float64(t)) * (1 + 0.08*r.NormFloat64())
				memU := 100*c.memShare + r.NormFloat64()
				g.r.reset().s(c.id).s(m.id).i(t)
				g.utilInt(r, cpu)
				g.utilInt(r, memU)
				if r.IntN(3) == 0 { // cpi, mem_gps and mpki are often empty in the trace
					g.r.empty().empty().empty()
				} else {
					g.r.f(0.8 + 0.8*r.Float64()).f(2 * r.Float64()).i(int64(r.IntN(8)))
				}
				g.r.f(r.Float64()).f(r.Float64()).i(int64(r.IntN(10)))
				if err := g.r.to(wu); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// utilInt writes a utilisation percentage clamped to [0, 100], or now and
// then an invalid marker (-1 or 101) as the trace has.
func (g *synth) utilInt(r *rand.Rand, v float64) {
	if r.Float64()*1000 < utilInvalidPerMill {
		if r.IntN(2) == 0 {
			g.r.i(-1)
		} else {
			g.r.i(101)
		}
		return
	}
	g.r.i(int64(math.Round(math.Max(0, math.Min(100, v)))))
}

// instanceCap is the largest instance_num of the trace: 8 per machine.
func (g *synth) instanceCap() int { return max(20, instancesPerMachine*g.opts.Machines) }

// instanceCount draws instance_num: the real quantiles (70% are 1; p95
// 128), log-linear above 3, and a Pareto tail above the p99 (874), all
// truncated at instanceCap so that the tail keeps its shape below it.
func (g *synth) instanceCount(u float64) int {
	c := float64(g.instanceCap())
	top := targetInstances.cdf(c + 0.5)
	u *= top
	const p99, x99 = 0.99, 874.0
	if u < p99 {
		return max(1, int(math.Round(targetInstances.sample(u, 3))))
	}
	// Pareto above x99 truncated at c: P(X > x | X > x99) = (x99/x)^alpha
	v := (u - p99) / (top - p99)
	tail := 1 - math.Pow(x99/c, instanceTailAlpha)
	return min(int(c), int(math.Round(x99*math.Pow(1-v*tail, -1/instanceTailAlpha))))
}

// taskDuration draws a task's duration (end - start) in seconds from the
// real quantiles, log-linear above 12 s.
func taskDuration(r *rand.Rand) int64 {
	return int64(math.Round(targetDuration.sample(r.Float64(), 12)))
}

// planMemory draws plan_mem from the real shares of its values.
func planMemory(r *rand.Rand) float64 {
	return math.Round(targetPlanMem.sample(r.Float64(), math.Inf(1))*100) / 100
}

var planCPUOther = [...]float64{25, 200, 400}

func planCPU(r *rand.Rand) float64 {
	switch x := r.Float64(); {
	case x < dagPlanCPUOther:
		return planCPUOther[r.IntN(len(planCPUOther))]
	case x < 0.445:
		return 50
	}
	return 100
}

// normCDF is the standard normal CDF.
func normCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

type synthTask struct {
	name       string
	deps       []int // indices into the job's tasks
	level      int
	n          int
	dur        int64
	start, end int64
	cpu, mem   float64
	typ        string
}

// meanInstanceSeconds is the expected sum of instance durations of one
// job, by numerical integration over the quantile functions, for the batch
// rate.
func (g *synth) meanInstanceSeconds() float64 {
	const n = 20000
	var inst, dur, tasks float64
	for i := range n {
		u := (float64(i) + 0.5) / n
		inst += float64(g.instanceCount(u))
		dur += math.Round(targetDuration.sample(u, 12))
		tasks += math.Max(1, math.Round(targetTasks.sample(u, math.Inf(1))))
	}
	inst, dur, tasks = inst/n, dur/n, tasks/n
	// the longest instance runs for the task's duration, the others for
	// E[U^3] = 1/4 of it
	perTask := dur * (1 + (inst-1)/4)
	perJob := dagJobShare*tasks + (1-dagJobShare)*1.5
	return perJob * perTask
}

func (g *synth) batch(ctx context.Context) error {
	if g.opts.BatchConcurrency == 0 {
		return nil
	}
	r := g.rng(3)
	rate := g.opts.BatchConcurrency * float64(g.opts.Machines) / g.meanInstanceSeconds() // jobs per second
	wt, wi := g.w[BatchTask], g.w[BatchInstance]
	step := g.opts.MachineUsageStep
	var inst int64
	t := 0.0
	var tasks []synthTask
	for job := 1; ; job++ {
		t += r.ExpFloat64() / rate
		if int64(t) >= g.span {
			break
		}
		if job%16 == 0 { // a job can hold thousands of instances: look often
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		t0 := int64(t)
		jobName := "j_" + strconv.Itoa(job)
		tasks = g.jobTasks(r, tasks[:0])
		for ti := range tasks {
			tk := &tasks[ti]
			start := t0 + int64(r.IntN(10))
			for _, d := range tk.deps {
				start = max(start, tasks[d].end+int64(r.IntN(3)))
			}
			tk.start, tk.end = start, start+tk.dur
			running := false
			for k := 1; k <= tk.n; k++ {
				// the first instance runs for the task's duration; the
				// others start up to 4 s later and end no later
				off, d := int64(0), tk.dur
				if k > 1 {
					off = min(int64(r.IntN(5)), tk.dur)
					u := r.Float64()
					d = min(tk.dur-off, max(1, int64(math.Round(float64(tk.dur-off)*u*u*u))))
				}
				s := start + off
				e := s + d
				if s >= g.span {
					continue // never started inside the trace
				}
				inst++
				m := g.pickUp(r, s)
				cpuAvg := tk.cpu * (0.3 + 0.65*r.Float64())
				cpuMax := math.Min(tk.cpu*1.5, cpuAvg*(1.1+0.5*r.Float64()))
				memAvg := tk.mem * (0.4 + 0.5*r.Float64())
				memMax := memAvg * (1.05 + 0.25*r.Float64())
				status, end := "Terminated", e
				if e >= g.span {
					status, end, running = "Running", 0, true // 0: after the trace's span
				}
				g.r.reset().s("ins_" + strconv.FormatInt(inst, 10)).s(tk.name).s(jobName).s(tk.typ).s(status).
					i(s).i(end).s(m.id).i(1).i(1).f(cpuAvg).f(cpuMax).f(memAvg).f(memMax)
				if err := g.r.to(wi); err != nil {
					return err
				}
				// batch use of the machine, spread over the usage steps it overlaps
				for b := s / step; b*step < min(e, g.span); b++ {
					lo, hi := max(s, b*step), min(e, (b+1)*step)
					f := float32(hi-lo) / float32(step)
					m.bcpu[b] += f * float32(cpuAvg/100)
					m.bmem[b] += f * float32(memAvg)
				}
			}
			if tk.start >= g.span {
				continue
			}
			status, end := "Terminated", tk.end
			if running || tk.end >= g.span {
				status, end = "Running", 0
			}
			g.r.reset().s(tk.name).i(int64(tk.n)).s(jobName).s(tk.typ).s(status).i(tk.start).i(end).f(tk.cpu).f(tk.mem)
			if err := g.r.to(wt); err != nil {
				return err
			}
		}
	}
	return nil
}

var taskLetters = [...]string{"M", "M", "M", "R", "R", "J"}

// jobTasks draws the tasks of one job into dst. A DAG job (60%) has the
// real number of tasks, a depth (longest chain) correlated with it, and
// the real fan-in: its tasks sit on levels 1..depth, each task of level l
// > 1 depending on one of level l-1 and maybe on more of lower levels, so
// its chain is exactly l long; level 1 holds one task plus 40% of the rest
// (tasks without dependencies). Tasks are named like "M4_2_3" (task 4
// after tasks 2 and 3; the letter, as in the trace, does not follow the
// dependencies). An independent job has 1 + Geometric(0.5) tasks named
// "task_<random>".
func (g *synth) jobTasks(r *rand.Rand, dst []synthTask) []synthTask {
	// a job's tasks have instance counts of a similar scale: a Gaussian
	// copula with a job-level factor keeps instance_num's distribution
	zJob := r.NormFloat64()
	newTask := func() synthTask {
		z := instanceCorrelation*zJob + math.Sqrt(1-instanceCorrelation*instanceCorrelation)*r.NormFloat64()
		return synthTask{n: g.instanceCount(normCDF(z)), dur: taskDuration(r), mem: planMemory(r), cpu: planCPU(r)}
	}
	if r.Float64() >= dagJobShare {
		k := 1
		for r.Float64() >= 1/1.5 {
			k++
		}
		for range k {
			tk := newTask()
			tk.name = "task_" + base64.StdEncoding.EncodeToString([]byte(strconv.FormatUint(r.Uint64()/10, 10)))
			tk.typ = strconv.Itoa(2 + r.IntN(11))
			dst = append(dst, tk)
		}
		return dst
	}
	z1, z2 := r.NormFloat64(), r.NormFloat64()
	k := max(1, int(math.Round(targetTasks.sample(normCDF(z1), math.Inf(1)))))
	zd := depthCorrelation*z1 + math.Sqrt(1-depthCorrelation*depthCorrelation)*z2
	depth := min(k, max(1, int(math.Round(targetDepth.sample(normCDF(zd), math.Inf(1))))))
	// levels: one task each, then the rest
	levels := make([]int, 0, k)
	for l := 1; l <= depth; l++ {
		levels = append(levels, l)
	}
	for len(levels) < k {
		l := 1
		if depth > 1 && r.Float64() >= rootShare {
			l = 2 + r.IntN(depth-1)
		}
		levels = append(levels, l)
	}
	sort.Ints(levels)
	first := make([]int, depth+2) // first[l]: index of the first task of level l
	for i := len(levels) - 1; i >= 0; i-- {
		first[levels[i]] = i
	}
	first[depth+1] = k
	// dependencies beyond the first: the real count given at least one
	depsAtLeast1 := targetDeps.cdf(0.5)
	for i, l := range levels {
		tk := newTask()
		tk.typ, tk.level = "1", l
		if l > 1 {
			prev := first[l-1] + r.IntN(first[l]-first[l-1])
			tk.deps = append(tk.deps, prev)
			c := int(math.Round(targetDeps.sample(depsAtLeast1+(1-depsAtLeast1)*r.Float64(), math.Inf(1))))
			for extra := min(c-1, first[l]-1); extra > 0; extra-- {
				d := r.IntN(first[l])
				if !slices.Contains(tk.deps, d) {
					tk.deps = append(tk.deps, d)
				}
			}
			sort.Ints(tk.deps)
		}
		name := taskLetters[r.IntN(len(taskLetters))] + strconv.Itoa(i+1)
		for _, d := range tk.deps {
			name += "_" + strconv.Itoa(d+1)
		}
		tk.name = name
		dst = append(dst, tk)
	}
	return dst
}

// pickUp returns a random machine that is in service at time t.
func (g *synth) pickUp(r *rand.Rand, t int64) *synthMachine {
	var m *synthMachine
	for range 64 {
		m = g.ms[r.IntN(len(g.ms))]
		if m.upAt(t) {
			return m
		}
	}
	for _, m := range g.ms {
		if m.upAt(t) {
			return m
		}
	}
	return m
}

func (g *synth) machineUsage(ctx context.Context) error {
	r := g.rng(4)
	w := g.w[MachineUsage]
	step := g.opts.MachineUsageStep
	for mi, m := range g.ms {
		if mi%64 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		for b := range int64(len(m.bcpu)) {
			t := b * step
			if t >= g.span {
				break
			}
			if t < m.join {
				continue
			}
			var cores, mem float64
			for _, c := range m.online {
				if c.created <= t && t < c.left {
					cores += float64(c.cpuReq) / 100 * c.cpuBase * diurnal(float64(t))
					mem += c.mem * c.memShare
				}
			}
			cores = cores*(1+0.05*r.NormFloat64()) + float64(m.bcpu[b]) + m.sysCPU
			mem += float64(m.bmem[b]) + m.sysMem + 0.5*r.NormFloat64()
			g.r.reset().s(m.id).i(t)
			g.utilInt(r, 100*cores/synthCores)
			g.utilInt(r, mem)
			g.r.empty().empty() // mem_gps and mkpi are empty in most real rows
			g.r.f(20 + 30*r.Float64()).f(15 + 25*r.Float64()).i(int64(1 + r.IntN(10)))
			if err := g.r.to(w); err != nil {
				return err
			}
		}
	}
	return nil
}
