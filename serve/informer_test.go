package serve

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubesim/kubesim/sim"
)

// bound returns pod b bound to node in phase.
func bound(b *podB, node string, phase corev1.PodPhase) *corev1.Pod {
	p := b.obj()
	p.Spec.NodeName = node
	p.Status.Phase = phase
	return p
}

// nodePtr is b's node as a pointer, for the fake clientset.
func nodePtr(b *nodeB) *corev1.Node {
	n := b.obj()
	return &n
}

// waitFor polls cond until it holds, failing the test after a minute (a
// bound on a broken test, not a timing assertion).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: gave up after a minute", what)
		}
	}
}

// startInformer runs an informer view over client until the test ends and
// waits for it to sync.
func startInformer(t *testing.T, client *fake.Clientset, cfg InformerConfig) *Informer {
	t.Helper()
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	in := NewInformer(client, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { in.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	waitFor(t, "the informer to sync", in.Synced)
	return in
}

// TestInformerLoads: the view counts the pods bound to each node and not
// finished, with requests as kube-scheduler counts them, and follows binds,
// deletions and completions.
func TestInformerLoads(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset(
		nodePtr(mkNode("n1", "4", "8Gi")), nodePtr(mkNode("n2", "4", "8Gi")),
		bound(mkPod("a").container("1", "1Gi", "", ""), "n1", corev1.PodRunning),
		// init container 2 cores against 500m + 250m: 2 cores; memory 512Mi + 256Mi
		bound(mkPod("b").container("500m", "512Mi", "", "").container("250m", "256Mi", "", "").init("2", "128Mi").owner("ReplicaSet", "web"), "n1", corev1.PodPending),
		bound(mkPod("done").container("3", "1Gi", "", ""), "n2", corev1.PodSucceeded),
		mkPod("queued").container("1", "1Gi", "", "").obj(),
	)
	in := startInformer(t, client, InformerConfig{})
	tests := []struct {
		name   string
		change func() error
		want   map[string]NodeLoad
	}{
		{"listed", func() error { return nil }, map[string]NodeLoad{
			// a (1 core, 1024 MiB) + b (2 cores, 768 MiB); the finished pod and the unbound one not counted
			"n1": {Requested: sim.Resources{CPU: 3000, Mem: 1792}, Pods: 2},
		}},
		{"bound", func() error {
			_, err := client.CoreV1().Pods("default").Update(ctx, bound(mkPod("queued").container("1", "1Gi", "", ""), "n2", corev1.PodRunning), metav1.UpdateOptions{})
			return err
		}, map[string]NodeLoad{
			"n1": {Requested: sim.Resources{CPU: 3000, Mem: 1792}, Pods: 2},
			"n2": {Requested: sim.Resources{CPU: 1000, Mem: 1024}, Pods: 1},
		}},
		{"deleted", func() error {
			return client.CoreV1().Pods("default").Delete(ctx, "a", metav1.DeleteOptions{})
		}, map[string]NodeLoad{
			"n1": {Requested: sim.Resources{CPU: 2000, Mem: 768}, Pods: 1},
			"n2": {Requested: sim.Resources{CPU: 1000, Mem: 1024}, Pods: 1},
		}},
		{"finished", func() error {
			_, err := client.CoreV1().Pods("default").Update(ctx, bound(mkPod("queued").container("1", "1Gi", "", ""), "n2", corev1.PodFailed), metav1.UpdateOptions{})
			return err
		}, map[string]NodeLoad{
			"n1": {Requested: sim.Resources{CPU: 2000, Mem: 768}, Pods: 1},
		}},
	}
	for _, tt := range tests {
		if err := tt.change(); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		waitFor(t, tt.name, func() bool { return equalLoads(in.Loads(), tt.want) })
	}
	if n := in.node("n2"); n == nil || n.spec.Allocatable != (sim.Resources{CPU: 4000, Mem: 8192}) {
		t.Errorf("node n2 in the view: %+v", n)
	}
}

func equalLoads(a, b map[string]NodeLoad) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestInformerServes: with a current informer view, requests that name
// nodes only are answered from it and node load is the API server's; when
// the API server stops answering the service falls back to the ledger,
// says so in /metrics, and still answers.
func TestInformerServes(t *testing.T) {
	client := fake.NewClientset(
		nodePtr(mkNode("n1", "4", "8Gi")), nodePtr(mkNode("n2", "4", "8Gi")),
		// n1 has 3.5 cores requested: a 1-core pod no longer fits
		bound(mkPod("big").container("3500m", "1Gi", "", ""), "n1", corev1.PodRunning),
	)
	in := startInformer(t, client, InformerConfig{})
	s := newTestServer(t, Config{Informer: in}, prefer(1))
	m := metricsText(t, s)
	for _, want := range []string{`kubesim_serve_view{view="informer"} 1`, `kubesim_serve_view{view="ledger"} 0`, "kubesim_serve_informer_synced 1", "kubesim_serve_api_reachable 1", "kubesim_serve_informer_age_seconds"} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	pod := mkPod("p").container("1", "1Gi", "", "").obj()
	filter := func() extenderv1.ExtenderFilterResult {
		t.Helper()
		code, body := post(t, s, "/filter", extenderv1.ExtenderArgs{Pod: pod, NodeNames: &[]string{"n1", "n2"}})
		var res extenderv1.ExtenderFilterResult
		if err := json.Unmarshal(body, &res); err != nil || code != 200 {
			t.Fatalf("filter by name: %d %s %v", code, body, err)
		}
		return res
	}
	if res := filter(); res.NodeNames == nil || strings.Join(*res.NodeNames, ",") != "n2" || !strings.Contains(res.FailedNodes["n1"], "Insufficient") {
		t.Errorf("filter with the informer view: %+v; want n2 only, n1 insufficient", res)
	}
	code, body := post(t, s, "/prioritize", extenderv1.ExtenderArgs{Pod: pod, NodeNames: &[]string{"n1", "n2"}})
	if sc := scoresOf(t, body); code != 200 || sc["n2"] != 10 {
		t.Errorf("prioritize by name: %d %s; want n2 at 10", code, body)
	}

	in.probed(errors.New("connection refused"))
	m = metricsText(t, s)
	for _, want := range []string{`kubesim_serve_view{view="informer"} 0`, `kubesim_serve_view{view="ledger"} 1`, "kubesim_serve_api_reachable 0"} {
		if !strings.Contains(m, want) {
			t.Errorf("after the API server went away, /metrics lacks %q", want)
		}
	}
	// the ledger knows only p, assumed on n2: n1 looks empty again, and
	// the nodes themselves still come from the informer's last copy
	if res := filter(); res.NodeNames == nil || strings.Join(*res.NodeNames, ",") != "n1,n2" {
		t.Errorf("filter on the ledger view: %+v; want n1 and n2", res)
	}
	in.probed(nil)
	if !strings.Contains(metricsText(t, s), `kubesim_serve_view{view="informer"} 1`) {
		t.Errorf("after a good probe the informer view is not back")
	}
}

// TestInformerStale: a view older than StaleAfter is not current.
func TestInformerStale(t *testing.T) {
	var later atomic.Int64 // the clock's advance, read by the informer's goroutines
	now := func() time.Time { return clock.Add(time.Duration(later.Load())) }
	client := fake.NewClientset(nodePtr(mkNode("n1", "4", "8Gi")))
	in := startInformer(t, client, InformerConfig{Now: now, StaleAfter: time.Minute})
	if !in.Current() {
		t.Fatalf("a fresh synced view is not current")
	}
	later.Store(int64(2 * time.Minute)) // no event, no probe since
	if in.Current() || in.Age() != 2*time.Minute {
		t.Errorf("after two quiet minutes: current %v, age %v; want false, 2m", in.Current(), in.Age())
	}
}
