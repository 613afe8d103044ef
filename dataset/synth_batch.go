package dataset

import (
	"context"
	"encoding/base64"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
)

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
