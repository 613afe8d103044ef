package sched

import (
	"cmp"
	"slices"

	"github.com/kubesim/kubesim/sim"
)

// The repair of a hindsight packing: a local search that only ever adds
// allocated milli-GPU. For each pod left out that takes one device (a share
// or one whole GPU), it looks for a device whose occupants (pods on that
// device alone) can make room: either they all move to other devices, and
// the pod goes in (a gain of the pod's milli), or, failing that, one smaller
// occupant is left out in its place (a gain of the difference). Every move
// goes through sim.GPUCluster.Place and is undone when a step fails, so the
// packing stays feasible by construction. Passes repeat until one gains
// nothing (or maxRepairPasses).

const maxRepairPasses = 8

// hindsightPacking is a packing of a list of GPU pods (slots) on a cluster.
type hindsightPacking struct {
	w    *sim.GPUWorkload
	c    *sim.GPUCluster
	pods []int32       // slot -> index into w.Pods
	node []int32       // slot -> node, -1 when left out
	mask []sim.GPUMask // slot -> devices taken
	// dev lists, per node and device, the slots on that device (a pod of
	// several devices is on each of them, and is never moved).
	dev [][sim.MaxGPUs][]int32
	// shape ids (same CPU, memory and GPU request) and, per shape, a slot
	// of it and the nodes it fits now: a cheap test of "this pod could
	// move somewhere".
	shape    []int32
	shapeRep []int32
	fitNodes []int32
	milli    int64
	log      []undoEntry
	// version counts the committed moves; tried[s] is the version at
	// which a pod of shape s last found no move, so that its equals skip
	// the search until the packing changes.
	version int32
	tried   []int32
	buf     []int32 // roomFor's scratch
}

type undoEntry struct {
	slot int32
	node int32 // the node before the move, -1: left out
	mask sim.GPUMask
}

func newHindsightPacking(w *sim.GPUWorkload, c *sim.GPUCluster, pods []int32) *hindsightPacking {
	h := &hindsightPacking{w: w, c: c, pods: pods, node: make([]int32, len(pods)), mask: make([]sim.GPUMask, len(pods)),
		dev: make([][sim.MaxGPUs][]int32, len(c.Nodes)), shape: make([]int32, len(pods))}
	for j := range h.node {
		h.node[j] = -1
	}
	type key struct {
		cpu, mem int64
		gpu      sim.GPURequest
	}
	ids := map[key]int32{}
	for j, k := range pods {
		p := &w.Pods[k]
		kk := key{p.CPU, p.Mem, p.GPU}
		id, ok := ids[kk]
		if !ok {
			id = int32(len(h.shapeRep))
			ids[kk] = id
			h.shapeRep = append(h.shapeRep, int32(j))
		}
		h.shape[j] = id
	}
	h.fitNodes = make([]int32, len(h.shapeRep))
	h.tried = make([]int32, len(h.shapeRep))
	for s := range h.tried {
		h.tried[s] = -1
	}
	for i := range c.Nodes {
		h.countFits(i, 1)
	}
	return h
}

// countFits adds sign to the fit counts of the shapes that fit node i.
func (h *hindsightPacking) countFits(i int, sign int32) {
	n := &h.c.Nodes[i]
	for s, j := range h.shapeRep {
		if n.Fits(&h.w.Pods[h.pods[j]]) {
			h.fitNodes[s] += sign
		}
	}
}

// place puts slot j on node i taking m, logged; it reports whether the
// pod fits.
func (h *hindsightPacking) place(j int32, i int, m sim.GPUMask) bool {
	prev, pm := h.node[j], h.mask[j]
	if !h.placeRaw(j, i, m) {
		return false
	}
	h.log = append(h.log, undoEntry{j, prev, pm})
	return true
}

// remove takes slot j off its node (it is left out), logged.
func (h *hindsightPacking) remove(j int32) {
	h.log = append(h.log, undoEntry{j, h.node[j], h.mask[j]})
	h.removeRaw(j)
}

// rollback undoes the moves logged after mark, the last first.
func (h *hindsightPacking) rollback(mark int) {
	for k := len(h.log) - 1; k >= mark; k-- {
		e := h.log[k]
		if h.node[e.slot] >= 0 {
			h.removeRaw(e.slot)
		}
		if e.node >= 0 {
			h.placeRaw(e.slot, int(e.node), e.mask)
		}
	}
	h.log = h.log[:mark]
}

func (h *hindsightPacking) placeRaw(j int32, i int, m sim.GPUMask) bool {
	p := &h.w.Pods[h.pods[j]]
	n := &h.c.Nodes[i]
	if !n.Fits(p) || !n.GPU.CanTake(p.GPU, m) {
		return false
	}
	h.countFits(i, -1)
	h.c.Place(i, p, m)
	h.countFits(i, 1)
	h.node[j], h.mask[j] = int32(i), m
	for d := range sim.MaxGPUs {
		if m&(1<<uint(d)) != 0 {
			h.dev[i][d] = append(h.dev[i][d], j)
		}
	}
	h.milli += p.GPU.Total()
	return true
}

func (h *hindsightPacking) removeRaw(j int32) {
	i := int(h.node[j])
	p := &h.w.Pods[h.pods[j]]
	h.countFits(i, -1)
	h.c.Remove(i, p, h.mask[j])
	h.countFits(i, 1)
	for d := range sim.MaxGPUs {
		if h.mask[j]&(1<<uint(d)) != 0 {
			l := h.dev[i][d]
			k := slices.Index(l, j)
			h.dev[i][d] = append(l[:k], l[k+1:]...)
		}
	}
	h.node[j], h.mask[j] = -1, 0
	h.milli -= p.GPU.Total()
}

