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
	"sort"
	"strconv"
)

// SynthOptions controls the synthetic trace. Zero fields take the defaults
// of DefaultSynthOptions.
type SynthOptions struct {
	Machines int     // number of machines (96 cores, normalised memory 100 each)
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

// Calibration of the synthetic trace to the published facts of
// cluster-trace-v2018 (see ../shared/traces/README.md and docs/dataset.md).
const (
	synthCores = 96  // every machine has 96 cores
	synthMem   = 100 // and the largest memory

	// machine_meta: 17,592 rows for 4,034 machines over 8 days, i.e. 0.42
	// status records per machine and day beyond the first; split between
	// re-reports of USING and maintenance (IMPORT_INSTALLING, then USING).
	rereportPerDay    = 0.30
	maintenancePerDay = 0.06

	// online containers: 71,476 in 9,790 app groups (7.3 per group), about
	// 5.2 container_meta rows per container over 8 days.
	groupMean          = 7.3
	containerRowsDay   = 0.52
	onlineMemFillLo    = 0.80 // online memory requests fill 80-90% of a machine
	onlineMemFillHi    = 0.90
	onlineCPUCap       = 0.60 // and at most 60% of its cores
	preexistingShare   = 0.95 // containers deployed before the trace starts
	batchDurMedian     = 30.0 // seconds
	batchDurSigma      = 1.15 // lognormal: P(d < 199 s) = Phi((ln 199 - ln 30)/1.15) = 0.95
	batchDurMax        = 6 * 3600
	dagJobShare        = 0.6
	dagPlanCPUOther    = 0.005 // DAG tasks with plan_cpu other than 50 or 100
	systemCPUCoresLo   = 5.0   // kernel, daemons: cores busy on every machine
	systemCPUCoresHi   = 9.0
	systemMemLo        = 13.0 // page cache and daemons: share of memory
	systemMemHi        = 17.0
	utilInvalidPerMill = 0.5 // utilisation samples written as -1 or 101
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
	down     [][2]int64 // maintenance intervals [from, to)
	memFill  float64    // online memory target
	memUsed  float64    // online memory requested so far
	cpuUsed  float64    // online cores requested so far
	sysCPU   float64    // cores
	sysMem   float64    // share of memory
	online   []synthContainer
	bcpu     []float32 // batch cores per machine-usage step
	bmem     []float32 // batch memory per machine-usage step
}

func (m *synthMachine) upAt(t int64) bool {
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
	cpuReq   int64   // 100 = 1 core
	mem      float64 // normalised
	cpuBase  float64 // share of the request used at the daily peak
	memShare float64 // share of mem_size used
}

// Synth writes a synthetic trace in the CSV schema of cluster-trace-v2018
// (six files named table.csv, no header, columns in schema.txt order) to
// outDir, calibrated to the trace's published facts: 96-core machines of
// memory 100; online containers in app groups of mean size 7.3 that fill
// 80-90% of machine memory but at most 60% of the cores, running for the whole
// trace; machine memory use near 90% and flat; CPU use near 40% with a daily
// cycle (high 08:00-21:00, lowest near 04:00); batch DAG jobs whose tasks
// plan 50 or 100 CPU in over 99% of cases; instance durations log-normal
// with 95% under 199 s; machine status events (USING re-reports and
// IMPORT_INSTALLING maintenance). The same options give the same bytes.
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
	if err := g.containers(); err != nil {
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

func (g *synth) machines() error {
	r := g.rng(1)
	n := g.opts.Machines
	// failure_domain_1 has about 16 machines per value; failure_domain_2
	// groups several level-1 domains (as many machines share a level-2
	// value across level-1 values in the real trace).
	nfd1 := max(1, (n+15)/16)
	nfd2 := max(1, min(20, (nfd1+3)/4))
	nb := (g.span + g.opts.MachineUsageStep - 1) / g.opts.MachineUsageStep
	days := float64(g.span) / 86400
	w := g.w[MachineMeta]
	for i := range n {
		m := &synthMachine{id: "m_" + strconv.Itoa(i+1), fd1: int64(1 + r.IntN(nfd1))}
		m.fd2 = 1 + (m.fd1*7)%int64(nfd2)
		m.memFill = onlineMemFillLo + (onlineMemFillHi-onlineMemFillLo)*r.Float64()
		m.sysCPU = systemCPUCoresLo + (systemCPUCoresHi-systemCPUCoresLo)*r.Float64()
		m.sysMem = systemMemLo + (systemMemHi-systemMemLo)*r.Float64()
		m.bcpu = make([]float32, nb)
		m.bmem = make([]float32, nb)
		type ev struct {
			t      int64
			status string
		}
		evs := []ev{{0, "USING"}}
		for range poisson(r, rereportPerDay*days) {
			evs = append(evs, ev{1 + r.Int64N(g.span-1), "USING"})
		}
		for range poisson(r, maintenancePerDay*days) {
			from := 1 + r.Int64N(g.span-1)
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
		g.ms = append(g.ms, m)
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

func (g *synth) containers() error {
	r := g.rng(2)
	open := make([]int, len(g.ms)) // machines still below their memory target
	for i := range open {
		open[i] = i
	}
	minMem := float64(specCPU[0]) / 100 * specMemCore[0]
	nc, ng := 0, 0
	for len(open) > 0 {
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
			c := synthContainer{id: "c_" + strconv.Itoa(nc), app: app, cpuReq: cpu, mem: mem,
				cpuBase: 0.65 + 0.3*r.Float64(), memShare: 0.85 + 0.13*r.Float64()}
			if r.Float64() >= preexistingShare {
				c.created = 1 + r.Int64N(g.span-1)
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
	// container_meta, then container_usage, machine by machine
	days := float64(g.span) / 86400
	wm, wu := g.w[ContainerMeta], g.w[ContainerUsage]
	step := g.opts.ContainerUsageStep
	for _, m := range g.ms {
		for _, c := range m.online {
			ts := []int64{c.created}
			for range poisson(r, containerRowsDay*(days-float64(c.created)/86400)) {
				ts = append(ts, c.created+r.Int64N(g.span-c.created))
			}
			sort.Slice(ts, func(a, b int) bool { return ts[a] < ts[b] })
			for _, t := range ts {
				g.r.reset().s(c.id).s(m.id).i(t).s(c.app).s("started").i(c.cpuReq).i(c.cpuReq).f(c.mem)
				if err := g.r.to(wm); err != nil {
					return err
				}
			}
			for t := (c.created + step - 1) / step * step; t < g.span; t += step {
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

// batch duration: log-normal, rounded to whole seconds, at least 1 s.
func batchDuration(r *rand.Rand) int64 {
	d := math.Exp(math.Log(batchDurMedian) + batchDurSigma*r.NormFloat64())
	return max(1, min(int64(math.Round(d)), batchDurMax))
}

// instance counts per task: 1 (60%), 2..20 (30%), log-uniform 20..500
// capped at four per machine (10%).
func (g *synth) instanceCount(r *rand.Rand) int {
	x := r.Float64()
	switch {
	case x < 0.6:
		return 1
	case x < 0.9:
		return 2 + r.IntN(19)
	}
	return min(int(math.Exp(math.Log(20)+r.Float64()*math.Log(25))), g.instanceCap())
}

func (g *synth) instanceCap() int { return max(20, 4*g.opts.Machines) }

// meanInstances is the expected instanceCount.
func (g *synth) meanInstances() float64 {
	// E[min(floor(e^U), c)] for U uniform on [ln 20, ln 500], c = cap,
	// approximated by the continuous mean minus 1/2 for the floor.
	c := math.Min(float64(g.instanceCap()), 500)
	lr := math.Log(25)
	tail := (c-20)/lr + c*(math.Log(500)-math.Log(c))/lr - 0.5
	return 0.6 + 0.3*11 + 0.1*tail
}

// meanTasks is the expected number of tasks per job (see jobTasks).
const meanTasks = dagJobShare*(1+2.5) + (1-dagJobShare)*(1+0.5)

func geometric(r *rand.Rand, mean float64) int {
	n := 0
	for r.Float64() >= 1/(1+mean) {
		n++
	}
	return n
}

var planMem = [...]float64{0.2, 0.3, 0.39, 0.49, 0.59}

type synthTask struct {
	name       string
	deps       []int // indices into the job's tasks
	n          int
	start, end int64
	cpu, mem   float64
	typ        string
}

func (g *synth) batch(ctx context.Context) error {
	if g.opts.BatchConcurrency == 0 {
		return nil
	}
	r := g.rng(3)
	meanDur := batchDurMedian * math.Exp(batchDurSigma*batchDurSigma/2)
	rate := g.opts.BatchConcurrency * float64(g.opts.Machines) / (meanTasks * g.meanInstances() * meanDur) // jobs per second
	wt, wi := g.w[BatchTask], g.w[BatchInstance]
	step := g.opts.MachineUsageStep
	var inst int64
	t := 0.0
	for job := 1; ; job++ {
		t += r.ExpFloat64() / rate
		if int64(t) >= g.span {
			break
		}
		if job%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		t0 := int64(t)
		jobName := "j_" + strconv.Itoa(job)
		tasks := g.jobTasks(r)
		for ti := range tasks {
			tk := &tasks[ti]
			start := t0 + int64(r.IntN(10))
			for _, d := range tk.deps {
				start = max(start, tasks[d].end+int64(r.IntN(3)))
			}
			tk.start, tk.end = start, start
			running := false
			for k := 1; k <= tk.n; k++ {
				s := start + int64(r.IntN(5))
				e := s + batchDuration(r)
				tk.end = max(tk.end, e)
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

// jobTasks draws the tasks of one job: a DAG job (60%) has 1 + Geometric(2.5)
// tasks named like "J4_2_3" (task 4 after tasks 2 and 3), each later task
// depending on one or two earlier ones; an independent job has
// 1 + Geometric(0.5) tasks named "task_<random>".
func (g *synth) jobTasks(r *rand.Rand) []synthTask {
	var tasks []synthTask
	if r.Float64() < dagJobShare {
		k := min(1+geometric(r, 2.5), 30)
		for i := range k {
			tk := synthTask{n: g.instanceCount(r), typ: "1", mem: planMem[r.IntN(len(planMem))]}
			switch x := r.Float64(); {
			case x < dagPlanCPUOther:
				tk.cpu = []float64{25, 200, 400}[r.IntN(3)]
			case x < 0.45:
				tk.cpu = 50
			default:
				tk.cpu = 100
			}
			if i > 0 && r.Float64() < 0.8 {
				tk.deps = append(tk.deps, r.IntN(i))
				if i > 1 && r.Float64() < 0.3 {
					if d := r.IntN(i); d != tk.deps[0] {
						tk.deps = append(tk.deps, d)
					}
				}
				sort.Ints(tk.deps)
			}
			letter := "M"
			switch {
			case len(tk.deps) > 1:
				letter = "J"
			case len(tk.deps) == 1:
				letter = "R"
			}
			name := letter + strconv.Itoa(i+1)
			for _, d := range tk.deps {
				name += "_" + strconv.Itoa(d+1)
			}
			tk.name = name
			tasks = append(tasks, tk)
		}
		return tasks
	}
	k := 1 + geometric(r, 0.5)
	for range k {
		id := strconv.FormatUint(r.Uint64()/10, 10)
		tasks = append(tasks, synthTask{
			name: "task_" + base64.StdEncoding.EncodeToString([]byte(id)),
			n:    g.instanceCount(r), typ: strconv.Itoa(2 + r.IntN(11)),
			cpu: []float64{50, 100, 100, 200}[r.IntN(4)], mem: planMem[r.IntN(len(planMem))],
		})
	}
	return tasks
}

// pickUp returns a random machine that is not in maintenance at time t.
func (g *synth) pickUp(r *rand.Rand, t int64) *synthMachine {
	var m *synthMachine
	for range 16 {
		m = g.ms[r.IntN(len(g.ms))]
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
			var cores, mem float64
			for _, c := range m.online {
				if c.created <= t {
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
