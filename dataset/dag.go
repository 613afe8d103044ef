package dataset

import (
	"slices"
	"strings"

	"github.com/kubesim/kubesim/sim"
)

// maxTaskName is the length at which the trace cuts task names; a name of
// this length may have lost the end of its last dependency.
const maxTaskName = 50

// parseTaskName reads the DAG information of a batch task name: "M5_3_4" is
// task 5, which depends on tasks 3 and 4 of the same job. The leading letters
// carry no dependency information. Names starting with "task_" (independent
// tasks) and names that do not follow the pattern give ok == false.
//
// A name of exactly 50 characters was cut by the trace, so its last
// dependency is unreliable ("M9_12" may have been "M9_123") and is dropped.
func parseTaskName(name string) (id int, deps []int, ok bool) {
	if strings.HasPrefix(name, "task_") {
		return 0, nil, false
	}
	i := 0
	for i < len(name) && (name[i] >= 'A' && name[i] <= 'Z' || name[i] >= 'a' && name[i] <= 'z') {
		i++
	}
	if i == 0 || i == len(name) {
		return 0, nil, false
	}
	parts := strings.Split(name[i:], "_")
	if len(name) >= maxTaskName && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	nums := make([]int, 0, len(parts))
	for _, p := range parts {
		n, good := atoiPos(p)
		if !good {
			return 0, nil, false
		}
		nums = append(nums, n)
	}
	return nums[0], nums[1:], true
}

// atoiPos parses a non-negative decimal integer of at most 9 digits.
func atoiPos(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i] - '0'
		if c > 9 {
			return 0, false
		}
		n = n*10 + int(c)
	}
	return n, true
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
