package dataset

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"

	"github.com/kubesim/kubesim/sim"
)

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
	l.nodeOf = make([]int32, len(l.sel))
	for i, id := range l.sel {
		l.machines[id] = int32(i)
		rs := recs[id]
		sort.SliceStable(rs, func(a, b int) bool { return rs[a].t < rs[b].t })
		n := len(l.nodes)
		l.machineTimeline(id, rs)
		l.nodeOf[i] = -1
		if len(l.nodes) > n { // a node at the window start
			l.nodeOf[i] = int32(n)
		}
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
