package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kubesim/kubesim/sim"
)

// assignedPods is the field selector of the pods that count on a node: bound
// and not finished (kube-scheduler's own pod informer uses the same phases).
const assignedPods = "spec.nodeName!=,status.phase!=" + string(corev1.PodSucceeded) + ",status.phase!=" + string(corev1.PodFailed)

// InformerConfig configures an Informer. The zero value of a field takes
// its default.
type InformerConfig struct {
	// Probe asks the API server whether it answers (default: the client's
	// discovery ServerVersion). It should return within a few seconds.
	Probe func(ctx context.Context) error
	// ProbeEvery is the time between probes (default 5 s).
	ProbeEvery time.Duration
	// StaleAfter is how old the view may be, since the last event or
	// successful probe, before the server stops trusting it (default 30 s).
	StaleAfter time.Duration
	// Now is the wall clock (default time.Now), for tests.
	Now func() time.Time
	// Logger receives the view's changes of state (default slog.Default()).
	Logger *slog.Logger
}

// Informer is the cluster as the API server says it is: nodes and the pods
// bound to them, kept by client-go shared informers (list, then watch). It
// is the view the server uses while its caches have synced and the API
// server answers; the Ledger stands in otherwise. Per node it keeps the
// sum of the requests of the pods bound there and not finished (requests
// counted as kube-scheduler counts them, podResources), their number, and
// the pods of each controller group; and every node converted once per
// change, for requests that carry node names only. It is safe for
// concurrent use.
type Informer struct {
	cfg   InformerConfig
	nodes cache.SharedIndexInformer
	pods  cache.SharedIndexInformer

	mu    sync.RWMutex
	specs map[string]*node // converted nodes by name
	tally *tally

	synced    atomic.Bool
	reachable atomic.Bool
	lastGood  atomic.Int64 // unix nanoseconds of the last event or successful probe
}

var _ view = (*Informer)(nil)

// NewInformer returns an informer view over client; Run starts it.
func NewInformer(client kubernetes.Interface, cfg InformerConfig) *Informer {
	if cfg.Probe == nil {
		cfg.Probe = func(context.Context) error {
			_, err := client.Discovery().ServerVersion()
			return err
		}
	}
	if cfg.ProbeEvery <= 0 {
		cfg.ProbeEvery = 5 * time.Second
	}
	if cfg.StaleAfter <= 0 {
		cfg.StaleAfter = 30 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	in := &Informer{
		cfg:   cfg,
		nodes: coreinformers.NewNodeInformer(client, 0, cache.Indexers{}),
		pods: coreinformers.NewFilteredPodInformer(client, metav1.NamespaceAll, 0, cache.Indexers{}, func(o *metav1.ListOptions) {
			o.FieldSelector = assignedPods
		}),
		specs: map[string]*node{},
		tally: newTally(),
	}
	in.reachable.Store(true)
	for _, inf := range []cache.SharedIndexInformer{in.nodes, in.pods} {
		_ = inf.SetTransform(stripManagedFields)     // fails only once started
		_ = inf.SetWatchErrorHandler(in.watchFailed) // likewise
	}
	_, _ = in.nodes.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { in.putNode(o) },
		UpdateFunc: func(_, o any) { in.putNode(o) },
		DeleteFunc: in.deleteNode,
	})
	_, _ = in.pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { in.putPod(o) },
		UpdateFunc: func(_, o any) { in.putPod(o) },
		DeleteFunc: in.deletePod,
	})
	return in
}

// Run lists and watches until ctx is done: it starts the informers, marks
// the view synced once both have listed, and probes the API server every
// ProbeEvery. It never blocks a request: until the view has synced, and
// while the API server does not answer, the server uses its Ledger.
func (in *Informer) Run(ctx context.Context) {
	go in.nodes.RunWithContext(ctx)
	go in.pods.RunWithContext(ctx)
	go func() {
		if cache.WaitForCacheSync(ctx.Done(), in.nodes.HasSynced, in.pods.HasSynced) {
			in.touch()
			in.synced.Store(true)
			in.cfg.Logger.Info("serve: informer view synced", "nodes", len(in.nodes.GetStore().ListKeys()), "pods", len(in.pods.GetStore().ListKeys()))
		}
	}()
	t := time.NewTicker(in.cfg.ProbeEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			pctx, cancel := context.WithTimeout(ctx, in.cfg.ProbeEvery)
			err := in.cfg.Probe(pctx)
			cancel()
			if ctx.Err() != nil {
				return
			}
			in.probed(err)
		}
	}
}

// probed records the outcome of one probe of the API server.
func (in *Informer) probed(err error) {
	if err != nil {
		in.setReachable(false, err)
		return
	}
	in.touch()
	in.setReachable(true, nil)
}

// watchFailed is the informers' watch error handler: a list or watch that
// failed (other than an expired resource version or a watch closed
// normally) marks the API server unreachable until the next good probe.
func (in *Informer) watchFailed(_ *cache.Reflector, err error) {
	if errors.Is(err, io.EOF) || apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
		return
	}
	in.setReachable(false, err)
}

