package serve

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubesim/kubesim/sim"
)

// fallbackCluster: node a is tainted NoSchedule (the pod does not tolerate
// it), b and c fit. kube-default prefers the emptier, larger c.
func fallbackArgs() any {
	return args(mkPod("web").container("500m", "512Mi", "1", "1Gi").obj(),
		mkNode("a", "8", "32Gi").taint("dedicated", "gpu", corev1.TaintEffectNoSchedule).obj(),
		mkNode("b", "4", "16Gi").annotate(AnnotationRequestedCPU, "3").annotate(AnnotationRequestedMemory, "12Gi").annotate(AnnotationPods, "9").obj(),
		mkNode("c", "8", "32Gi").obj())
}

// TestFallback injects a policy for each fallback reason and wants
// kube-default's scores (c best, a infeasible at 0) and the reason counted.
func TestFallback(t *testing.T) {
	slow := func() (Policy, error) {
		return fakePolicy{func(c *sim.Cluster, dst []float64) ([]float64, error) {
			time.Sleep(200 * time.Millisecond)
			return dst, nil
		}}, nil
	}
	failing := func() (Policy, error) {
		return fakePolicy{func(*sim.Cluster, []float64) ([]float64, error) { return nil, errors.New("boom") }}, nil
	}
	panicking := func() (Policy, error) {
		return fakePolicy{func(*sim.Cluster, []float64) ([]float64, error) { panic("bad weights") }}, nil
	}
	for _, tc := range []struct {
		name   string
		mk     NewPolicy
		reason string
	}{
		{"top node tainted", prefer(0), ReasonInfeasible},
		{"policy errors", failing, ReasonError},
		{"policy panics", panicking, ReasonError},
		{"policy too slow", slow, ReasonBudget},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestServer(t, Config{Budget: 20 * time.Millisecond}, tc.mk)
			code, body := post(t, s, "/prioritize", fallbackArgs())
			if code != http.StatusOK {
				t.Fatalf("status %d: %s", code, body)
			}
			got := scoresOf(t, body)
			// kube-default: a infeasible (0); c, emptier and larger, is
			// the best node and scores 10; b, 75% CPU requested, less.
			if got["a"] != 0 || got["c"] != 10 || got["b"] >= got["c"] {
				t.Errorf("scores %v; want kube-default's: a 0, c 10, b below c", got)
			}
			m := metricsText(t, s)
			want := `kubesim_serve_fallbacks_total{reason="` + tc.reason + `"} 1`
			if !strings.Contains(m, want) {
				t.Errorf("metrics lack %q:\n%s", want, grep(m, "fallbacks"))
			}
			if !strings.Contains(m, `kubesim_serve_decisions_total{source="fallback"} 1`) {
				t.Errorf("fallback decision not counted:\n%s", grep(m, "decisions"))
			}
		})
	}
}

// TestPolicyScores: a policy that prefers a feasible node is followed
// (no fallback), and Pending gives every node 0.
func TestPolicyScores(t *testing.T) {
	s := newTestServer(t, Config{}, prefer(1))
	_, body := post(t, s, "/prioritize", fallbackArgs())
	if got := scoresOf(t, body); got["b"] != 10 || got["a"] != 0 || got["c"] != 0 {
		t.Errorf("scores %v; want b 10, others 0", got)
	}
	s = newTestServer(t, Config{}, prefer(99))
	_, body = post(t, s, "/prioritize", fallbackArgs())
	if got := scoresOf(t, body); got["a"] != 0 || got["b"] != 0 || got["c"] != 0 {
		t.Errorf("Pending: scores %v; want all 0", got)
	}
	if m := metricsText(t, s); !strings.Contains(m, `kubesim_serve_decisions_total{source="pending"} 1`) {
		t.Errorf("Pending not counted:\n%s", grep(m, "decisions"))
	}
}

func TestScoresFromProbs(t *testing.T) {
	for _, tc := range []struct {
		name  string
		probs []float64
		want  []int64
	}{
		// 10 * p / 0.5: 0.5 -> 10, 0.25 -> 5, 0.06 -> 1.2 -> 1, 0 -> 0
		{"proportional", []float64{0.25, 0.5, 0.06, 0, 0.19}, []int64{5, 10, 1, 0}},
		// Pending (0.6) above the best node: everything 0
		{"pending", []float64{0.3, 0.1, 0.6}, []int64{0, 0}},
		// a tie between Pending and the best node goes to Pending
		{"tie with pending", []float64{0.5, 0.5}, []int64{0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := make([]int64, len(tc.want))
			ScoresFromProbs(tc.probs, got)
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("ScoresFromProbs(%v) = %v; want %v", tc.probs, got, tc.want)
				}
			}
		})
	}
}

// TestShadow: in shadow mode the answer is kube-default's even when the
// policy would choose otherwise, and agreement is counted.
func TestShadow(t *testing.T) {
	s := newTestServer(t, Config{Shadow: true}, prefer(1))
	_, body := post(t, s, "/prioritize", fallbackArgs())
	if got := scoresOf(t, body); got["c"] != 10 || got["a"] != 0 {
		t.Errorf("shadow scores %v; want kube-default's (c 10)", got)
	}
	s2 := newTestServer(t, Config{Shadow: true}, prefer(2))
	post(t, s2, "/prioritize", fallbackArgs())
	m, m2 := metricsText(t, s), metricsText(t, s2)
	for _, c := range []struct{ text, want string }{
		{m, `kubesim_serve_shadow_decisions_total{outcome="disagree"} 1`},
		{m, `kubesim_serve_shadow_agreement_ratio 0`},
		{m2, `kubesim_serve_shadow_decisions_total{outcome="agree"} 1`},
		{m2, `kubesim_serve_shadow_agreement_ratio 1`},
	} {
		if !strings.Contains(c.text, c.want) {
			t.Errorf("metrics lack %q:\n%s", c.want, grep(c.text, "shadow"))
		}
	}
}

func grep(text, word string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, word) && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
