package serve

import "github.com/kubesim/kubesim/sim"

// tally sums what is counted on each node: the requests and number of the
// pods there and the pods of each group, one entry per pod key. A pod put
// again moves (or changes) instead of counting twice. Both views keep
// one: the Ledger for the pods it assumed, the Informer for the pods the
// API server says are bound. It is not safe for concurrent use.
type tally struct {
	pods   map[string]counted          // by pod key
	nodes  map[string]*nodeLoad        // by node name
	groups map[string]map[string]int32 // group -> node -> pods
}

// counted is one pod's share of a tally.
type counted struct {
	node  string
	req   sim.Resources
	group string
}

type nodeLoad struct {
	req  sim.Resources
	pods int32
}

func newTally() *tally {
	return &tally{pods: map[string]counted{}, nodes: map[string]*nodeLoad{}, groups: map[string]map[string]int32{}}
}

// put counts pod key as c, replacing what it counted before.
func (t *tally) put(key string, c counted) {
	if old, ok := t.pods[key]; ok {
		if old == c {
			return
		}
		t.forget(key)
	}
	t.pods[key] = c
	nl := t.nodes[c.node]
	if nl == nil {
		nl = &nodeLoad{}
		t.nodes[c.node] = nl
	}
	nl.req = nl.req.Add(c.req)
	nl.pods++
	if c.group != "" {
		g := t.groups[c.group]
		if g == nil {
			g = map[string]int32{}
			t.groups[c.group] = g
		}
		g[c.node]++
	}
}

// forget stops counting pod key, if it was.
func (t *tally) forget(key string) {
	c, ok := t.pods[key]
	if !ok {
		return
	}
	delete(t.pods, key)
	if nl := t.nodes[c.node]; nl != nil {
		nl.req = nl.req.Sub(c.req)
		nl.pods--
		if nl.pods <= 0 {
			delete(t.nodes, c.node)
		}
	}
	if c.group != "" {
		if g := t.groups[c.group]; g != nil {
			g[c.node]--
			if g[c.node] <= 0 {
				delete(g, c.node)
			}
			if len(g) == 0 {
				delete(t.groups, c.group)
			}
		}
	}
}

// load writes the requests and pod count on each named node and the pods
// of group on each; a node without pods has none.
func (t *tally) load(names []string, group string, req []sim.Resources, pods, grp []int32) {
	g := t.groups[group]
	for i, name := range names {
		if nl := t.nodes[name]; nl != nil {
			req[i], pods[i] = nl.req, nl.pods
		}
		if group != "" && g != nil {
			grp[i] = g[name]
		}
	}
}
