package dataset

import (
	"cmp"
	"context"
	"fmt"
	"hash/fnv"
	"iter"
	"log/slog"
	"math"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/arrow/go/v15/arrow"

	"github.com/kubesim/kubesim/sim"
)

// DefaultMachineMemMiB is the memory of the largest machine (normalised
// memory 100): 384 GiB.
const DefaultMachineMemMiB = 384 * 1024

// LoadOptions controls how a trace window becomes a sim.Workload.
type LoadOptions struct {
	// Window is the span of trace time to replay; workload time 0 is
	// Window.From. The zero Window is the whole trace.
	Window Window
	// Machines is K, the number of machines to replay, picked from the trace's
	// machines at random under Seed; the pods that ran on them are kept. Zero
	// means every machine.
	Machines int
	// LoadFactor scales arrivals: each online container and each batch job is
	// replayed floor(f) times plus once more with probability frac(f), extra
	// copies shifted by a random delay below Jitter. Below 1 this thins the
	// workload. Zero means 1.
	LoadFactor float64
	// DAG makes a batch instance wait for every instance of the tasks its
	// task depends on (from the task name) by filling PodSpec.After.
	DAG bool
	// MachineMemMiB is the memory of a machine of normalised memory 100
	// (default DefaultMachineMemMiB).
	MachineMemMiB int64
	// Seed drives machine sampling, thinning, replication and jitter.
	Seed uint64
	// Jitter bounds the arrival shift of replicated copies (default 1 min).
	Jitter sim.Time
	// UsageStep is the resolution of online containers' usage profiles:
	// samples are averaged over steps of this length (default 5 min).
	UsageStep sim.Time
	// MaxPods is the pod limit of every node (0: the kubelet default).
	MaxPods int32
	// Name names the workload (default "alibaba-v2018 <window>").
	Name string
}

func (o *LoadOptions) defaults() error {
	if err := o.Window.Validate(); err != nil {
		return fmt.Errorf("load options: %w", err)
	}
	if o.LoadFactor == 0 {
		o.LoadFactor = 1
	}
	if o.MachineMemMiB == 0 {
		o.MachineMemMiB = DefaultMachineMemMiB
	}
	if o.Jitter == 0 {
		o.Jitter = sim.Minute
	}
	if o.UsageStep == 0 {
		o.UsageStep = 5 * sim.Minute
	}
	if o.Name == "" {
		o.Name = "alibaba-v2018 " + o.Window.String()
	}
	switch {
	case o.Machines < 0:
		return fmt.Errorf("load options: machines %d must not be negative", o.Machines)
	case o.LoadFactor < 0 || math.IsNaN(o.LoadFactor) || math.IsInf(o.LoadFactor, 0):
		return fmt.Errorf("load options: load factor %v must be a non-negative number", o.LoadFactor)
	case o.MachineMemMiB < 0:
		return fmt.Errorf("load options: machine memory %d MiB must be positive", o.MachineMemMiB)
	case o.Jitter < 0:
		return fmt.Errorf("load options: jitter %s must not be negative", o.Jitter)
	case o.UsageStep < 0:
		return fmt.Errorf("load options: usage step %s must be positive", o.UsageStep)
	case o.MaxPods < 0:
		return fmt.Errorf("load options: max pods %d must not be negative", o.MaxPods)
	}
	return nil
}

// Load reads the Arrow tables that Convert wrote in dir and builds the
// workload of one window on K machines (see LoadOptions):
//
//   - machine_meta: the K machines present (status USING) at the window start
//     are the initial nodes, later status changes in the window are node
//     add/remove events; failure_domain_1/2 become sim.LabelZone/LabelRack.
//     CPU is cpu_num cores; memory is mem_size/100 of MachineMemMiB.
//   - container_meta: one long-running, high-priority pod per container on a
//     kept machine, arriving at the window start if the container was
//     already deployed before the window, else at its first record in the
//     window; requests cpu_request (100 = 1 core) and mem_size, limits
//     cpu_limit; Group is app_du.
//   - container_usage: the pod's usage profile, util percentages read as a
//     share of the container's request, averaged per UsageStep.
//   - batch_instance: one low-priority pod per instance on a kept machine
//     that started in the window; requests plan_cpu/plan_mem of its task in
//     batch_task (cpu_max/mem_max when the task is missing), duration
//     end_time - start_time (at least 1 s; 0 = still running at the end of
//     the trace), usage cpu_avg/mem_avg; Group is the job name.
//   - without batch_instance, batch_task: each task that started in the window
//     gives instance_num pods, each kept with probability K/machines.
//
// Pods are sorted by arrival (ties: container or job, then trace order, then
// copy). Load checks each file against the manifest (size, rows, the
// checksum of every record batch it reads), skips record batches whose time
// range misses the window, and returns a workload that passes
// sim.Workload.Validate.
func Load(dir string, opts LoadOptions) (*sim.Workload, error) {
	src, err := openArrowSource(dir)
	if err != nil {
		return nil, err
	}
	w, st, err := load(context.Background(), src, opts)
	if err != nil {
		return nil, err
	}
	st.log(w)
	return w, nil
}

// LoadSplit loads every window of ws, after checking that the windows are
// valid and that no training window overlaps a test window (an error wrapping
// ErrOverlap). opts.Window and opts.Name are set per window.
func LoadSplit(dir string, ws Windows, opts LoadOptions) (train, test []*sim.Workload, err error) {
	if err := ws.Validate(); err != nil {
		return nil, nil, err
	}
	src, err := openArrowSource(dir)
	if err != nil {
		return nil, nil, err
	}
	loadAll := func(set []Window) ([]*sim.Workload, error) {
		var out []*sim.Workload
		for _, w := range set {
			o := opts
			o.Window, o.Name = w, ""
			wl, st, err := load(context.Background(), src, o)
			if err != nil {
				return nil, fmt.Errorf("window %s: %w", w, err)
			}
			st.log(wl)
			out = append(out, wl)
		}
		return out, nil
	}
	if train, err = loadAll(ws.Train); err != nil {
		return nil, nil, err
	}
	if test, err = loadAll(ws.Test); err != nil {
		return nil, nil, err
	}
	return train, test, nil
}

