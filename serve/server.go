package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	corev1 "k8s.io/api/core/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

// Config configures a Server. The zero value of a field takes its default.
type Config struct {
	// Budget is the policy's latency budget per decision (default 50 ms):
	// waiting for a free policy instance and its forward pass together.
	Budget time.Duration
	// Shadow answers with kube-default's scores and only logs and counts
	// what the policy would have chosen.
	Shadow bool
	// MaxBody is the largest request body in bytes (default 32 MiB, about
	// 10,000 nodes as kube-scheduler sends them).
	MaxBody int64
	// Workers is the number of policy instances (default GOMAXPROCS).
	Workers int
	// AssumeTTL is how long the Ledger counts a pod on the node it was
	// placed on (default 10 minutes); MaxAssumed the most pods it holds
	// (default 100,000).
	AssumeTTL  time.Duration
	MaxAssumed int
	// MaxNodes bounds the node cache (default 50,000 nodes).
	MaxNodes int
	// MaxRequestNodes bounds the nodes of one request (Nodes.Items,
	// NodeNames, a NodeList), counted while the body is decoded (default
	// 10,000; decode.go).
	MaxRequestNodes int
	// MaxDecodes bounds the request bodies decoded at once (default
	// GOMAXPROCS).
	MaxDecodes int
	// Informer, when set, is the cluster as the API server says it is:
	// node load comes from it while it is current, and requests that name
	// nodes only find them there (view.go). The caller runs it. Without it
	// the Ledger estimates node load.
	Informer *Informer
	// Now is the wall clock (default time.Now), for tests.
	Now func() time.Time
	// Logger receives shadow-mode decisions and failures (default
	// slog.Default()).
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.Budget <= 0 {
		c.Budget = 50 * time.Millisecond
	}
	if c.MaxBody <= 0 {
		c.MaxBody = 32 << 20
	}
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if c.AssumeTTL <= 0 {
		c.AssumeTTL = 10 * time.Minute
	}
	if c.MaxAssumed <= 0 {
		c.MaxAssumed = 100_000
	}
	if c.MaxNodes <= 0 {
		c.MaxNodes = 50_000
	}
	if c.MaxRequestNodes <= 0 {
		c.MaxRequestNodes = 10_000
	}
	if c.MaxDecodes <= 0 {
		c.MaxDecodes = runtime.GOMAXPROCS(0)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Server is the extender: an http.Handler for /filter, /prioritize, /nodes,
// /healthz and /metrics. It is safe for concurrent use.
type Server struct {
	cfg    Config
	pool   chan Policy
	kd     sync.Pool // *sched.Framework, kube-default
	ledger *Ledger
	m      *metrics
	mux    *http.ServeMux

	cacheMu sync.RWMutex
	cache   map[string]*node

	services *serviceLog // the services asked about lately (view.go)

	decodes chan struct{} // a slot per body being decoded (decode.go)
}

// New returns a server whose policy instances come from newPolicy
// (cfg.Workers of them, made now).
func New(cfg Config, newPolicy NewPolicy) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	s := &Server{
		cfg:    cfg,
		pool:   make(chan Policy, cfg.Workers),
		ledger: NewLedger(cfg.AssumeTTL, cfg.MaxAssumed),
		m:      newMetrics(),
		mux:    http.NewServeMux(),
		cache:  map[string]*node{},

		services: newServiceLog(serviceLogSize),
		decodes:  make(chan struct{}, cfg.MaxDecodes),
	}
	for i := range cfg.Workers {
		p, err := newPolicy()
		if err != nil {
			return nil, fmt.Errorf("serve: policy instance %d: %w", i, err)
		}
		s.pool <- p
	}
	s.kd.New = func() any {
		f, err := sched.NewKubeDefault(0, sched.KubeDefaultOptions{PercentageOfNodesToScore: 100})
		if err != nil {
			panic("serve: kube-default profile: " + err.Error()) // the package's own profile validates
		}
		return f
	}
	s.mux.HandleFunc("/filter", s.handle(VerbFilter, s.filter))
	s.mux.HandleFunc("/prioritize", s.handle(VerbPrioritize, s.prioritize))
	s.mux.HandleFunc("/nodes", s.handle(VerbNodes, s.nodes))
	s.mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	if err := s.m.watchView(s.view, cfg.Informer); err != nil {
		return nil, err
	}
	s.mux.Handle("/metrics", promhttp.HandlerFor(s.m.reg, promhttp.HandlerOpts{}))
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Ledger returns the server's estimate of the pods it placed.
func (s *Server) Ledger() *Ledger { return s.ledger }

// Serve answers requests on ln until ctx is cancelled, then stops accepting
// and waits up to grace for the requests in flight to finish.
func (s *Server) Serve(ctx context.Context, ln net.Listener, grace time.Duration) error {
	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.cfg.Logger.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := srv.Shutdown(sctx)
	<-errc // http.ErrServerClosed
	if err != nil {
		return fmt.Errorf("serve: shutdown: %w", err)
	}
	return nil
}

// handle wraps a verb's handler: POST only, metrics, errors as JSON with
// the status of an InputError (500 otherwise), panics recovered.
func (s *Server) handle(verb string, h func(w http.ResponseWriter, r *http.Request) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		s.m.requests.WithLabelValues(verb).Inc()
		var out any
		var err error
		if r.Method != http.MethodPost {
			err = &InputError{Status: http.StatusMethodNotAllowed, Msg: "method " + r.Method + " not allowed (POST)"}
		} else {
			func() {
				defer func() {
					if p := recover(); p != nil {
						s.cfg.Logger.Error("serve: handler panicked", "verb", verb, "panic", p)
						err = fmt.Errorf("internal error: %v", p)
					}
				}()
				out, err = h(w, r)
			}()
		}
		w.Header().Set("Content-Type", "application/json")
		if err != nil {
			status := http.StatusInternalServerError
			if ie, ok := errors.AsType[*InputError](err); ok {
				status = ie.Status
			}
			s.m.errors.WithLabelValues(verb, strconv.Itoa(status)).Inc()
			if verb == VerbFilter {
				out = extenderv1.ExtenderFilterResult{Error: err.Error()}
			} else {
				out = map[string]string{"error": err.Error()}
			}
			w.WriteHeader(status)
		}
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(out); err != nil {
			s.cfg.Logger.Debug("serve: writing answer", "verb", verb, "err", err)
		}
		s.m.latency.WithLabelValues(verb).Observe(time.Since(start).Seconds())
	}
}

// request is one decision's view: the pod and the candidate nodes.
type request struct {
	names   []string
	nodes   []*node
	items   []corev1.Node // the request's Node objects (nil for NodeNames)
	byName  bool
	pod     *pod
	cluster *sim.Cluster
	simPod  *sim.Pod
}

// parse decodes ExtenderArgs and builds the decision's cluster view.
func (s *Server) parse(w http.ResponseWriter, r *http.Request) (*request, error) {
	var args extenderv1.ExtenderArgs
	if err := s.decode(w, r, &args); err != nil {
		return nil, err
	}
	now := s.cfg.Now()
	p, err := convertPod(args.Pod, now)
	if err != nil {
		return nil, err
	}
	q := &request{pod: p}
	switch {
	case args.Nodes != nil:
		q.items = args.Nodes.Items
		q.nodes = make([]*node, len(q.items))
		q.names = make([]string, len(q.items))
		for i := range q.items {
			n, err := convertNode(&q.items[i], fmt.Sprintf("nodes.items[%d]", i))
			if err != nil {
				return nil, err
			}
			q.nodes[i], q.names[i] = n, n.spec.Name
		}
		s.remember(q.nodes)
	case args.NodeNames != nil:
		q.byName = true
		q.names = *args.NodeNames
		q.nodes = make([]*node, len(q.names))
		var missing []string
		for i, name := range q.names {
			q.nodes[i] = s.lookup(name)
			if q.nodes[i] == nil {
				missing = append(missing, name)
			}
		}
		if len(missing) > 0 {
			shown := missing[:min(len(missing), 10)]
			return nil, badf("nodeNames", "%d of %d nodes not in the node cache (%s%s): the service learns nodes from the API server (with API access), from requests that carry Nodes and from POST /nodes",
				len(missing), len(q.names), strings.Join(shown, ", "), map[bool]string{true: ", ...", false: ""}[len(missing) > len(shown)])
		}
	default:
		return nil, badf("nodes", "missing: neither Nodes nor NodeNames")
	}
	if err := checkUniqueNames(q.names, q.byName); err != nil {
		return nil, err
	}
	q.build(s.view(), s.services, now)
	s.services.note(q.pod.key, &q.pod.spec)
	return q, nil
}

// remember puts nodes into the node cache (up to MaxNodes names).
func (s *Server) remember(nodes []*node) {
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	for _, n := range nodes {
		if _, ok := s.cache[n.spec.Name]; ok || len(s.cache) < s.cfg.MaxNodes {
			s.cache[n.spec.Name] = n
		}
	}
}

// nodes is POST /nodes: a v1.NodeList into the node cache, for
// nodeCacheCapable mode.
func (s *Server) nodes(w http.ResponseWriter, r *http.Request) (any, error) {
	var list corev1.NodeList
	if err := s.decode(w, r, &list); err != nil {
		return nil, err
	}
	conv := make([]*node, len(list.Items))
	for i := range list.Items {
		n, err := convertNode(&list.Items[i], fmt.Sprintf("items[%d]", i))
		if err != nil {
			return nil, err
		}
		conv[i] = n
	}
	s.remember(conv)
	s.cacheMu.RLock()
	defer s.cacheMu.RUnlock()
	return map[string]int{"cached": len(s.cache)}, nil
}

// filter is POST /filter: the nodes that pass the hard filters (fit,
// taints, node affinity) on the service's view.
func (s *Server) filter(w http.ResponseWriter, r *http.Request) (any, error) {
	q, err := s.parse(w, r)
	if err != nil {
		return nil, err
	}
	res := extenderv1.ExtenderFilterResult{FailedNodes: extenderv1.FailedNodesMap{}}
	var names []string
	var items []corev1.Node
	nodes, spec := q.cluster.Nodes(), &q.pod.spec
	for i := range nodes {
		nd := &nodes[i]
		var why string
		switch {
		case !sim.ToleratesTaints(nd, spec):
			why = "node(s) had untolerated taint"
		case !sim.MatchesAffinity(nd, spec):
			why = "node(s) didn't match Pod's node affinity/selector"
		case nd.Pods >= nd.MaxPods:
			why = fmt.Sprintf("Too many pods (%d of %d)", nd.Pods, nd.MaxPods)
		case !sim.FitsResources(nd, spec):
			why = fmt.Sprintf("Insufficient resources: requests %v, free %v", spec.Requests, nd.Free())
		}
		if why != "" {
			res.FailedNodes[q.names[i]] = why
			continue
		}
		if q.byName {
			names = append(names, q.names[i])
		} else {
			items = append(items, q.items[i])
		}
	}
	if q.byName {
		if names == nil {
			names = []string{}
		}
		res.NodeNames = &names
	} else {
		res.Nodes = &corev1.NodeList{Items: items}
	}
	return res, nil
}

// prioritize is POST /prioritize: the policy's scores, or kube-default's
// after a fallback or in shadow mode.
func (s *Server) prioritize(w http.ResponseWriter, r *http.Request) (any, error) {
	q, err := s.parse(w, r)
	if err != nil {
		return nil, err
	}
	scores, _ := s.decide(q)
	out := make(extenderv1.HostPriorityList, len(scores))
	best := -1
	for i, sc := range scores {
		out[i] = extenderv1.HostPriority{Host: q.names[i], Score: sc}
		if sc > 0 && (best < 0 || sc > scores[best]) {
			best = i
		}
	}
	if best >= 0 {
		s.ledger.Assume(q.pod.key, q.names[best], q.pod.spec.Requests, q.pod.spec.Group, s.cfg.Now())
	}
	return out, nil
}

// decide returns the scores of q's nodes and their source (Source*).
func (s *Server) decide(q *request) ([]int64, string) {
	nodes := q.cluster.Nodes()
	n := len(nodes)
	if n == 0 {
		return []int64{}, SourcePolicy
	}
	probs, reason, err := s.runPolicy(q.cluster, q.simPod)
	top := -1
	if err == nil {
		top = argmax(probs)
	}
	if s.cfg.Shadow {
		scores, total := s.defaultScores(q)
		outcome := "error"
		switch {
		case err != nil:
			s.m.fallbacks.WithLabelValues(reason).Inc()
		case top == n: // Pending agrees when no node is feasible
			outcome = map[bool]string{true: "agree", false: "disagree"}[slices.Max(total) < 0]
		default:
			outcome = map[bool]string{true: "agree", false: "disagree"}[total[top] >= 0 && total[top] == slices.Max(total)]
		}
		s.m.shadowOutcome(outcome)
		s.m.decisions.WithLabelValues(SourceShadow).Inc()
		choice := "pending"
		if top >= 0 && top < n {
			choice = q.names[top]
		}
		s.cfg.Logger.Info("shadow", "pod", q.pod.spec.Name, "policy", choice, "outcome", outcome, "err", err)
		return scores, SourceShadow
	}
	if err == nil && top < n && !sim.Feasible(&nodes[top], q.simPod.Spec) {
		reason, err = ReasonInfeasible, fmt.Errorf("the policy's top node %s fails the hard filters", q.names[top])
	}
	if err != nil {
		s.m.fallbacks.WithLabelValues(reason).Inc()
		s.m.decisions.WithLabelValues(SourceFallback).Inc()
		s.cfg.Logger.Debug("fallback", "pod", q.pod.spec.Name, "reason", reason, "err", err)
		scores, _ := s.defaultScores(q)
		return scores, SourceFallback
	}
	scores := make([]int64, n)
	if top == n {
		s.m.decisions.WithLabelValues(SourcePending).Inc()
		return scores, SourcePending
	}
	ScoresFromProbs(probs, scores)
	s.m.decisions.WithLabelValues(SourcePolicy).Inc()
	return scores, SourcePolicy
}

// ScoresFromProbs writes the extender scores of N nodes into dst from the
// N+1 probabilities of the nodes and Pending: each node scores
// round(MaxExtenderPriority * p_i / p_top), p_top the most probable node's,
// so the policy's choice scores 10 and a node it finds half as likely 5.
// When Pending is at least as probable as every node (or no node has any
// probability), every node scores 0: the extender cannot veto in
// prioritize, so it adds nothing and kube-scheduler's own scores decide.
func ScoresFromProbs(probs []float64, dst []int64) {
	n := len(dst)
	top := 0.0
	for _, p := range probs[:n] {
		top = max(top, p)
	}
	if top <= 0 || probs[n] >= top {
		clear(dst)
		return
	}
	for i, p := range probs[:n] {
		dst[i] = int64(math.Round(float64(extenderv1.MaxExtenderPriority) * p / top))
	}
}

// defaultScores returns kube-default's scores of q's nodes mapped to
// 0..MaxExtenderPriority (total * 10 / the best total, integer division;
// infeasible nodes 0), and the raw weighted totals (-1 for infeasible).
func (s *Server) defaultScores(q *request) ([]int64, []int64) {
	f := s.kd.Get().(*sched.Framework)
	total := f.Scores(q.cluster, q.simPod, nil)
	s.kd.Put(f)
	return DefaultToExtender(total), total
}

// DefaultToExtender maps kube-default's weighted totals (sched.Framework.Scores:
// -1 for an infeasible node) to extender scores: total * MaxExtenderPriority
// / best total, integer division; infeasible nodes and all-zero totals 0.
func DefaultToExtender(total []int64) []int64 {
	out := make([]int64, len(total))
	best := int64(0)
	for _, t := range total {
		best = max(best, t)
	}
	if best <= 0 {
		return out
	}
	for i, t := range total {
		if t > 0 {
			out[i] = t * extenderv1.MaxExtenderPriority / best
		}
	}
	return out
}

// argmax is the first index of the largest value (the greedy choice; NaN
// never wins).
func argmax(v []float64) int {
	best := len(v) - 1 // Pending
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	for i := range best {
		if v[i] == v[best] {
			return i
		}
	}
	return best
}

var errBudget = errors.New("the policy exceeded the latency budget")

// runPolicy asks a pooled policy instance for probabilities within the
// latency budget. On timeout the instance finishes in its goroutine and
// goes back to the pool then; its answer is dropped.
func (s *Server) runPolicy(c *sim.Cluster, p *sim.Pod) ([]float64, string, error) {
	timer := time.NewTimer(s.cfg.Budget)
	defer timer.Stop()
	var pol Policy
	select {
	case pol = <-s.pool:
	case <-timer.C:
		return nil, ReasonBudget, fmt.Errorf("%w (no free policy instance)", errBudget)
	}
	type result struct {
		probs []float64
		err   error
	}
	done := make(chan result, 1)
	dst := make([]float64, c.Len()+1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- result{err: fmt.Errorf("policy panicked: %v", r)}
			}
			s.pool <- pol
		}()
		probs, err := pol.Probs(c, p, dst)
		done <- result{probs, err}
	}()
	select {
	case res := <-done:
		if res.err != nil {
			return nil, ReasonError, res.err
		}
		if len(res.probs) != c.Len()+1 {
			return nil, ReasonError, fmt.Errorf("policy returned %d probabilities for %d nodes and Pending", len(res.probs), c.Len())
		}
		for _, v := range res.probs {
			if math.IsNaN(v) || v < 0 {
				return nil, ReasonError, fmt.Errorf("policy returned probability %v", v)
			}
		}
		return res.probs, "", nil
	case <-timer.C:
		return nil, ReasonBudget, errBudget
	}
}
