package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubesim/kubesim/sim"
)

// clusterNodes returns n real node objects: three zones, three machine
// sizes, every seventh node tainted for GPUs, every fifth with its load in
// annotations.
func clusterNodes(n int) []corev1.Node {
	sizes := [][2]string{{"8", "32Gi"}, {"16", "64Gi"}, {"32", "128Gi"}}
	nodes := make([]corev1.Node, n)
	for i := range nodes {
		sz := sizes[i%3]
		b := mkNode(fmt.Sprintf("node-%04d", i), sz[0], sz[1]).zone(fmt.Sprintf("zone-%c", 'a'+i%3))
		if i%7 == 6 {
			b.taint("nvidia.com/gpu", "present", corev1.TaintEffectNoSchedule)
		}
		if i%5 == 0 {
			b.annotate(AnnotationRequestedCPU, fmt.Sprintf("%dm", 1000*(i%4))).annotate(AnnotationRequestedMemory, fmt.Sprintf("%dGi", 2*(i%4))).annotate(AnnotationPods, fmt.Sprint(i%4))
		}
		nodes[i] = b.obj()
	}
	return nodes
}

// requestBody is a /prioritize request for pod k of a ReplicaSet on the
// nodes, encoded.
func requestBody(tb testing.TB, k int, nodes []corev1.Node) []byte {
	p := mkPod(fmt.Sprintf("web-%d", k)).owner("ReplicaSet", "web").container("250m", "512Mi", "500m", "1Gi").obj()
	data, err := json.Marshal(args(p, nodes...))
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// percentile returns the q-quantile of sorted durations (nearest rank).
func percentile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[min(len(d)-1, int(q*float64(len(d))))]
}

// TestLoad sends 1,000 /prioritize requests for 100 nodes over 8
// connections on loopback to a server with the shipped policy, and wants
// every one answered with 200 and 100 scores. It logs p50 and p99 (no
// timing assertion) and checks that no goroutine is left per request.
func TestLoad(t *testing.T) {
	const requests, conns, n = 1000, 8, 100
	s := newTestServer(t, Config{Workers: runtime.GOMAXPROCS(0)}, shipped(t))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln, 5*time.Second) }()
	url := "http://" + ln.Addr().String() + "/prioritize"
	nodes := clusterNodes(n)
	bodies := make([][]byte, 16)
	for i := range bodies {
		bodies[i] = requestBody(t, i, nodes)
	}
	before := runtime.NumGoroutine()

	lat := make([]time.Duration, requests)
	var errs []string
	var mu sync.Mutex
	var wg sync.WaitGroup
	for c := range conns {
		client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1}}
		wg.Go(func() {
			defer client.CloseIdleConnections()
			for i := c; i < requests; i += conns {
				start := time.Now()
				resp, err := client.Post(url, "application/json", bytes.NewReader(bodies[i%len(bodies)]))
				var body []byte
				if err == nil {
					body, err = io.ReadAll(resp.Body)
					resp.Body.Close()
				}
				lat[i] = time.Since(start)
				var bad string
				switch {
				case err != nil:
					bad = err.Error()
				case resp.StatusCode != 200:
					bad = fmt.Sprintf("status %d: %s", resp.StatusCode, body)
				case len(scoresOf(t, body)) != n:
					bad = fmt.Sprintf("%d scores; want %d", len(scoresOf(t, body)), n)
				}
				if bad != "" {
					mu.Lock()
					errs = append(errs, bad)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d of %d requests failed; first: %s", len(errs), requests, errs[0])
	}
	slices.Sort(lat)
	t.Logf("%d requests, %d nodes, %d connections, GOMAXPROCS %d: p50 %v, p99 %v, max %v",
		requests, n, conns, runtime.GOMAXPROCS(0), percentile(lat, 0.50), percentile(lat, 0.99), lat[len(lat)-1])
	t.Logf("decisions: %s", strings.ReplaceAll(grep(metricsText(t, s), "decisions_total"), "\n", "; "))

	cancel()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	// every connection is closed and every handler has returned; allow the
	// runtime a moment to retire their goroutines.
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > before {
		t.Errorf("%d goroutines after the load; %d before: a leak per request", g, before)
	}
}

// TestGracefulShutdown: a request in flight when the context is cancelled
// (SIGTERM in kubesim serve) is answered before Serve returns.
func TestGracefulShutdown(t *testing.T) {
	started := make(chan struct{})
	slow := func() (Policy, error) {
		return fakePolicy{func(c *sim.Cluster, dst []float64) ([]float64, error) {
			close(started)
			time.Sleep(100 * time.Millisecond)
			clear(dst)
			dst[0] = 1
			return dst, nil
		}}, nil
	}
	s := newTestServer(t, Config{Workers: 1, Budget: time.Second}, slow)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln, 5*time.Second) }()
	got := make(chan int, 1)
	go func() {
		resp, err := http.Post("http://"+ln.Addr().String()+"/prioritize", "application/json", bytes.NewReader(requestBody(t, 0, clusterNodes(3))))
		if err != nil {
			got <- -1
			return
		}
		resp.Body.Close()
		got <- resp.StatusCode
	}()
	<-started
	cancel()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-got:
		if code != 200 {
			t.Errorf("in-flight request: status %d; want 200", code)
		}
	case <-time.After(2 * time.Second):
		t.Error("in-flight request not answered")
	}
}