func (in *Informer) setReachable(ok bool, err error) {
	if in.reachable.Swap(ok) == ok {
		return
	}
	if ok {
		in.cfg.Logger.Info("serve: API server answers again: back to the informer view")
	} else {
		in.cfg.Logger.Warn("serve: API server unreachable: falling back to the ledger view", "err", err)
	}
}

func (in *Informer) touch() { in.lastGood.Store(in.cfg.Now().UnixNano()) }

// Synced reports whether both informers have listed.
func (in *Informer) Synced() bool { return in.synced.Load() }

// Reachable reports whether the API server answered the last probe and no
// watch has failed since.
func (in *Informer) Reachable() bool { return in.reachable.Load() }

// Age is the time since the view was last known to be current: the last
// event or successful probe (0 before the first).
func (in *Informer) Age() time.Duration {
	last := in.lastGood.Load()
	if last == 0 {
		return 0
	}
	return max(in.cfg.Now().Sub(time.Unix(0, last)), 0)
}

// Current reports whether the server should use this view: synced, the API
// server reachable, and the view younger than StaleAfter.
func (in *Informer) Current() bool {
	return in.Synced() && in.Reachable() && in.Age() < in.cfg.StaleAfter
}

// name implements view.
func (in *Informer) name() string { return ViewInformer }

// load implements view: now is unused, the informer's view does not expire.
func (in *Informer) load(names []string, group string, _ time.Time, req []sim.Resources, pods, grp []int32) {
	in.mu.RLock()
	defer in.mu.RUnlock()
	in.tally.load(names, group, req, pods, grp)
}

// node returns the named node as last converted, or nil.
func (in *Informer) node(name string) *node {
	in.mu.RLock()
	defer in.mu.RUnlock()
	return in.specs[name]
}

// NodeLoad is what the view counts on one node.
type NodeLoad struct {
	Requested sim.Resources // sum of the requests of the pods bound there
	Pods      int32
}

// Loads returns what the view counts on every node that has a pod, by
// node name.
func (in *Informer) Loads() map[string]NodeLoad {
	in.mu.RLock()
	defer in.mu.RUnlock()
	out := make(map[string]NodeLoad, len(in.tally.nodes))
	for name, nl := range in.tally.nodes {
		out[name] = NodeLoad{Requested: nl.req, Pods: nl.pods}
	}
	return out
}

func (in *Informer) putNode(o any) {
	in.touch()
	n, ok := o.(*corev1.Node)
	if !ok {
		return
	}
	conv, err := convertNode(n, "node")
	in.mu.Lock()
	defer in.mu.Unlock()
	if err != nil {
		delete(in.specs, n.Name)
		in.cfg.Logger.Warn("serve: node left out of the informer view", "node", n.Name, "err", err)
		return
	}
	in.specs[n.Name] = conv
}

func (in *Informer) deleteNode(o any) {
	in.touch()
	if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o = t.Obj
	}
	if n, ok := o.(*corev1.Node); ok {
		in.mu.Lock()
		delete(in.specs, n.Name)
		in.mu.Unlock()
	}
}

func (in *Informer) putPod(o any) {
	in.touch()
	p, ok := o.(*corev1.Pod)
	if !ok {
		return
	}
	key := podKey(p)
	if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		in.mu.Lock()
		in.tally.forget(key)
		in.mu.Unlock()
		return
	}
	req, _, err := podResources(p)
	if err != nil { // the API server validates requests: not expected
		in.cfg.Logger.Warn("serve: pod counted without requests", "pod", p.Namespace+"/"+p.Name, "err", err)
		req = sim.Resources{}
	}
	in.mu.Lock()
	in.tally.put(key, counted{node: p.Spec.NodeName, req: req, group: podGroup(p)})
	in.mu.Unlock()
}

func (in *Informer) deletePod(o any) {
	in.touch()
	if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o = t.Obj
	}
	if p, ok := o.(*corev1.Pod); ok {
		in.mu.Lock()
		in.tally.forget(podKey(p))
		in.mu.Unlock()
	}
}

// stripManagedFields drops what the view never reads before the informers
// store an object (managed fields are a large share of a Node's JSON).
func stripManagedFields(o any) (any, error) {
	if m, ok := o.(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	return o, nil
}

// register adds the view's gauges to reg.
func (in *Informer) register(reg *prometheus.Registry) error {
	b := func(v bool) float64 {
		if v {
			return 1
		}
		return 0
	}
	for _, c := range []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "kubesim_serve_informer_synced", Help: "1 once the node and pod informers have listed, else 0.",
		}, func() float64 { return b(in.Synced()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "kubesim_serve_api_reachable", Help: "1 while the API server answers the service's probes and watches, else 0.",
		}, func() float64 { return b(in.Reachable()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "kubesim_serve_informer_age_seconds", Help: "Time since the informer view was last known current (its last event or successful probe).",
		}, func() float64 { return in.Age().Seconds() }),
	} {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("serve: informer metrics: %w", err)
		}
	}
	return nil
}
