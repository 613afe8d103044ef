package serve

import (
	"slices"
	"sync"
	"time"

	"github.com/kubesim/kubesim/sim"
)

// Views of the cluster, the label of kubesim_serve_view.
const (
	ViewInformer = "informer" // the API server's nodes and bound pods (Informer)
	ViewLedger   = "ledger"   // the pods the service assumed it placed (Ledger)
)

// view is where a decision's node load comes from: the Informer, while it
// is current, else the Ledger.
type view interface {
	// name is the view's label in /metrics (View*).
	name() string
	// load writes the requests and pod count on each named node, and the
	// pods of group on each, at now; a node it does not know has none.
	load(names []string, group string, now time.Time, req []sim.Resources, pods, grp []int32)
}

// view returns the view a request uses now.
func (s *Server) view() view {
	if in := s.cfg.Informer; in != nil && in.Current() {
		return in
	}
	return s.ledger
}

// lookup returns the named node for a request that names nodes only: the
// informer's copy when there is one, else the node cache's, else nil.
func (s *Server) lookup(name string) *node {
	if in := s.cfg.Informer; in != nil {
		if n := in.node(name); n != nil {
			return n
		}
	}
	s.cacheMu.RLock()
	defer s.cacheMu.RUnlock()
	return s.cache[name]
}

// build makes the cluster view: node states from annotations or the view
// v, and the services seen lately (for the holes prior's hole size).
func (q *request) build(v view, services *serviceLog, now time.Time) {
	n := len(q.nodes)
	req := make([]sim.Resources, n)
	pods := make([]int32, n)
	grp := make([]int32, n)
	v.load(q.names, q.pod.spec.Group, now, req, pods, grp)
	nodes := make([]sim.Node, n)
	for i, nd := range q.nodes {
		sn := sim.Node{Alloc: nd.spec.Allocatable, Requested: req[i], Pods: pods[i], MaxPods: nd.spec.MaxPods, ID: sim.NodeID(i), Spec: &nd.spec}
		if nd.annotated {
			sn.Requested, sn.Pods = nd.requested, nd.pods
		}
		sn.Used = sn.Requested
		if nd.usedKnown[0] {
			sn.Used.CPU = nd.used.CPU
		}
		if nd.usedKnown[1] {
			sn.Used.Mem = nd.used.Mem
		}
		nodes[i] = sn
	}
	q.cluster = sim.NewCluster(0, nodes...)
	services.fill(q.cluster)
	q.simPod = &sim.Pod{Spec: &q.pod.spec, Node: -1, QueuedAt: -q.pod.waited, Group: sim.NoGroup}
	// An extender sees one pod, not kube-scheduler's queue: the view's
	// queue holds just this pod, and no finished pods inform the lifetime
	// estimate (env.PodLifetime falls back to its constant). A policy that
	// learned to read the queue features sees a queue of one here
	// (docs/serve.md).
	q.cluster.NotePending(q.simPod, true)
	if q.pod.grouped {
		q.simPod.Group = 0 // the view counts the pod's own group only
		for i, k := range grp {
			if k > 0 {
				q.cluster.AddGroupPods(i, 0, k)
			}
		}
	}
}

// serviceLogSize is how many services the log remembers.
const serviceLogSize = 1024

// serviceLog remembers the memory requests of the last long-running pods
// (no activeDeadlineSeconds) that the extender was asked about, one entry
// per pod key, so that every view knows the sizes of the services it has
// seen (sim.Cluster.ServiceMem): the holes heuristic, and a policy trained
// with it as its prior, size their holes by them. In the simulator the
// cluster knows every service that arrived or was running at the start; an
// extender only knows the pods it was asked about since it started, so its
// hole size is the median of those (and tetris's choice until the first
// service). It is safe for concurrent use.
type serviceLog struct {
	mu     sync.Mutex
	keys   []string // ring of pod keys, parallel to mem
	mem    []int64
	next   int                 // the ring's oldest entry once it is full
	seen   map[string]struct{} // keys in the ring
	sorted []int64             // mem in ascending order, kept on note so that fill need not sort per request
}

// newServiceLog returns an empty log of n entries.
func newServiceLog(n int) *serviceLog {
	return &serviceLog{keys: make([]string, 0, n), mem: make([]int64, 0, n), seen: make(map[string]struct{}, n)}
}

// note records the pod of key and spec when it is a service not recorded
// yet; the oldest entry makes room when the log is full.
func (l *serviceLog) note(key string, spec *sim.PodSpec) {
	if spec.Duration != 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.seen[key]; ok {
		return
	}
	l.seen[key] = struct{}{}
	mem := spec.Requests.Mem
	i, _ := slices.BinarySearch(l.sorted, mem)
	l.sorted = slices.Insert(l.sorted, i, mem)
	if len(l.keys) < cap(l.keys) {
		l.keys, l.mem = append(l.keys, key), append(l.mem, mem)
		return
	}
	old := l.mem[l.next]
	j, _ := slices.BinarySearch(l.sorted, old)
	l.sorted = slices.Delete(l.sorted, j, j+1)
	delete(l.seen, l.keys[l.next])
	l.keys[l.next], l.mem[l.next] = key, mem
	l.next = (l.next + 1) % len(l.keys)
}

// fill notes every service of the log in c.
func (l *serviceLog) fill(c *sim.Cluster) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c.NoteServices(l.sorted...)
}
