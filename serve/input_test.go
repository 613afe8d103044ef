package serve

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
)

// TestBadInput: every malformed request gets a 4xx whose message names the
// field at fault, on both verbs, and the server keeps answering.
func TestBadInput(t *testing.T) {
	good := func() extenderv1.ExtenderArgs {
		return args(mkPod("p").container("1", "1Gi", "", "").obj(), mkNode("n1", "4", "8Gi").obj())
	}
	with := func(f func(a *extenderv1.ExtenderArgs)) extenderv1.ExtenderArgs {
		a := good()
		f(&a)
		return a
	}
	big := bytes.Repeat([]byte(" "), 2048)
	for _, tc := range []struct {
		name   string
		body   any
		status int
		field  string
	}{
		{"malformed JSON", []byte(`{"Pod": {`), 400, "malformed JSON"},
		{"empty body", []byte(``), 400, "body: empty"},
		{"trailing data", []byte(`{} {}`), 400, "after the JSON value"},
		{"wrong type", []byte(`{"Pod": 3}`), 400, "Pod"},
		{"missing pod", with(func(a *extenderv1.ExtenderArgs) { a.Pod = nil }), 400, "pod: missing"},
		{"missing nodes", with(func(a *extenderv1.ExtenderArgs) { a.Nodes = nil }), 400, "nodes: missing"},
		{"unknown node name", with(func(a *extenderv1.ExtenderArgs) { a.Nodes = nil; a.NodeNames = &[]string{"ghost"} }), 400, "nodeNames: 1 of 1 nodes not in the node cache (ghost)"},
		{"unknown resource", with(func(a *extenderv1.ExtenderArgs) {
			a.Pod.Spec.Containers[0].Resources.Requests["gpu"] = resource.MustParse("1")
		}), 400, `pod.spec.containers[0].resources.requests[gpu]: unknown resource name`},
		{"negative request", with(func(a *extenderv1.ExtenderArgs) {
			a.Pod.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("-1")
		}), 422, `pod.spec.containers[0].resources.requests[cpu]: negative`},
		{"absurd memory", with(func(a *extenderv1.ExtenderArgs) {
			a.Pod.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("5Ei")}
		}), 422, `pod.spec.containers[0].resources.limits[memory]: absurd quantity 5Ei`},
		{"absurd cpu sum", with(func(a *extenderv1.ExtenderArgs) {
			c := a.Pod.Spec.Containers[0]
			c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("900k")}
			a.Pod.Spec.Containers = []corev1.Container{c, c}
		}), 422, "pod.spec: requests"},
		{"node without allocatable cpu", with(func(a *extenderv1.ExtenderArgs) {
			delete(a.Nodes.Items[0].Status.Allocatable, corev1.ResourceCPU)
		}), 422, `nodes.items[0] (n1).status.allocatable[cpu]: missing or not positive`},
		{"node without name", with(func(a *extenderv1.ExtenderArgs) { a.Nodes.Items[0].Name = "" }), 400, "nodes.items[0].metadata.name: missing"},
		{"bad taint effect", with(func(a *extenderv1.ExtenderArgs) {
			a.Nodes.Items[0].Spec.Taints = []corev1.Taint{{Key: "k", Effect: "Sometimes"}}
		}), 400, "nodes.items[0] (n1).spec.taints[0].effect: unknown taint effect"},
		{"bad annotation", with(func(a *extenderv1.ExtenderArgs) {
			a.Nodes.Items[0].Annotations = map[string]string{AnnotationRequestedCPU: "lots"}
		}), 400, `metadata.annotations[kubesim.io/requested-cpu]: not a quantity`},
		{"unsupported operator", with(func(a *extenderv1.ExtenderArgs) {
			a.Pod.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "cores", Operator: corev1.NodeSelectorOpGt, Values: []string{"4"}}}}}}}}
		}), 422, "nodeSelectorTerms[0].matchExpressions[0].operator"},
		{"body too large", append(append([]byte(`{"Pod":`), big...), '}'), 413, "body: larger than the limit of 1024 bytes"},
	} {
		for _, verb := range []string{"filter", "prioritize"} {
			t.Run(tc.name+"/"+verb, func(t *testing.T) {
				s := newTestServer(t, Config{MaxBody: 1024}, prefer(0))
				code, body := post(t, s, "/"+verb, tc.body)
				if code != tc.status || !strings.Contains(string(body), tc.field) {
					t.Errorf("status %d, %s; want %d naming %q", code, body, tc.status, tc.field)
				}
				// the server still answers a good request
				if code, body := post(t, s, "/"+verb, good()); code != 200 {
					t.Errorf("after the bad request: status %d, %s", code, body)
				}
				if m := metricsText(t, s); !strings.Contains(m, `kubesim_serve_errors_total{code="`) {
					t.Errorf("error not counted:\n%s", grep(m, "errors"))
				}
			})
		}
	}
}

