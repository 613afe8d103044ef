package serve

import (
	"sync"
	"time"

	"github.com/kubesim/kubesim/sim"
)

// Ledger is the service's estimate of what runs where, for nodes whose
// annotations do not say: the pods it has placed. It is the view without
// API access, or while the Informer view is not current (view.go). An extender never learns
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

	mu    sync.Mutex
	pods  map[string]assumed // by pod key
	tally *tally             // the assumed pods summed per node
	order []orderEntry       // insertion order, for expiry; stale entries skipped
	head  int
	seq   uint64
}

type assumed struct {
	at  time.Time
	seq uint64
}

type orderEntry struct {
	key string
	seq uint64
}

// NewLedger returns an empty ledger whose entries last ttl and which holds
// at most capacity pods.
func NewLedger(ttl time.Duration, capacity int) *Ledger {
	return &Ledger{ttl: ttl, cap: capacity, pods: map[string]assumed{}, tally: newTally()}
}

// Assume records that pod key (requests req, group, possibly empty) went to
// node at now, replacing an earlier record of the pod.
func (l *Ledger) Assume(key, node string, req sim.Resources, group string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expire(now)
	l.seq++
	l.pods[key] = assumed{at: now, seq: l.seq}
	l.tally.put(key, counted{node: node, req: req, group: group})
	l.order = append(l.order, orderEntry{key, l.seq})
	for len(l.pods) > l.cap {
		l.dropOldest()
	}
}

// Forget removes pod key's record, if any.
func (l *Ledger) Forget(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.remove(key)
}

// name implements view.
func (l *Ledger) name() string { return ViewLedger }

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
	l.tally.load(names, group, req, pods, grp)
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
			l.remove(e.key)
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
			l.remove(e.key)
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

func (l *Ledger) remove(key string) {
	delete(l.pods, key)
	l.tally.forget(key)
}
