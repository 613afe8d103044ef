package sim

import (
	"cmp"
	"slices"
)

// scaleUp adds nodes from the template when pods have been unschedulable
// for longer than ScaleUpDelay, like cluster-autoscaler: it packs those pods
// first-fit-decreasing into the nodes already being provisioned and then
// into new template nodes, and provisions as many new nodes as that needs,
// within MaxNodes. Pods that would not fit an empty template node (too large,
// or blocked by its taints or labels) do not count.
func (e *Engine) scaleUp() {
	a := &e.cfg.Autoscaler
	room := a.MaxNodes - len(e.c.nodes) - e.provisioning
	if room <= 0 {
		return
	}
	tmpl := Node{Alloc: a.Template.Allocatable, MaxPods: a.Template.MaxPods, Spec: &a.Template,
		HardTaints: hasHardTaints(a.Template.Taints)}
	if tmpl.MaxPods == 0 {
		tmpl.MaxPods = DefaultMaxPods
	}
	var want []int32
	for _, id := range e.unsched {
		p := &e.pods[id]
		if p.unschedAt >= 0 && e.c.now-p.unschedAt >= a.ScaleUpDelay && Feasible(&tmpl, p.Spec) {
			want = append(want, id)
		}
	}
	if len(want) == 0 {
		return
	}
	slices.SortFunc(want, func(x, y int32) int {
		px, py := e.pods[x].Spec, e.pods[y].Spec
		if c := cmp.Compare(py.Priority, px.Priority); c != 0 {
			return c
		}
		// Larger first, by the sum of shares of the template.
		sx := float64(px.Requests.CPU)/float64(tmpl.Alloc.CPU) + float64(px.Requests.Mem)/float64(tmpl.Alloc.Mem)
		sy := float64(py.Requests.CPU)/float64(tmpl.Alloc.CPU) + float64(py.Requests.Mem)/float64(tmpl.Alloc.Mem)
		if c := cmp.Compare(sy, sx); c != 0 {
			return c
		}
		return cmp.Compare(x, y)
	})
	bins := make([]Node, e.provisioning, e.provisioning+len(want))
	for i := range bins {
		bins[i] = tmpl
	}
	added := 0
	for _, id := range want {
		s := e.pods[id].Spec
		placed := false
		for i := range bins {
			if FitsResources(&bins[i], s) {
				bins[i].Requested = bins[i].Requested.Add(s.Requests)
				bins[i].Pods++
				placed = true
				break
			}
		}
		if !placed && added < room {
			b := tmpl
			b.Requested, b.Pods = s.Requests, 1
			bins = append(bins, b)
			added++
		}
	}
	for range added {
		lat := a.ProvisionDelay
		if a.ProvisionNoise > 0 {
			lat += Time(e.rng.NormFloat64() * float64(a.ProvisionNoise))
		}
		e.provisioning++
		e.counters.ScaleUps++
		e.push(event{at: e.c.now + max(lat, 0), kind: evProvisioned})
	}
	if added > 0 {
		e.scaledUp, e.lastScaleUp = true, e.c.now
	}
}

// scaleDown removes at most one node per scan whose requested utilisation
// (the larger of its CPU and memory requested shares) has stayed below
// ScaleDownThreshold for ScaleDownCooldown, when all its pods fit on the
// other nodes; they are drained and rescheduled. Nothing is removed within
// ScaleDownDelayAfterAdd of a scale-up, or below MinNodes.
func (e *Engine) scaleDown() {
	a := &e.cfg.Autoscaler
	for i := range e.c.nodes {
		n := &e.c.nodes[i]
		ns := e.nodes[n.ID]
		u := max(ratio(n.Requested.CPU, n.Alloc.CPU), ratio(n.Requested.Mem, n.Alloc.Mem))
		if u < a.ScaleDownThreshold {
			if ns.underSince < 0 {
				ns.underSince = e.c.now
			}
		} else {
			ns.underSince = -1
		}
	}
	if len(e.c.nodes) <= a.MinNodes || (e.scaledUp && e.c.now-e.lastScaleUp < a.ScaleDownDelayAfterAdd) {
		return
	}
	for i := range e.c.nodes {
		ns := e.nodes[e.c.nodes[i].ID]
		if ns.underSince >= 0 && e.c.now-ns.underSince >= a.ScaleDownCooldown && e.podsFitElsewhere(i) {
			e.counters.ScaleDowns++
			e.removeNode(e.c.nodes[i].ID, true)
			return
		}
	}
}

// podsFitElsewhere reports whether every pod bound to the node at slot i
// passes the filters on some other node, placing them first-fit, largest
// first, on a scratch copy of the other nodes.
func (e *Engine) podsFitElsewhere(i int) bool {
	ids := slices.Clone(e.nodes[e.c.nodes[i].ID].pods)
	if len(ids) == 0 {
		return true
	}
	slices.SortFunc(ids, func(x, y int32) int {
		rx, ry := e.pods[x].Spec.Requests, e.pods[y].Spec.Requests
		if c := cmp.Compare(ry.CPU+ry.Mem, rx.CPU+rx.Mem); c != 0 {
			return c
		}
		return cmp.Compare(x, y)
	})
	others := slices.Clone(e.c.nodes)
	for _, id := range ids {
		s := e.pods[id].Spec
		placed := false
		for j := range others {
			if j != i && Feasible(&others[j], s) {
				others[j].Requested = others[j].Requested.Add(s.Requests)
				others[j].Pods++
				placed = true
				break
			}
		}
		if !placed {
			return false
		}
	}
	return true
}