// repair runs the local search and returns the milli-GPU gained.
func (h *hindsightPacking) repair() int64 {
	start := h.milli
	bf := hindsightBestFit{}
	for range maxRepairPasses {
		before := h.milli
		for j := range h.pods {
			slot := int32(j)
			if h.node[slot] >= 0 {
				continue
			}
			p := &h.w.Pods[h.pods[slot]]
			if p.GPU.Count != 1 {
				continue
			}
			if h.tried[h.shape[slot]] == h.version {
				continue // an equal pod found no move in this packing
			}
			if h.relocate(slot, p, bf) || h.swapOut(slot, p) {
				h.version++
			} else {
				h.tried[h.shape[slot]] = h.version
			}
		}
		if h.milli == before {
			break
		}
	}
	h.log = h.log[:0]
	return h.milli - start
}

// roomFor returns the occupants of device d of node i that must leave for p
// to fit there (the smallest first, as few as needed; in h.buf), and
// whether the device can make room at all with occupants of at most
// movable milli each (the most free milli of any device: a larger one
// could go nowhere).
func (h *hindsightPacking) roomFor(i, d int, p *sim.GPUPodSpec, movable int16) ([]int32, bool) {
	n := &h.c.Nodes[i]
	free := n.GPU.Free[d]
	need := p.GPU.Milli
	if free >= need {
		return nil, true
	}
	h.buf = h.buf[:0]
	sum := free
	for _, j := range h.dev[i][d] {
		q := h.w.Pods[h.pods[j]].GPU
		if q.Count != 1 {
			return nil, false // a pod of several devices stays
		}
		if q.Milli <= movable {
			h.buf = append(h.buf, j)
			sum += q.Milli
		}
	}
	if sum < need {
		return nil, false
	}
	slices.SortFunc(h.buf, func(a, b int32) int {
		return cmp.Compare(h.w.Pods[h.pods[a]].GPU.Milli, h.w.Pods[h.pods[b]].GPU.Milli)
	})
	k := 0
	for free < need {
		free += h.w.Pods[h.pods[h.buf[k]]].GPU.Milli
		k++
	}
	return h.buf[:k], true
}

// mostFree returns the largest free milli of any device.
func (h *hindsightPacking) mostFree() int16 {
	var m int16
	for i := range h.c.Nodes {
		g := &h.c.Nodes[i].GPU
		for d := range int(g.N) {
			m = max(m, g.Free[d])
		}
	}
	return m
}

// relocate tries to make room for the left-out slot by moving occupants of
// one device elsewhere; it reports whether it placed the pod.
func (h *hindsightPacking) relocate(slot int32, p *sim.GPUPodSpec, bf hindsightBestFit) bool {
	most := h.mostFree()
	for i := range h.c.Nodes {
		n := &h.c.Nodes[i]
		if !p.GPU.Models.Allows(n.GPU.Model) || n.GPU.N == 0 {
			continue
		}
		for d := range int(n.GPU.N) {
			q, ok := h.roomFor(i, d, p, most)
			if !ok {
				continue
			}
			q = append([]int32(nil), q...) // h.buf is reused below
			var cpu, mem int64
			homeless := false // an occupant fits no node now
			for _, j := range q {
				qp := &h.w.Pods[h.pods[j]]
				cpu, mem = cpu+qp.CPU, mem+qp.Mem
				homeless = homeless || h.fitNodes[h.shape[j]] == 0
			}
			if homeless || n.CPUFree()+cpu < p.CPU || n.Mem-n.MemUsed+mem < p.Mem {
				continue
			}
			mark := len(h.log)
			for _, j := range q {
				h.remove(j)
			}
			if !h.place(slot, i, 1<<uint(d)) {
				h.rollback(mark)
				continue
			}
			moved := true
			for _, j := range q {
				qp := &h.w.Pods[h.pods[j]]
				ni, m := bf.Schedule(h.c, int(h.pods[j]), qp)
				if ni < 0 || !h.place(j, ni, m) {
					moved = false
					break
				}
			}
			if moved {
				return true
			}
			h.rollback(mark)
		}
	}
	return false
}

// swapOut puts the left-out slot in the place of one smaller occupant,
// which is left out instead: the device with the best gain. It reports
// whether it did.
func (h *hindsightPacking) swapOut(slot int32, p *sim.GPUPodSpec) bool {
	best, bestGain := int32(-1), int64(0)
	bestNode, bestDev := -1, -1
	for i := range h.c.Nodes {
		n := &h.c.Nodes[i]
		if !p.GPU.Models.Allows(n.GPU.Model) || n.GPU.N == 0 {
			continue
		}
		for d := range int(n.GPU.N) {
			for _, j := range h.dev[i][d] {
				q := &h.w.Pods[h.pods[j]]
				if q.GPU.Count != 1 || int(n.GPU.Free[d])+int(q.GPU.Milli) < int(p.GPU.Milli) ||
					n.CPUFree()+q.CPU < p.CPU || n.Mem-n.MemUsed+q.Mem < p.Mem {
					continue
				}
				if g := p.GPU.Total() - q.GPU.Total(); g > bestGain {
					best, bestGain, bestNode, bestDev = j, g, i, d
				}
			}
		}
	}
	if best < 0 {
		return false
	}
	mark := len(h.log)
	h.remove(best)
	if !h.place(slot, bestNode, 1<<uint(bestDev)) {
		h.rollback(mark)
		return false
	}
	return true
}

// leftOut returns the number of slots left out.
func (h *hindsightPacking) leftOut() int {
	n := 0
	for _, i := range h.node {
		if i < 0 {
			n++
		}
	}
	return n
}
