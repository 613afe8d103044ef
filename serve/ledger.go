package serve

import (
	"sync"
	"time"

	"github.com/kubesim/kubesim/sim"
)

// Ledger is the service's estimate of what runs where, for nodes whose
// annotations do not say: the pods it has placed. An extender never learns
// where kube-scheduler bound a pod, so after answering /prioritize the
// service assumes the pod went to the node it scored highest (the way
// kube-scheduler assumes a pod before its binding is confirmed). A pod seen
// again (same UID, or namespace/name) is moved, not counted twice; an entry
// expires after a TTL, and the ledger holds at most a fixed number of pods,
// dropping the oldest. It is an estimate: deletions, binds by other
// schedulers and pods that outlive the TTL are not seen. It is safe for
// concurrent use.
type Ledger struct {
	ttl time.Duration
	cap int

	mu     sync.Mutex
	pods   map[string]assumed          // by pod key
	nodes  map[string]*nodeLoad        // by node name
	groups map[string]map[string]int32 // group -> node -> pods
	order  []orderEntry                // insertion order, for expiry; stale entries skipped
	head   int
	seq    uint64
}

type assumed struct {
	node  string
	req   sim.Resources
	group string
	at    time.Time
	seq   uint64
}

type orderEntry struct {
	key string
	seq uint64
}

type nodeLoad struct {
	req  sim.Resources
	pods int32
}

// NewLedger returns an empty ledger whose entries last ttl and which holds
// at most capacity pods.
func NewLedger(ttl time.Duration, capacity int) *Ledger {
	return &Ledger{ttl: ttl, cap: capacity, pods: map[string]assumed{}, nodes: map[string]*nodeLoad{}, groups: map[string]map[string]int32{}}
}

// Assume records that pod key (requests req, group, possibly empty) went to
// node at now, replacing an earlier record of the pod.
func (l *Ledger) Assume(key, node string, req sim.Resources, group string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expire(now)
	if old, ok := l.pods[key]; ok {
		l.remove(key, old)
	}
	l.seq++
	a := assumed{node: node, req: req, group: group, at: now, seq: l.seq}
	l.pods[key] = a
	nl := l.nodes[node]
	if nl == nil {
		nl = &nodeLoad{}
		l.nodes[node] = nl
	}
	nl.req = nl.req.Add(req)
	nl.pods++
	if group != "" {
		g := l.groups[group]
		if g == nil {
			g = map[string]int32{}
			l.groups[group] = g
		}
		g[node]++
	}
	l.order = append(l.order, orderEntry{key, l.seq})
	for len(l.pods) > l.cap {
		l.dropOldest()
	}
}

// Forget removes pod key's record, if any.
func (l *Ledger) Forget(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if a, ok := l.pods[key]; ok {
		l.remove(key, a)
	}
}

// Len returns the number of pods recorded.
func (l *Ledger) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.pods)
}

// load returns the requests and pod count assumed on each named node and
// the pods of group on each, at now; missing nodes have none.
func (l *Ledger) load(names []string, group string, now time.Time, req []sim.Resources, pods, grp []int32) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expire(now)
	g := l.groups[group]
	for i, name := range names {
		if nl := l.nodes[name]; nl != nil {
			req[i], pods[i] = nl.req, nl.pods
		}
		if group != "" && g != nil {
			grp[i] = g[name]
		}
	}
}

// expire drops entries older than the TTL.
func (l *Ledger) expire(now time.Time) {
	for l.head < len(l.order) {
		e := l.order[l.head]
		a, ok := l.pods[e.key]
		if ok && a.seq == e.seq && now.Sub(a.at) < l.ttl {
			break
		}
		if ok && a.seq == e.seq {
			l.remove(e.key, a)
		}
		l.head++
	}
	l.compact()
}

// dropOldest removes the oldest live entry.
func (l *Ledger) dropOldest() {
	for l.head < len(l.order) {
		e := l.order[l.head]
		l.head++
		if a, ok := l.pods[e.key]; ok && a.seq == e.seq {
			l.remove(e.key, a)
			break
		}
	}
	l.compact()
}

// compact reclaims the consumed front of order once it is half of it.
func (l *Ledger) compact() {
	if l.head > 1024 && l.head*2 > len(l.order) {
		l.order = append(l.order[:0], l.order[l.head:]...)
		l.head = 0
	}
}

func (l *Ledger) remove(key string, a assumed) {
	delete(l.pods, key)
	if nl := l.nodes[a.node]; nl != nil {
		nl.req = nl.req.Sub(a.req)
		nl.pods--
		if nl.pods <= 0 {
			delete(l.nodes, a.node)
		}
	}
	if a.group != "" {
		if g := l.groups[a.group]; g != nil {
			g[a.node]--
			if g[a.node] <= 0 {
				delete(g, a.node)
			}
			if len(g) == 0 {
				delete(l.groups, a.group)
			}
		}
	}
}
