package dataset

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"runtime"
	"slices"
	"sort"
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
	// copies shifted by a random delay below Jitter (under WarmStart, extra
	// copies of containers deployed before the window are spread over the
	// window instead). Below 1 this thins the workload. Zero means 1.
	LoadFactor float64
	// WarmStart opens the window with the trace's own placement: each
	// container deployed before the window start gets a sim.Placement in
	// Workload.Initial on the node of the machine it ran on (the machine_id
	// of its latest container_meta record before the window start, among
	// the kept machines; time stamp 0, "before the trace", counts as before
	// a window from 0 too), so the engine binds it at time 0 without asking
	// the scheduler. A container whose machine is not a node at the window
	// start (absent then, joining later) gets no placement and arrives at
	// 0 as without WarmStart. With LoadFactor > 1 the extra copies of these
	// containers are not warm: each arrives at a time drawn uniformly from
	// [0, window length) under Seed, so the extra load of services grows
	// over the window rather than arriving as one burst at its start
	// (with an open-ended window, over [0, latest arrival of the window's
	// pods]). Copies of containers first deployed inside the window keep
	// the Jitter. Without WarmStart, every container deployed before the
	// window arrives at 0 (a cold start: one burst that the scheduler
	// packs).
	WarmStart bool
	// DAG makes a batch instance wait for every instance of the tasks its
	// task depends on (from the task name) by filling PodSpec.After.
	DAG bool
	// MachineMemMiB is the memory of a machine of normalised memory 100
	// (default DefaultMachineMemMiB).
	MachineMemMiB int64
	// Seed drives machine sampling, thinning, replication and jitter.
	Seed uint64
	// WindowStreams draws the load factor's choices (which units get an
	// extra copy, the copies' jitter, and when the extra copies of warm
	// containers arrive) from random streams that depend on the window's
	// start as well as on Seed. Without it one seed replicates the same
	// standing services at the same offsets in every window, so that the
	// windows of a seed share most of the pods a loaded cluster leaves
	// pending (docs/ppo.md, issue 14 round 5); machine sampling stays a
	// function of Seed alone either way (one seed, one cluster). Off by
	// default, which keeps every workload recorded before it.
	WindowStreams bool
	// Jitter bounds the arrival shift of replicated copies (default 1 min),
	// except the copies that WarmStart spreads over the window.
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
//     cpu_limit; Group is app_du. Under WarmStart, a container deployed
//     before the window is placed in Workload.Initial on its machine's node.
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
	return LoadContext(context.Background(), dir, opts)
}

// LoadContext is Load that stops, with ctx's error, soon after ctx is done
// (between record batches).
func LoadContext(ctx context.Context, dir string, opts LoadOptions) (*sim.Workload, error) {
	src, err := openArrowSource(dir)
	if err != nil {
		return nil, err
	}
	w, st, err := load(ctx, src, opts)
	if err != nil {
		return nil, err
	}
	st.log(w)
	return w, nil
}

// LoadSplit loads every window of ws, split by split, after checking that
// the windows are valid and that no two windows of different splits overlap
// (an error wrapping ErrOverlap). opts.Window and opts.Name are set per
// window.
func LoadSplit(dir string, ws Windows, opts LoadOptions) (train, val, test []*sim.Workload, err error) {
	if err := ws.Validate(); err != nil {
		return nil, nil, nil, err
	}
	src, err := openArrowSource(dir)
	if err != nil {
		return nil, nil, nil, err
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
		return nil, nil, nil, err
	}
	if val, err = loadAll(ws.Val); err != nil {
		return nil, nil, nil, err
	}
	if test, err = loadAll(ws.Test); err != nil {
		return nil, nil, nil, err
	}
	return train, val, test, nil
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
	warm               int      // initial placements (WarmStart)
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
		"events", len(w.Events), "online", s.online, "batch", s.batch, "pods", len(w.Pods), "warm", s.warm, "rows", s.rows}
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
	nodeOf   []int32 // index in sel -> index in nodes of its node at the window start, or -1
	total    int     // machines in the trace
	allKept  bool    // every machine kept: pods are not filtered by machine

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
	// warm marks (under WarmStart only) a container deployed before the
	// window; node is then the index in nodes of its initial placement, or
	// -1 when its machine is not a node at the window start
	warm bool
	node int32
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
	if !hasMachine(l.nodes, l.evs) {
		return nil, l.st, fmt.Errorf("%w: %d machine ids in %s, none in use with a CPU and memory size in window %s",
			ErrNoMachines, l.st.machines, MachineMeta, opts.Window)
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
	pods, initial := l.replicate()
	l.st.warm = len(initial)
	w := &sim.Workload{Name: opts.Name, Nodes: l.nodes, Events: l.evs, Pods: pods, Initial: initial}
	if opts.Window.To != 0 {
		w.End = opts.Window.To - opts.Window.From
	}
	if err := w.Validate(); err != nil {
		return nil, l.st, fmt.Errorf("loading %s: %w", opts.Name, err)
	}
	return w, l.st, nil
}

// ErrNoMachines is wrapped by the error of a load whose cluster would have
// no node at all (an empty or header-only machine_meta, machines without
// sizes): every pod would be unschedulable, which is no experiment.
var ErrNoMachines = errors.New("trace has no usable machines")

// hasMachine reports whether a cluster of nodes, with events evs, ever has
// a node.
func hasMachine(nodes []sim.NodeSpec, evs []sim.MachineEvent) bool {
	if len(nodes) > 0 {
		return true
	}
	for _, e := range evs {
		if e.Kind == sim.MachineAdd {
			return true
		}
	}
	return false
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
