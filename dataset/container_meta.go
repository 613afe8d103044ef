package dataset

import (
	"math"
	"sort"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"

	"github.com/kubesim/kubesim/sim"
)

type containerRec struct {
	t              int64
	app            string
	cpuReq, cpuLim int64 // -1 when absent
	mem            float64
	machine        int32 // index in loader.sel, -1 when not a kept machine (or none)
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
			r := containerRec{t: ts, cpuReq: -1, cpuLim: -1, mem: mem.getOrNaN(i), machine: -1}
			if mc := mach.code(i); mc >= 0 {
				r.machine = l.dict[mc]
			}
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
		u := unit{name: n, pods: []int32{int32(len(l.all))}}
		// time stamp 0 means "before the trace": deployed before a window
		// from 0 too (where it is the first record, not one before)
		if l.opts.WarmStart && (a.hasBefore || r.t == 0) {
			u.warm, u.node = true, -1
			if r.machine >= 0 {
				u.node = l.nodeOf[r.machine]
			}
		}
		l.units = append(l.units, u)
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