func TestMethodNotAllowed(t *testing.T) {
	s := newTestServer(t, Config{}, prefer(0))
	rec := newRecorder(s, http.MethodGet, "/prioritize")
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET /prioritize: status %d; want 405", rec.Code)
	}
	if rec := newRecorder(s, http.MethodGet, "/healthz"); rec.Code != 200 || rec.Body.String() != "ok\n" {
		t.Errorf("GET /healthz: %d %q", rec.Code, rec.Body.String())
	}
}

// TestNodeCache: NodeNames are answered from nodes seen in earlier requests
// or posted to /nodes, in nodeCacheCapable form (NodeNames in, NodeNames
// out).
func TestNodeCache(t *testing.T) {
	s := newTestServer(t, Config{}, prefer(0))
	pod := mkPod("p").container("1", "1Gi", "", "").obj()
	post(t, s, "/prioritize", args(pod, mkNode("n1", "4", "8Gi").obj()))
	if code, body := post(t, s, "/nodes", corev1.NodeList{Items: []corev1.Node{mkNode("n2", "4", "8Gi").taint("k", "v", corev1.TaintEffectNoSchedule).obj()}}); code != 200 || !strings.Contains(string(body), `"cached":2`) {
		t.Fatalf("POST /nodes: %d %s", code, body)
	}
	code, body := post(t, s, "/filter", extenderv1.ExtenderArgs{Pod: pod, NodeNames: &[]string{"n1", "n2"}})
	var res extenderv1.ExtenderFilterResult
	if err := json.Unmarshal(body, &res); err != nil || code != 200 {
		t.Fatalf("filter by name: %d %s %v", code, body, err)
	}
	if res.Nodes != nil || res.NodeNames == nil || len(*res.NodeNames) != 1 || (*res.NodeNames)[0] != "n1" || res.FailedNodes["n2"] == "" {
		t.Errorf("filter by name: %+v; want NodeNames [n1] and n2 failed", res)
	}
	code, body = post(t, s, "/filter", extenderv1.ExtenderArgs{Pod: pod, NodeNames: &[]string{"n1", "n3", "n4"}})
	if code != 400 || !strings.Contains(string(body), "2 of 3 nodes not in the node cache (n3, n4)") {
		t.Errorf("unknown names: %d %s", code, body)
	}
}

// TestLedger: without annotations a node's load is the pods the service
// placed there; a pod seen again moves; entries expire.
func TestLedger(t *testing.T) {
	s := newTestServer(t, Config{AssumeTTL: time.Minute}, prefer(0))
	nodes := []corev1.Node{mkNode("n1", "4", "8Gi").obj(), mkNode("n2", "4", "8Gi").obj()}
	for _, name := range []string{"p1", "p2", "p3"} {
		// 1.5 cores each: the policy picks n1 twice, then n1 is full
		post(t, s, "/prioritize", args(mkPod(name).container("1500m", "1Gi", "", "").obj(), nodes...))
	}
	_, body := post(t, s, "/filter", args(mkPod("p4").container("1500m", "1Gi", "", "").obj(), nodes...))
	var res extenderv1.ExtenderFilterResult
	if err := json.Unmarshal(body, &res); err != nil {
		t.Fatal(err)
	}
	// p1 and p2 (3 cores) on n1; p3 went to the fallback's choice n2
	if !strings.Contains(res.FailedNodes["n1"], "Insufficient") {
		t.Errorf("n1 after three 1.5-core pods: %+v; want insufficient", res.FailedNodes)
	}
	if s.Ledger().Len() != 3 {
		t.Errorf("ledger holds %d pods; want 3", s.Ledger().Len())
	}
	// the same pod again moves instead of counting twice
	post(t, s, "/prioritize", args(mkPod("p1").container("1500m", "1Gi", "", "").obj(), nodes...))
	if s.Ledger().Len() != 3 {
		t.Errorf("ledger holds %d pods after a repeat; want 3", s.Ledger().Len())
	}
	l := NewLedger(time.Minute, 2)
	for i, k := range []string{"a", "b", "c"} {
		l.Assume(k, "n", sim1(), "", clock.Add(time.Duration(i)*time.Second))
	}
	if l.Len() != 2 {
		t.Errorf("capacity 2: %d pods", l.Len())
	}
	l.Assume("d", "n", sim1(), "", clock.Add(2*time.Minute))
	if l.Len() != 1 {
		t.Errorf("after the TTL: %d pods; want 1", l.Len())
	}
}

func TestResolveCheckpoint(t *testing.T) {
	t.Chdir(t.TempDir())
	if _, err := ResolveCheckpoint(""); err == nil || !strings.Contains(err.Error(), DefaultCheckpoint) || !strings.Contains(err.Error(), "--checkpoint") {
		t.Errorf("no checkpoint: %v; want an error naming %s and --checkpoint", err, DefaultCheckpoint)
	}
	if _, err := ResolveCheckpoint("nope.ckpt"); err == nil || !strings.Contains(err.Error(), "nope.ckpt") {
		t.Errorf("missing explicit checkpoint: %v", err)
	}
}
