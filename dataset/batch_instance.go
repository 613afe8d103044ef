package dataset

import (
	"cmp"
	"iter"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/apache/arrow/go/v15/arrow"

	"github.com/kubesim/kubesim/sim"
)

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