// LoadCSV builds the same workload as Load straight from the CSV tables in
// dir, parsing them again on every call. It is the slow path; convert once
// and use Load.
func LoadCSV(dir string, opts LoadOptions) (*sim.Workload, error) {
	src, err := openCSVSource(dir)
	if err != nil {
		return nil, err
	}
	w, st, err := load(context.Background(), src, opts)
	if err != nil {
		return nil, err
	}
	st.log(w)
	return w, nil
}

// loadStats counts what the loader kept and why it skipped rows.
type loadStats struct {
	machines, selected int
	selectedIDs        []string // kept machines, sorted
	online, batch      int      // pods before the load factor
	rows               int64
	skipped            map[string]int64
}

func (s *loadStats) skip(reason string) {
	if s.skipped == nil {
		s.skipped = make(map[string]int64)
	}
	s.skipped[reason]++
}

// merge adds the rows and skips counted in o (by one goroutine of a scan).
func (s *loadStats) merge(o *loadStats) {
	s.rows += o.rows
	for k, n := range o.skipped {
		if s.skipped == nil {
			s.skipped = make(map[string]int64)
		}
		s.skipped[k] += n
	}
}

func (s *loadStats) log(w *sim.Workload) {
	keys := make([]string, 0, len(s.skipped))
	for k := range s.skipped {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	attrs := []any{"workload", w.Name, "machines", s.machines, "selected", s.selected, "nodes", len(w.Nodes),
		"events", len(w.Events), "online", s.online, "batch", s.batch, "pods", len(w.Pods), "rows", s.rows}
	for _, k := range keys {
		attrs = append(attrs, "skipped "+k, s.skipped[k])
	}
	slog.Debug("trace loaded", attrs...)
}

// Reasons for skipping trace rows while loading.
const (
	skipNoID        = "no id"
	skipNoTime      = "no time stamp"
	skipBadMachine  = "machine without cpu or memory"
	skipStartZero   = "start time 0 (outside the trace)"
	skipEndBefore   = "end before start"
	skipNoPlan      = "no resource plan"
	skipNegative    = "negative request"
	skipNoInstances = "no instance count"
	skipDAGCycle    = "job with a dependency cycle (DAG ignored)"
)

type loader struct {
	ctx      context.Context
	src      source
	opts     LoadOptions
	from, to sim.Time // window in trace time; to is the open end when unbounded
	st       loadStats

	machines map[string]int32 // kept machine id -> index in sel
	sel      []string
	total    int  // machines in the trace
	allKept  bool // every machine kept: pods are not filtered by machine

	workers int // goroutines for scans of a concurrentSource

	all   []sim.PodSpec // every pod before the load factor
	units []unit
	nodes []sim.NodeSpec
	evs   []sim.MachineEvent
	dict  []int32 // scratch for per-batch dictionary maps
	dict2 []int32
}

// unit is what the load factor replicates: one online container, or the pods
// of one batch job. pods indexes loader.all; a pod's After holds positions
// in pods. Units are ordered by kind (containers first) and then name.
type unit struct {
	job  bool // a batch job, not a container
	name string
	pods []int32
}

// compareUnits orders units as the keys "c/<container>" and "j/<job>" would
// sort, without building the keys.
func compareUnits(a, b unit) int {
	if a.job != b.job {
		if b.job {
			return -1
		}
		return 1
	}
	return strings.Compare(a.name, b.name)
}

func load(ctx context.Context, src source, opts LoadOptions) (*sim.Workload, loadStats, error) {
	if err := opts.defaults(); err != nil {
		return nil, loadStats{}, err
	}
	l := &loader{ctx: ctx, src: src, opts: opts, from: opts.Window.From, to: opts.Window.end(),
		workers: min(runtime.GOMAXPROCS(0), maxScanWorkers)}
	if !src.has(MachineMeta) {
		return nil, l.st, fmt.Errorf("trace has no %s table", MachineMeta)
	}
	if err := l.loadMachines(); err != nil {
		return nil, l.st, err
	}
	if src.has(BatchInstance) {
		l.reservePods(BatchInstance)
	}
	if src.has(ContainerMeta) {
		if err := l.loadContainers(); err != nil {
			return nil, l.st, err
		}
	}
	switch {
	case src.has(BatchInstance):
		if err := l.loadInstances(); err != nil {
			return nil, l.st, err
		}
	case src.has(BatchTask):
		if err := l.loadTasks(); err != nil {
			return nil, l.st, err
		}
	}
	w := &sim.Workload{Name: opts.Name, Nodes: l.nodes, Events: l.evs, Pods: l.replicate()}
	if opts.Window.To != 0 {
		w.End = opts.Window.To - opts.Window.From
	}
	if err := w.Validate(); err != nil {
		return nil, l.st, fmt.Errorf("loading %s: %w", opts.Name, err)
	}
	return w, l.st, nil
}

// maxScanWorkers bounds the goroutines of one scan.
const maxScanWorkers = 8

// scanBatches calls fn on the record batches of table that win selects:
// on up to l.workers goroutines at once when the source allows it, else on
// this one (w = 0). k is the batch's index in the table.
func (l *loader) scanBatches(table string, win timeRange, fn func(w, k int, rec arrow.Record) error) error {
	if cs, ok := l.src.(concurrentSource); ok && l.workers > 1 {
		return cs.scanConcurrent(l.ctx, table, win, l.workers, fn)
	}
	k := 0
	return l.src.scan(l.ctx, table, win, func(rec arrow.Record) error {
		k++
		return fn(0, k-1, rec)
	})
}

// traceTime converts trace seconds to trace time.
func traceTime(s int64) sim.Time { return sim.Time(s) * sim.Second }

// memMiB converts normalised memory (100 = the largest machine) to MiB.
func (l *loader) memMiB(norm float64) int64 {
	return int64(math.Round(norm / 100 * float64(l.opts.MachineMemMiB)))
}

// milliCPU converts trace CPU (100 = 1 core) to millicores.
func milliCPU(v float64) int64 { return int64(math.Round(v * 10)) }

// reservePods gives l.all room for the batch pods expected from table
// when the source knows its row counts (an Arrow manifest): the rows in the
// window's batches times the share of machines kept, plus a tenth. The
// pods are the loader's largest allocation; made at its full size at once,
// the heap reaches its working size early and the garbage collector runs
// about twice per load of the whole benchmark trace instead of seven times
// (about a fifth of the load's time). A short estimate only means one more
// allocation later, as without a count.
func (l *loader) reservePods(table string) {
	rc, ok := l.src.(rowCounter)
	if !ok || l.total == 0 {
		return
	}
	rows, ok := rc.rows(table, window(l.from, l.to))
	if !ok {
		return
	}
	l.all = slices.Grow(l.all, int(float64(rows)*l.keptShare()))
}

// keptShare is the share of a machine-keyed table's rows expected on the
// kept machines, plus a tenth, at most 1: the room reserved for what a scan
// keeps.
func (l *loader) keptShare() float64 {
	if l.allKept || l.total == 0 {
		return 1
	}
	return min(1, float64(len(l.sel))/float64(l.total)*1.1)
}

// ---- machines ----

type machineRec struct {
	t        int64
	fd1, fd2 string
	cpu, mem int64 // -1 when absent
	status   string
}

func (l *loader) loadMachines() error {
	recs := make(map[string][]machineRec)
	intern := make(map[string]string)
	in := func(s string) string {
		if v, ok := intern[s]; ok {
			return v
		}
		v := strings.Clone(s)
		intern[v] = v
		return v
	}
	err := l.src.scan(l.ctx, MachineMeta, allRows, func(rec arrow.Record) error {
		id, tm := strColumn(rec, mmMachine), intColumn(rec, mmTime)
		fd1, fd2 := intColumn(rec, mmDomain1), strColumn(rec, mmDomain2)
		cpu, mem, status := intColumn(rec, mmCPU), intColumn(rec, mmMem), strColumn(rec, mmStatus)
		l.st.rows += rec.NumRows()
		for i := range int(rec.NumRows()) {
			name, ok := id.value(i)
			if !ok {
				l.st.skip(skipNoID)
				continue
			}
			t, ok := tm.get(i)
			if !ok {
				l.st.skip(skipNoTime)
				continue
			}
			r := machineRec{t: t, cpu: -1, mem: -1}
			if v, ok := fd1.get(i); ok {
				r.fd1 = in(strconv.FormatInt(v, 10))
			}
			if v, ok := fd2.value(i); ok {
				r.fd2 = in(v)
			}
			if v, ok := cpu.get(i); ok {
				r.cpu = v
			}
			if v, ok := mem.get(i); ok {
				r.mem = v
			}
			r.status, _ = status.value(i)
			r.status = in(r.status)
			key := in(name)
			recs[key] = append(recs[key], r)
		}
		return nil
	})
	if err != nil {
		return err
	}
	ids := make([]string, 0, len(recs))
	for id := range recs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	l.total = len(ids)
	l.st.machines = len(ids)
	k := l.opts.Machines
	if k > len(ids) {
		return fmt.Errorf("load options: %d machines asked, the trace has %d", k, len(ids))
	}
	if k == 0 {
		k = len(ids)
	}
	l.sel = ids
	l.allKept = k == len(ids)
	if k < len(ids) {
		rng := rand.New(rand.NewPCG(l.opts.Seed, 0x6d616368696e6573)) // stream "machines"
		perm := rng.Perm(len(ids))[:k]
		sort.Ints(perm)
		l.sel = make([]string, k)
		for i, p := range perm {
			l.sel[i] = ids[p]
		}
	}
	l.st.selected = len(l.sel)
	l.st.selectedIDs = l.sel
	l.machines = make(map[string]int32, len(l.sel))
	for i, id := range l.sel {
		l.machines[id] = int32(i)
		rs := recs[id]
		sort.SliceStable(rs, func(a, b int) bool { return rs[a].t < rs[b].t })
		l.machineTimeline(id, rs)
	}
	sort.SliceStable(l.evs, func(i, j int) bool { return l.evs[i].At < l.evs[j].At })
	return nil
}

// machineTimeline turns one machine's status records into its initial
// presence and add/remove events inside the window.
func (l *loader) machineTimeline(id string, rs []machineRec) {
	up := false
	var last *machineRec
	for i := range rs {
		if traceTime(rs[i].t) > l.from {
			break
		}
		last = &rs[i]
	}
	if last != nil {
		if n, ok := l.node(id, last); ok && last.status == "USING" {
			l.nodes = append(l.nodes, n)
			up = true
		}
	}
	for i := range rs {
		r := &rs[i]
		t := traceTime(r.t)
		if t <= l.from {
			continue
		}
		if t >= l.to {
			break
		}
		n, ok := l.node(id, r)
		want := ok && r.status == "USING"
		switch {
		case want && !up:
			l.evs = append(l.evs, sim.MachineEvent{At: t - l.from, Kind: sim.MachineAdd, Node: n})
		case !want && up:
			l.evs = append(l.evs, sim.MachineEvent{At: t - l.from, Kind: sim.MachineRemove, Node: sim.NodeSpec{Name: id}})
		}
		up = want
	}
}

func (l *loader) node(id string, r *machineRec) (sim.NodeSpec, bool) {
	if r.cpu <= 0 || r.mem <= 0 {
		l.st.skip(skipBadMachine)
		return sim.NodeSpec{}, false
	}
	n := sim.NodeSpec{
		Name:        id,
		Allocatable: sim.Resources{CPU: r.cpu * 1000, Mem: r.mem * l.opts.MachineMemMiB / 100},
		MaxPods:     l.opts.MaxPods,
		Labels:      make(map[string]string, 2),
	}
	if r.fd1 != "" {
		n.Labels[sim.LabelZone] = r.fd1
	}
	if r.fd2 != "" {
		n.Labels[sim.LabelRack] = r.fd2
	}
	return n, true
}

// machineCodes maps a batch's machine_id dictionary to kept-machine indices (-1: not kept).
func (l *loader) machineCodes(c strCol, dst []int32) []int32 {
	return c.mapDict(dst, func(s string) int32 {
		if i, ok := l.machines[s]; ok {
			return i
		}
		return -1
	})
}

// onKept reports whether row i of a machine_id column is on a kept machine;
// with every machine kept, it is true even for machines missing from
// machine_meta and for rows without a machine.
func (l *loader) onKept(mach strCol, codes []int32, i int) bool {
	if l.allKept {
		return true
	}
	mc := mach.code(i)
	return mc >= 0 && codes[mc] >= 0
}

// ---- online containers ----

type containerRec struct {
	t              int64
	app            string
	cpuReq, cpuLim int64 // -1 when absent
	mem            float64
}

type containerAcc struct {
	before, first       containerRec
	hasBefore, hasFirst bool
}

// usageAcc sums usage samples of one step of one pod.
type usageAcc struct {
	step       int64
	cpu, mem   float64
	nCPU, nMem int32
}

func (l *loader) loadContainers() error {
	accs := make(map[string]*containerAcc)
	apps := make(map[string]string)
	err := l.src.scan(l.ctx, ContainerMeta, allRows, func(rec arrow.Record) error {
		id, mach, tm := strColumn(rec, cmContainer), strColumn(rec, cmMachine), intColumn(rec, cmTime)
		app, req, lim, mem := strColumn(rec, cmApp), intColumn(rec, cmCPURequest), intColumn(rec, cmCPULimit), realColumn(rec, cmMem)
		l.dict = l.machineCodes(mach, l.dict)
		l.st.rows += rec.NumRows()
		for i := range int(rec.NumRows()) {
			if !l.onKept(mach, l.dict, i) {
				continue
			}
			name, ok := id.value(i)
			if !ok {
				l.st.skip(skipNoID)
				continue
			}
			ts, ok := tm.get(i)
			if !ok {
				l.st.skip(skipNoTime)
				continue
			}
			t := traceTime(ts)
			if t >= l.to {
				continue
			}
			a := accs[name]
			if a == nil {
				a = &containerAcc{}
				accs[strings.Clone(name)] = a
			}
			before := t < l.from
			switch {
			case before && a.hasBefore && ts < a.before.t:
				continue
			case !before && a.hasFirst && ts >= a.first.t:
				continue
			}
			r := containerRec{t: ts, cpuReq: -1, cpuLim: -1, mem: mem.getOrNaN(i)}
			if v, ok := app.value(i); ok {
				if s, ok := apps[v]; ok {
					r.app = s
				} else {
					r.app = strings.Clone(v)
					apps[r.app] = r.app
				}
			}
			if v, ok := req.get(i); ok {
				r.cpuReq = v
			}
			if v, ok := lim.get(i); ok {
				r.cpuLim = v
			}
			if before {
				a.before, a.hasBefore = r, true
			} else {
				a.first, a.hasFirst = r, true
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	names := make([]string, 0, len(accs))
	for n := range accs {
		names = append(names, n)
	}
	sort.Strings(names)
	podOf := make(map[string]int32, len(names)) // container -> index in l.units
	for _, n := range names {
		a := accs[n]
		r, arrival := a.first, traceTime(a.first.t)-l.from
		if a.hasBefore {
			r, arrival = a.before, 0
		}
		if r.cpuReq < 0 && r.cpuReq != -1 || r.cpuLim < 0 && r.cpuLim != -1 || r.mem < 0 {
			l.st.skip(skipNegative)
			continue
		}
		p := sim.PodSpec{Name: n, Group: r.app, Arrival: arrival, Priority: sim.High}
		if r.cpuReq > 0 {
			p.Requests.CPU = r.cpuReq * 10
		}
		if r.cpuLim > 0 {
			p.Limits.CPU = r.cpuLim * 10
		}
		if r.mem > 0 {
			p.Requests.Mem = l.memMiB(r.mem)
		}
		podOf[n] = int32(len(l.all))
		l.units = append(l.units, unit{name: n, pods: []int32{int32(len(l.all))}})
		l.all = append(l.all, p)
	}
	l.st.online = len(podOf)
	if len(podOf) == 0 || !l.src.has(ContainerUsage) {
		return nil
	}
	return l.loadContainerUsage(podOf)
}

func (l *loader) loadContainerUsage(podOf map[string]int32) error {
	first := len(l.all) - len(podOf)
	accs := make([][]usageAcc, len(podOf))
	step := l.opts.UsageStep
	err := l.src.scan(l.ctx, ContainerUsage, window(l.from, l.to), func(rec arrow.Record) error {
		id, tm := strColumn(rec, cuContainer), realColumn(rec, cuTime)
		cpu, mem := intColumn(rec, cuCPU), intColumn(rec, cuMem)
		l.dict = id.mapDict(l.dict, func(s string) int32 {
			if i, ok := podOf[s]; ok {
				return i - int32(first)
			}
			return -1
		})
		l.st.rows += rec.NumRows()
		for i := range int(rec.NumRows()) {
			c := id.code(i)
			if c < 0 || l.dict[c] < 0 {
				continue
			}
			k := l.dict[c]
			ts, ok := tm.get(i)
			if !ok {
				continue
			}
			t := sim.Time(math.Round(ts * 1000))
			p := &l.all[first+int(k)]
			rel := t - l.from - p.Arrival
			if rel < 0 || t >= l.to {
				continue
			}
			s := int64(rel / step)
			as := accs[k]
			if len(as) == 0 || as[len(as)-1].step != s {
				as = append(as, usageAcc{step: s})
			}
			a := &as[len(as)-1]
			if v, ok := cpu.get(i); ok {
				a.cpu += float64(v)
				a.nCPU++
			}
			if v, ok := mem.get(i); ok {
				a.mem += float64(v)
				a.nMem++
			}
			accs[k] = as
		}
		return nil
	})
	if err != nil {
		return err
	}
	for k, as := range accs {
		if len(as) == 0 {
			continue
		}
		p := &l.all[first+k]
		p.Usage = usageProfile(as, step, p.Requests)
	}
	return nil
}

// usageProfile merges the per-step sums (in any order) into a profile of
// percentages of req; a step without valid samples in one dimension repeats
// the previous value (the request at first). Consecutive equal points are
// merged.
func usageProfile(as []usageAcc, step sim.Time, req sim.Resources) []sim.UsagePoint {
	sort.SliceStable(as, func(i, j int) bool { return as[i].step < as[j].step })
	out := make([]sim.UsagePoint, 0, len(as))
	cur := req
	for i := 0; i < len(as); {
		j := i
		var a usageAcc
		for ; j < len(as) && as[j].step == as[i].step; j++ {
			a.cpu += as[j].cpu
			a.mem += as[j].mem
			a.nCPU += as[j].nCPU
			a.nMem += as[j].nMem
		}
		use := cur
		if a.nCPU > 0 {
			use.CPU = int64(math.Round(a.cpu / float64(a.nCPU) / 100 * float64(req.CPU)))
		}
		if a.nMem > 0 {
			use.Mem = int64(math.Round(a.mem / float64(a.nMem) / 100 * float64(req.Mem)))
		}
		if len(out) == 0 || use != out[len(out)-1].Use {
			out = append(out, sim.UsagePoint{Offset: sim.Time(as[i].step) * step, Use: use})
		}
		cur = use
		i = j
	}
	return out
}

// ---- batch ----

type taskKey struct{ job, task string }

type instanceRec struct {
	key                            taskKey
	name                           string // pod name: job/task/instance
	arrival, dur                   sim.Time
	cpuAvg, cpuMax, memAvg, memMax float64
}

// instScan is the state of one goroutine scanning batch_instance.
type instScan struct {
	dict  []int32 // kept-machine index of each machine code of the batch
	names stringArena
	// per batch, a copy of the job and task name of each dictionary code,
	// made on first use
	jobNames, taskNames []string
	st                  loadStats // rows and skips
}

// copied returns row i's string of c, copied once per batch into cache.
func copied(c strCol, i int, cache []string) (string, bool) {
	k := c.code(i)
	if k < 0 {
		return "", false
	}
	if cache[k] == "" {
		// one copy per batch: a job spanning batches gets equal copies
		cache[k] = strings.Clone(c.dict.Value(int(k)))
	}
	return cache[k], true
}

// instBatch holds the instances kept from record batch k.
type instBatch struct {
	k     int
	insts []instanceRec
}

// scanInstances turns the batch_instance rows on kept machines that start in
// the window into instance records, in trace order. The record batches are
// scanned on up to l.workers goroutines when the source allows it: each
// batch's records go to their own slice, put in order at the end.
func (l *loader) scanInstances() (*chunked[instanceRec], error) {
	share := l.keptShare()
	scans := make([]instScan, l.workers)
	var mu sync.Mutex
	var parts []instBatch
	err := l.scanBatches(BatchInstance, window(l.from, l.to), func(w, k int, rec arrow.Record) error {
		sc := &scans[w]
		name, task, job := strColumn(rec, biInstance), strColumn(rec, biTask), strColumn(rec, biJob)
		start, end, mach := intColumn(rec, biStart), intColumn(rec, biEnd), strColumn(rec, biMachine)
		cpuAvg, cpuMax, memAvg, memMax := realColumn(rec, biCPUAvg), realColumn(rec, biCPUMax), realColumn(rec, biMemAvg), realColumn(rec, biMemMax)
		sc.dict = l.machineCodes(mach, sc.dict)
		sc.jobNames = append(sc.jobNames[:0], make([]string, job.dict.Len())...)
		sc.taskNames = append(sc.taskNames[:0], make([]string, task.dict.Len())...)
		sc.st.rows += rec.NumRows()
		out := make([]instanceRec, 0, int(float64(rec.NumRows())*share))
		for i := range int(rec.NumRows()) {
			if !l.onKept(mach, sc.dict, i) {
				continue
			}
			s, ok := start.get(i)
			if !ok {
				sc.st.skip(skipNoTime)
				continue
			}
			t := traceTime(s)
			if t < l.from || t >= l.to {
				continue
			}
			if s == 0 {
				sc.st.skip(skipStartZero)
				continue
			}
			jn, ok1 := copied(job, i, sc.jobNames)
			tn, ok2 := copied(task, i, sc.taskNames)
			if !ok1 || !ok2 {
				sc.st.skip(skipNoID)
				continue
			}
			r := instanceRec{key: taskKey{jn, tn}, arrival: t - l.from,
				cpuAvg: cpuAvg.getOrNaN(i), cpuMax: cpuMax.getOrNaN(i), memAvg: memAvg.getOrNaN(i), memMax: memMax.getOrNaN(i)}
			if e, ok := end.get(i); ok && e != 0 {
				if e < s {
					sc.st.skip(skipEndBefore)
					continue
				}
				r.dur = traceTime(max(e-s, 1))
			}
			v, _ := name.value(i)
			r.name = sc.names.join("/", jn, tn, v) // a copy: v aliases batch memory
			out = append(out, r)
		}
		mu.Lock()
		parts = append(parts, instBatch{k, out})
		mu.Unlock()
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i := range scans {
		l.st.merge(&scans[i].st)
	}
	slices.SortFunc(parts, func(a, b instBatch) int { return cmp.Compare(a.k, b.k) })
	insts := &chunked[instanceRec]{}
	for _, p := range parts {
		insts.blocks = append(insts.blocks, p.insts)
		insts.n += len(p.insts)
	}
	return insts, nil
}

func (l *loader) loadInstances() error {
	insts, err := l.scanInstances()
	if err != nil {
		return err
	}
	// Each job gets an index (in order of first appearance) and each task a
	// plan, filled from batch_task below; each instance notes both. The maps
	// hold pointers so that updates never store a key that aliases batch
	// memory (assigning to an existing key replaces the stored key).
	type jobEntry struct {
		idx   int32
		tasks map[string]*plan
	}
	jobs := make(map[string]*jobEntry)
	var jobNames []string
	jobOf := make([]int32, insts.n)
	planOf := make([]*plan, insts.n)
	var slabP []plan
	var prev taskKey
	var je *jobEntry
	var pl *plan
	for i, r := range insts.all() {
		if i > 0 && r.key == prev { // instances of a task mostly come together
			jobOf[i], planOf[i] = je.idx, pl
			continue
		}
		if i == 0 || r.key.job != prev.job {
			if je = jobs[r.key.job]; je == nil {
				je = &jobEntry{idx: int32(len(jobNames)), tasks: make(map[string]*plan)}
				jobs[r.key.job] = je
				jobNames = append(jobNames, r.key.job)
			}
		}
		prev = r.key
		if pl = je.tasks[r.key.task]; pl == nil {
			if len(slabP) == 0 {
				slabP = make([]plan, 1024)
			}
			slabP[0] = plan{math.NaN(), math.NaN()}
			pl, slabP = &slabP[0], slabP[1:]
			je.tasks[r.key.task] = pl
		}
		jobOf[i], planOf[i] = je.idx, pl
	}
	if insts.n > 0 && l.src.has(BatchTask) {
		var byCode []map[string]*plan // per batch: job code -> its tasks' plans
		err := l.src.scan(l.ctx, BatchTask, allRows, func(rec arrow.Record) error {
			task, job, cpu, mem := strColumn(rec, btTask), strColumn(rec, btJob), realColumn(rec, btCPU), realColumn(rec, btMem)
			byCode = byCode[:0]
			for j := 0; j < job.dict.Len(); j++ {
				var m map[string]*plan
				if e := jobs[job.dict.Value(j)]; e != nil {
					m = e.tasks
				}
				byCode = append(byCode, m)
			}
			l.st.rows += rec.NumRows()
			for i := range int(rec.NumRows()) {
				jc := job.code(i)
				if jc < 0 || byCode[jc] == nil {
					continue
				}
				tn, ok := task.value(i)
				if !ok {
					continue
				}
				if p := byCode[jc][tn]; p != nil {
					*p = plan{cpu.getOrNaN(i), mem.getOrNaN(i)}
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	bp := l.buildInstancePods(insts, planOf, jobOf)
	bp.jobs = jobNames
	l.addJobs(bp)
	return nil
}

// plan is a batch task's requests per instance (NaN: unknown).
type plan struct{ cpu, mem float64 }

// buildInstancePods makes the pod of each instance, in trace order after
// the pods loaded so far, on up to l.workers goroutines (each a run of
// record batches; pod i of the instances goes to position i, and the pods
// are closed up afterwards when some were skipped). planOf and jobOf give
// each instance's plan and job index.
func (l *loader) buildInstancePods(insts *chunked[instanceRec], planOf []*plan, jobOf []int32) *batchPods {
	first := len(l.all)
	n := insts.n
	pods := slices.Grow(l.all, n)[:first+n]
	tasks := make([]string, n)
	keep := make([]bool, n)
	stats := make([]loadStats, l.workers)
	offs := make([]int, len(insts.blocks)+1) // index of each block's first instance
	for b, blk := range insts.blocks {
		offs[b+1] = offs[b] + len(blk)
	}
	parallel(l.workers, len(insts.blocks), func(b int) int { return len(insts.blocks[b]) }, func(w, lo, hi int) {
		st := &stats[w]
		var slab []sim.UsagePoint // one-point usage profiles, allocated in blocks
		for b := lo; b < hi; b++ {
			for j := range insts.blocks[b] {
				r := &insts.blocks[b][j]
				i := offs[b] + j
				pl := planOf[i]
				cpu, mem := pl.cpu, pl.mem
				if math.IsNaN(cpu) {
					cpu = firstNumber(r.cpuMax, r.cpuAvg)
				}
				if math.IsNaN(mem) {
					mem = firstNumber(r.memMax, r.memAvg)
				}
				if math.IsNaN(cpu) || math.IsNaN(mem) {
					st.skip(skipNoPlan)
					continue
				}
				if cpu < 0 || mem < 0 {
					st.skip(skipNegative)
					continue
				}
				p := sim.PodSpec{Name: r.name, Group: r.key.job, Arrival: r.arrival, Duration: r.dur, Priority: sim.Low,
					Requests: sim.Resources{CPU: milliCPU(cpu), Mem: l.memMiB(mem)}}
				if !math.IsNaN(r.cpuAvg) || !math.IsNaN(r.memAvg) {
					use := p.Requests
					if r.cpuAvg >= 0 {
						use.CPU = milliCPU(r.cpuAvg)
					}
					if r.memAvg >= 0 {
						use.Mem = l.memMiB(r.memAvg)
					}
					if len(slab) == 0 {
						slab = make([]sim.UsagePoint, 4096)
					}
					slab[0] = sim.UsagePoint{Offset: 0, Use: use}
					p.Usage, slab = slab[:1:1], slab[1:]
				}
				pods[first+i], tasks[i], keep[i] = p, r.key.task, true
			}
		}
	})
	for i := range stats {
		l.st.merge(&stats[i])
	}
	// close up the skipped instances' places
	k := 0
	for i := range n {
		if !keep[i] {
			continue
		}
		if k != i {
			pods[first+k], tasks[k], jobOf[k] = pods[first+i], tasks[i], jobOf[i]
		}
		k++
	}
	clear(pods[first+k:])
	return &batchPods{first: first, pods: pods[:first+k], tasks: tasks[:k], job: jobOf[:k]}
}

// parallel splits the items [0, n) into up to workers runs of about equal
// size (size(i) of item i) and calls fn(w, lo, hi) for run w on its own
// goroutine; with one worker or one item, on this one.
func parallel(workers, n int, size func(i int) int, fn func(w, lo, hi int)) {
	if workers <= 1 || n <= 1 {
		fn(0, 0, n)
		return
	}
	total := 0
	for i := range n {
		total += size(i)
	}
	var wg sync.WaitGroup
	lo, acc := 0, 0
	for w := range workers {
		hi := lo
		for hi < n && (w == workers-1 || acc < total*(w+1)/workers) {
			acc += size(hi)
			hi++
		}
		if from := lo; hi > from {
			wg.Go(func() { fn(w, from, hi) })
		}
		lo = hi
	}
	wg.Wait()
}

func firstNumber(vs ...float64) float64 {
	for _, v := range vs {
		if !math.IsNaN(v) {
			return v
		}
	}
	return math.NaN()
}

// chunked is a sequence stored in blocks.
type chunked[T any] struct {
	blocks [][]T
	n      int
}

// all iterates over the values in order.
func (c *chunked[T]) all() iter.Seq2[int, T] {
	return func(yield func(int, T) bool) {
		i := 0
		for _, b := range c.blocks {
			for _, v := range b {
				if !yield(i, v) {
					return
				}
				i++
			}
		}
	}
}

// batchPods collects batch pods in trace order with their job and task.
type batchPods struct {
	first int // pods[:first] were loaded before
	pods  []sim.PodSpec
	tasks []string
	job   []int32
	jobs  []string         // by first appearance
	index map[string]int32 // job -> index in jobs, kept by add (loadTasks)
}

// newBatchPods starts a collection that appends to all (the pods loaded so
// far), with room for n more.
func newBatchPods(all []sim.PodSpec, n int) *batchPods {
	return &batchPods{first: len(all), pods: slices.Grow(all, n), tasks: make([]string, 0, n), job: make([]int32, 0, n), index: make(map[string]int32)}
}

// add appends a pod; job and task must not alias batch memory.
func (b *batchPods) add(p sim.PodSpec, job, task string) {
	var j int32
	if n := len(b.job); n > 0 && b.jobs[b.job[n-1]] == job {
		j = b.job[n-1] // the pods of a job mostly come together
	} else {
		var ok bool
		if j, ok = b.index[job]; !ok {
			j = int32(len(b.jobs))
			b.jobs = append(b.jobs, job)
			b.index[job] = j
		}
	}
	b.pods = append(b.pods, p)
	b.tasks = append(b.tasks, task)
	b.job = append(b.job, j)
}

// loadTasks expands batch_task rows into instance_num pods each, keeping
// each pod with probability K/machines (every pod when all machines are kept).
func (l *loader) loadTasks() error {
	keep := float64(len(l.sel)) / float64(max(l.total, 1))
	bp := newBatchPods(l.all, 0)
	err := l.src.scan(l.ctx, BatchTask, window(l.from, l.to), func(rec arrow.Record) error {
		task, num, job := strColumn(rec, btTask), intColumn(rec, btInstances), strColumn(rec, btJob)
		start, end, cpu, mem := intColumn(rec, btStart), intColumn(rec, btEnd), realColumn(rec, btCPU), realColumn(rec, btMem)
		l.st.rows += rec.NumRows()
		for i := range int(rec.NumRows()) {
			s, ok := start.get(i)
			if !ok {
				l.st.skip(skipNoTime)
				continue
			}
			t := traceTime(s)
			if t < l.from || t >= l.to {
				continue
			}
			if s == 0 {
				l.st.skip(skipStartZero)
				continue
			}
			jn, ok1 := job.value(i)
			tn, ok2 := task.value(i)
			if !ok1 || !ok2 {
				l.st.skip(skipNoID)
				continue
			}
			n, ok := num.get(i)
			if !ok || n <= 0 {
				l.st.skip(skipNoInstances)
				continue
			}
			c, okc := cpu.get(i)
			m, okm := mem.get(i)
			if !okc || !okm {
				l.st.skip(skipNoPlan)
				continue
			}
			if c < 0 || m < 0 {
				l.st.skip(skipNegative)
				continue
			}
			var dur sim.Time
			if e, ok := end.get(i); ok && e != 0 {
				if e < s {
					l.st.skip(skipEndBefore)
					continue
				}
				dur = traceTime(max(e-s, 1))
			}
			// The kept instances depend only on the seed and the task, not
			// on the row order.
			rng := rand.New(rand.NewPCG(l.opts.Seed, hashStrings(jn, tn)))
			jobName := jn
			if j, ok := bp.index[jn]; ok {
				jobName = bp.jobs[j]
			} else {
				jobName = strings.Clone(jn)
			}
			taskName := strings.Clone(tn)
			prefix := jobName + "/" + taskName + "/"
			for k := int64(1); k <= n; k++ {
				if keep < 1 && rng.Float64() >= keep {
					continue
				}
				p := sim.PodSpec{Name: prefix + strconv.FormatInt(k, 10), Group: jobName, Arrival: t - l.from,
					Duration: dur, Priority: sim.Low, Requests: sim.Resources{CPU: milliCPU(c), Mem: l.memMiB(m)}}
				bp.add(p, jobName, taskName)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	l.addJobs(bp)
	return nil
}

// hashStrings is FNV-1a over the strings with separators.
func hashStrings(ss ...string) uint64 {
	h := fnv.New64a()
	for _, s := range ss {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

// addJobs groups the batch pods by job (jobs in order of first appearance,
// pods in trace order) into one unit per job, filling After when DAG is on.
func (l *loader) addJobs(bp *batchPods) {
	l.st.batch += len(bp.job)
	first := int32(bp.first)
	l.all = bp.pods
	start := make([]int32, len(bp.jobs)+1)
	for _, j := range bp.job {
		start[j+1]++
	}
	for j := range bp.jobs {
		start[j+1] += start[j]
	}
	idx := make([]int32, len(bp.job))
	tasks := make([]string, len(bp.job))
	next := append([]int32(nil), start[:len(bp.jobs)]...)
	for i, j := range bp.job {
		idx[next[j]], tasks[next[j]] = first+int32(i), bp.tasks[i]
		next[j]++
	}
	base := len(l.units)
	for j, name := range bp.jobs {
		l.units = append(l.units, unit{job: true, name: name, pods: idx[start[j]:start[j+1]:start[j+1]]})
	}
	if !l.opts.DAG {
		return
	}
	// jobs are linked independently: runs of them on up to l.workers
	// goroutines, each with its own cache of parsed task names
	stats := make([]loadStats, l.workers)
	parallel(l.workers, len(bp.jobs), func(j int) int { return int(start[j+1] - start[j]) }, func(w, lo, hi int) {
		var names taskNames
		for j := lo; j < hi; j++ {
			if !linkDAG(l.all, l.units[base+j].pods, tasks[start[j]:start[j+1]], &names) {
				stats[w].skip(skipDAGCycle)
			}
		}
	})
	for i := range stats {
		l.st.merge(&stats[i])
	}
}

// taskNames caches parseTaskName: the same names ("M1", "R2_1") recur in
// every job. One linkDAG goroutine owns it.
type taskNames struct {
	m    map[string]parsedTask
	last string
	lp   parsedTask
	// scratch space for linkDAG, reused from job to job (allocating it per
	// job was a third of linkDAG's time)
	ts         []dagTask
	of, byTask []int32
}

// dagTask is one task of a job in linkDAG.
type dagTask struct {
	id    int
	deps  []int
	n     int32   // pods
	pods  []int32 // positions in idx, ascending
	state uint8   // cycle check: 0 new, 1 on the stack, 2 done
	after []int32
}

type parsedTask struct {
	id   int
	deps []int
	ok   bool
}

func (t *taskNames) parse(name string) (int, []int, bool) {
	if name == t.last && t.m != nil {
		return t.lp.id, t.lp.deps, t.lp.ok
	}
	if t.m == nil {
		t.m = make(map[string]parsedTask)
	}
	p, found := t.m[name]
	if !found {
		p.id, p.deps, p.ok = parseTaskName(name)
		t.m[name] = p
	}
	t.last, t.lp = name, p
	return p.id, p.deps, p.ok
}

// linkDAG fills After for the pods of one job, all[idx[i]] for each i, whose
// task names are tasks[i]: every pod of a task waits for every pod of the
// tasks named as its dependencies, After holding positions in idx. Pods of
// one task share one After slice. Dependencies on tasks without pods here are
// ignored. A job whose dependencies form a cycle keeps no dependencies
// (linkDAG reports false).
//
// A job has a handful of tasks, kept in a slice and searched linearly:
// linkDAG runs once per job (some 20,000 in a two-day benchmark load), and
// maps per job cost a fifth more.
func linkDAG(all []sim.PodSpec, idx []int32, tasks []string, names *taskNames) bool {
	pods := len(idx)
	// Most jobs have no dependencies at all (one task, or tasks named
	// without them): nothing to link.
	linked := false
	for i := range pods {
		if _, d, ok := names.parse(tasks[i]); ok && len(d) > 0 {
			linked = true
			break
		}
	}
	if !linked {
		return true
	}
	// the job's tasks, and its pods grouped by task, in names' scratch space
	ts := names.ts[:0]
	find := func(id int) int { // index in ts, or -1
		for k := range ts {
			if ts[k].id == id {
				return k
			}
		}
		return -1
	}
	of := slices.Grow(names.of[:0], pods)[:pods] // each pod's task in ts, -1 for a name without an id
	for i := range pods {
		id, d, ok := names.parse(tasks[i])
		if !ok {
			of[i] = -1
			continue
		}
		k := find(id)
		if k < 0 {
			k = len(ts)
			ts = append(ts, dagTask{id: id, deps: d})
		}
		ts[k].n++
		of[i] = int32(k)
	}
	byTask := slices.Grow(names.byTask[:0], pods)[:pods]
	start := int32(0)
	for k := range ts {
		ts[k].pods = byTask[start : start : start+ts[k].n]
		start += ts[k].n
	}
	for i, k := range of {
		if k >= 0 {
			ts[k].pods = append(ts[k].pods, int32(i))
		}
	}
	names.ts, names.of, names.byTask = ts, of, byTask
	// A cycle among the tasks present drops the job's dependencies; whether
	// there is one does not depend on the order of the search.
	var visit func(k int) bool
	visit = func(k int) bool {
		switch ts[k].state {
		case 1:
			return false
		case 2:
			return true
		}
		ts[k].state = 1
		for _, d := range ts[k].deps {
			if j := find(d); j >= 0 && d != ts[k].id && !visit(j) {
				return false
			}
		}
		ts[k].state = 2
		return true
	}
	for k := range ts {
		if !visit(k) {
			return false
		}
	}
	for k := range ts {
		var a []int32
		for _, d := range ts[k].deps {
			if j := find(d); j >= 0 && d != ts[k].id {
				a = append(a, ts[j].pods...)
			}
		}
		slices.Sort(a)
		ts[k].after = compactInt32(a)
	}
	for i := range pods {
		if k := of[i]; k >= 0 && len(ts[k].after) > 0 {
			all[idx[i]].After = ts[k].after
		}
	}
	return true
}

func compactInt32(a []int32) []int32 {
	if len(a) == 0 {
		return a
	}
	out := a[:1]
	for _, v := range a[1:] {
		if v != out[len(out)-1] {
			out = append(out, v)
		}
	}
	return out
}

// ---- load factor and final order ----

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
// an After slice still share one.
func (l *loader) replicate() []sim.PodSpec {
	slices.SortStableFunc(l.units, compareUnits)
	f := l.opts.LoadFactor
	whole, frac := math.Floor(f), f-math.Floor(f)
	rng := rand.New(rand.NewPCG(l.opts.Seed, 0x6c6f6164666163)) // stream "loadfac"
	var end sim.Time
	if l.opts.Window.To != 0 {
		end = l.opts.Window.To - l.opts.Window.From
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
			blocks = append(blocks, block{u: int32(ui), copy: int32(c), base: int32(n), shift: shift})
			n += len(u.pods)
		}
	}
	// the arrivals in a compact array, read in order: the loop below visits
	// the pods unit by unit, and reading each from l.all would miss the
	// cache once per pod
	arrival := make([]sim.Time, len(l.all))
	for i := range l.all {
		arrival[i] = l.all[i].Arrival
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
	return out
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
