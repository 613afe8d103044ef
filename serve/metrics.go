package serve

import (
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Verbs, the label of the request metrics.
const (
	VerbFilter     = "filter"
	VerbPrioritize = "prioritize"
	VerbNodes      = "nodes"
)

// Fallback reasons, the label of kubesim_serve_fallbacks_total.
const (
	ReasonInfeasible = "infeasible" // the policy's top node fails the hard filters
	ReasonError      = "error"      // the policy returned an error or panicked
	ReasonBudget     = "budget"     // the policy did not answer within the latency budget
)

// Sources of a /prioritize answer, the label of kubesim_serve_decisions_total.
const (
	SourcePolicy   = "policy"   // the policy's probabilities
	SourcePending  = "pending"  // the policy chose Pending: every node 0
	SourceFallback = "fallback" // kube-default's scores after a fallback
	SourceShadow   = "shadow"   // kube-default's scores in shadow mode
)

// metrics are a Server's Prometheus collectors, on a registry of its own.
type metrics struct {
	reg       *prometheus.Registry
	requests  *prometheus.CounterVec
	errors    *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	fallbacks *prometheus.CounterVec
	decisions *prometheus.CounterVec
	shadow    *prometheus.CounterVec
	agreement prometheus.Gauge

	mu          sync.Mutex
	agree, seen float64
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kubesim_serve_requests_total", Help: "Extender requests by verb.",
		}, []string{"verb"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kubesim_serve_errors_total", Help: "Extender requests answered with an error status, by verb and status code.",
		}, []string{"verb", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "kubesim_serve_request_duration_seconds",
			Help:    "Time from reading a request to writing its answer, by verb.",
			Buckets: []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1},
		}, []string{"verb"}),
		fallbacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kubesim_serve_fallbacks_total", Help: "Answers that fell back to kube-default's scores, by reason (infeasible, error, budget).",
		}, []string{"reason"}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kubesim_serve_decisions_total", Help: "Prioritize answers by source (policy, pending, fallback, shadow).",
		}, []string{"source"}),
		shadow: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kubesim_serve_shadow_decisions_total", Help: "Shadow-mode comparisons of the policy's top choice with kube-default's best nodes, by outcome (agree, disagree, error).",
		}, []string{"outcome"}),
		agreement: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "kubesim_serve_shadow_agreement_ratio", Help: "Share of shadow-mode decisions where the policy's top choice is one of kube-default's best nodes (errors excluded).",
		}),
	}
	m.reg.MustRegister(m.requests, m.errors, m.latency, m.fallbacks, m.decisions, m.shadow, m.agreement)
	for _, v := range []string{VerbFilter, VerbPrioritize, VerbNodes} {
		m.requests.WithLabelValues(v)
		m.latency.WithLabelValues(v)
	}
	for _, r := range []string{ReasonInfeasible, ReasonError, ReasonBudget} {
		m.fallbacks.WithLabelValues(r)
	}
	for _, s := range []string{SourcePolicy, SourcePending, SourceFallback, SourceShadow} {
		m.decisions.WithLabelValues(s)
	}
	for _, o := range []string{"agree", "disagree", "error"} {
		m.shadow.WithLabelValues(o)
	}
	return m
}

// shadowOutcome counts one shadow-mode comparison.
func (m *metrics) shadowOutcome(outcome string) {
	m.shadow.WithLabelValues(outcome).Inc()
	if outcome == "error" {
		return
	}
	m.mu.Lock()
	m.seen++
	if outcome == "agree" {
		m.agree++
	}
	m.agreement.Set(m.agree / m.seen)
	m.mu.Unlock()
}

// watchView adds the gauge kubesim_serve_view{view}, 1 for the view that
// current returns and 0 for the other, and in's own gauges when it is set.
func (m *metrics) watchView(current func() view, in *Informer) error {
	for _, name := range []string{ViewInformer, ViewLedger} {
		g := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "kubesim_serve_view", Help: "1 for the view of the cluster that requests use now (informer: the API server's; ledger: the service's own estimate), else 0.",
			ConstLabels: prometheus.Labels{"view": name},
		}, func() float64 {
			if current().name() == name {
				return 1
			}
			return 0
		})
		if err := m.reg.Register(g); err != nil {
			return fmt.Errorf("serve: view metric: %w", err)
		}
	}
	if in != nil {
		return in.register(m.reg)
	}
	return nil
}
