package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubesim/kubesim/serve"
	"github.com/kubesim/kubesim/sim"
)

// syncBuffer is a log sink that the test reads while the service writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// service is one run of kubesim serve: the same code as the command
// (serve.ClientConfig, serve.InformerFor, serve.New, Serve) on a fixed
// loopback address, so that kube-scheduler finds it again after a restart.
type service struct {
	srv  *serve.Server
	in   *serve.Informer
	logs *syncBuffer
	stop func()
}

func startService(t *testing.T, addr, kubeconfig string, mk serve.NewPolicy, shadow bool) *service {
	t.Helper()
	rc, err := serve.ClientConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	in, err := serve.InformerFor(rc, serve.InformerConfig{ProbeEvery: 500 * time.Millisecond, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := serve.New(serve.Config{Informer: in, Shadow: shadow, Logger: logger, Budget: time.Second}, mk)
	if err != nil {
		t.Fatal(err)
	}
	var ln net.Listener
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("listening on %s: %v", addr, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); in.Run(ctx) }()
	go func() {
		defer wg.Done()
		if err := srv.Serve(ctx, ln, 5*time.Second); err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	var once sync.Once
	s := &service{srv: srv, in: in, logs: logs, stop: func() { once.Do(func() { cancel(); wg.Wait() }) }}
	t.Cleanup(s.stop)
	return s
}

// metric returns the value of the sample named name (with its labels, as
// in the text format) in /metrics, or -1.
func (s *service) metric(t *testing.T, name string) float64 {
	t.Helper()
	rec := &recorder{header: http.Header{}}
	req, _ := http.NewRequest(http.MethodGet, "/metrics", nil)
	s.srv.ServeHTTP(rec, req)
	for _, line := range strings.Split(rec.body.String(), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			var f float64
			if _, err := fmt.Sscan(v, &f); err == nil {
				return f
			}
		}
	}
	return -1
}

// recorder is a minimal http.ResponseWriter.
type recorder struct {
	header http.Header
	body   bytes.Buffer
	code   int
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(p []byte) (int, error) { return r.body.Write(p) }
func (r *recorder) WriteHeader(code int)        { r.code = code }

// waitFor polls cond every 100 ms until it holds or limit passes (a bound
// on a broken run, not a timing assertion), and says what it waited for.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	start := time.Now()
	for {
		ok, state := cond()
		if ok {
			t.Logf("%s: after %v", what, time.Since(start).Round(time.Millisecond))
			return
		}
		if time.Since(start) > limit {
			t.Fatalf("%s: not after %v: %s", what, limit, state)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// The cluster: nodes of 4 cores and 8 GiB in two zones, and pods of a few
// sizes that together use about 70% of the CPU (so every pod fits).
// boundLimit bounds the wait for pods to be bound (a broken run, not a
// timing assertion).
const boundLimit = 5 * time.Minute

const (
	nodeCount = 20
	podCount  = 240
)

func mkNode(i int) *corev1.Node {
	rl := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110")}
	name := fmt.Sprintf("node-%02d", i)
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name, sim.LabelZone: fmt.Sprintf("zone-%d", i%2)}},
		Status: corev1.NodeStatus{
			Capacity: rl, Allocatable: rl,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now()}},
		},
	}
}

// mkPod returns pod i: 100m-400m and 128-512 MiB by i, so 240 pods ask for
// 240 * 250m = 60 of the 80 cores.
func mkPod(prefix string, i int, cpu string) *corev1.Pod {
	if cpu == "" {
		cpu = fmt.Sprintf("%dm", 100+100*(i%4))
	}
	mem := fmt.Sprintf("%dMi", 128*(1+i%4))
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%03d", prefix, i), Namespace: "default"},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)},
			}}},
			AutomountServiceAccountToken: new(false),
		},
	}
}

// apiLoads sums, per node, the requests of the pods that the API server
// says are bound there and not finished, as the service should.
func apiLoads(ctx context.Context, client kubernetes.Interface) (map[string]serve.NodeLoad, error) {
	pods, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := map[string]serve.NodeLoad{}
	for _, p := range pods.Items {
		if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		var r sim.Resources
		for _, c := range p.Spec.Containers {
			r.CPU += c.Resources.Requests.Cpu().MilliValue()
			r.Mem += (c.Resources.Requests.Memory().Value() + 1<<20 - 1) >> 20
		}
		l := out[p.Spec.NodeName]
		l.Requested = l.Requested.Add(r)
		l.Pods++
		out[p.Spec.NodeName] = l
	}
	return out, nil
}

// viewMatches reports whether the service's view equals the API server's.
func viewMatches(ctx context.Context, client kubernetes.Interface, s *service) (bool, string) {
	want, err := apiLoads(ctx, client)
	if err != nil {
		return false, err.Error()
	}
	got := s.in.Loads()
	if maps.Equal(got, want) {
		return true, ""
	}
	var diff []string
	for _, n := range slices.Sorted(maps.Keys(want)) {
		if got[n] != want[n] {
			diff = append(diff, fmt.Sprintf("%s: service %+v, API server %+v", n, got[n], want[n]))
		}
	}
	for n := range got {
		if _, ok := want[n]; !ok {
			diff = append(diff, fmt.Sprintf("%s: service %+v, API server none", n, got[n]))
		}
	}
	return false, strings.Join(diff, "; ")
}

// kubelet marks every bound pending pod Running, as a kubelet would once
// its containers started, and returns how many pods are bound.
func kubelet(ctx context.Context, client kubernetes.Interface, prefix string) (int, error) {
	pods, err := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	n := 0
	for i := range pods.Items {
		p := &pods.Items[i]
		if !strings.HasPrefix(p.Name, prefix) || p.Spec.NodeName == "" {
			continue
		}
		n++
		if p.Status.Phase != corev1.PodPending {
			continue
		}
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue})
		if _, err := client.CoreV1().Pods("default").UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			return n, fmt.Errorf("marking %s running: %w", p.Name, err)
		}
	}
	return n, nil
}

// finish marks pod name finished with phase, as a kubelet would.
func finish(ctx context.Context, client kubernetes.Interface, name string, phase corev1.PodPhase) error {
	p, err := client.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	p.Status.Phase = phase
	_, err = client.CoreV1().Pods("default").UpdateStatus(ctx, p, metav1.UpdateOptions{})
	return err
}

// createPods creates n pods named prefix-i.
func createPods(t *testing.T, ctx context.Context, client kubernetes.Interface, prefix string, n int) {
	t.Helper()
	for i := range n {
		if _, err := client.CoreV1().Pods("default").Create(ctx, mkPod(prefix, i, ""), metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating pod %d: %v", i, err)
		}
	}
}

// allBound waits until the n pods of prefix are bound, playing the kubelet
// meanwhile.
func allBound(t *testing.T, ctx context.Context, client kubernetes.Interface, prefix string, n int) {
	t.Helper()
	waitFor(t, boundLimit, fmt.Sprintf("%d pods %s-* bound and running", n, prefix), func() (bool, string) {
		bound, err := kubelet(ctx, client, prefix)
		if err != nil {
			return false, err.Error()
		}
		state := fmt.Sprintf("%d of %d bound", bound, n)
		if p, err := client.CoreV1().Pods("default").Get(ctx, mkPod(prefix, 0, "").Name, metav1.GetOptions{}); err == nil {
			state += fmt.Sprintf("; %s: scheduler %q, conditions %+v", p.Name, p.Spec.SchedulerName, p.Status.Conditions)
		}
		return bound == n, state
	})
}

// names asks the service directly, as kube-scheduler does with
// nodeCacheCapable: true, and returns the status code.
func names(t *testing.T, addr string, verb string, pod *corev1.Pod, nodes []string) int {
	t.Helper()
	body, _ := json.Marshal(extenderv1.ExtenderArgs{Pod: pod, NodeNames: &nodes})
	resp, err := http.Post("http://"+addr+"/"+verb, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("%s: %v", verb, err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// TestControlPlane: kube-scheduler drives kubesim serve, which sees the
// cluster through the API server.
func TestControlPlane(t *testing.T) {
	ctx := t.Context()
	mk, err := serve.LoadPolicy(filepath.Join("..", serve.DefaultCheckpoint))
	if err != nil {
		t.Fatal(err)
	}

	// 1. etcd, kube-apiserver, kubesim serve, kube-scheduler
	api := startAPIServer(t, startEtcd(t))
	client := kubernetes.NewForConfigOrDie(api.config)
	kubeconfig := writeKubeconfig(t, api.config)
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	svc := startService(t, addr, kubeconfig, mk, false)
	stopScheduler := startScheduler(t, ctx, schedulerConfig(t, kubeconfig, "http://"+addr))
	nodeNames := make([]string, nodeCount)
	for i := range nodeCount {
		n, err := client.CoreV1().Nodes().Create(ctx, mkNode(i), metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating node %d: %v", i, err)
		}
		nodeNames[i] = n.Name
	}
	waitFor(t, time.Minute, "the service's informer view synced", func() (bool, string) {
		return svc.in.Synced() && svc.metric(t, `kubesim_serve_view{view="informer"}`) == 1, "not yet"
	})

	// 2. pods: every one that fits is bound; one that fits nowhere is not
	createPods(t, ctx, client, "web", podCount)
	huge := mkPod("huge", 0, "16")
	if _, err := client.CoreV1().Pods("default").Create(ctx, huge, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	allBound(t, ctx, client, "web", podCount)
	waitFor(t, time.Minute, "the huge pod marked unschedulable", func() (bool, string) {
		p, err := client.CoreV1().Pods("default").Get(ctx, huge.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
				return p.Spec.NodeName == "", c.Message
			}
		}
		return false, "no PodScheduled condition"
	})
	waitFor(t, time.Minute, "the view matches the API server", func() (bool, string) { return viewMatches(ctx, client, svc) })
	for _, verb := range []string{"filter", "prioritize"} {
		calls := svc.metric(t, fmt.Sprintf(`kubesim_serve_requests_total{verb="%s"}`, verb))
		errs := svc.metric(t, fmt.Sprintf(`kubesim_serve_errors_total{code="400",verb="%s"}`, verb))
		t.Logf("%s: %v calls from kube-scheduler, %v refused", verb, calls, max(errs, 0))
		if calls < podCount || errs > 0 {
			t.Errorf("%s: %v calls, %v refused; want at least %d calls (one a pod), none refused", verb, calls, errs, podCount)
		}
	}
	t.Logf("decisions: policy %v, pending %v, fallback %v", svc.metric(t, `kubesim_serve_decisions_total{source="policy"}`),
		svc.metric(t, `kubesim_serve_decisions_total{source="pending"}`), svc.metric(t, `kubesim_serve_decisions_total{source="fallback"}`))

	// 3. deletions and completions: the view follows
	for i := 0; i < podCount; i += 4 {
		if err := client.CoreV1().Pods("default").Delete(ctx, mkPod("web", i, "").Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i < podCount; i += 8 {
		if err := finish(ctx, client, mkPod("web", i, "").Name, corev1.PodSucceeded); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, time.Minute, "the view matches after deletions and completions", func() (bool, string) { return viewMatches(ctx, client, svc) })

	// 4. restart in shadow mode: the new service recovers its view from a list
	svc.stop()
	svc = startService(t, addr, kubeconfig, mk, true)
	waitFor(t, time.Minute, "the restarted service synced", func() (bool, string) { return svc.in.Synced(), "not yet" })
	if ok, diff := viewMatches(ctx, client, svc); !ok {
		t.Errorf("after a restart the view differs from the API server: %s", diff)
	}
	createPods(t, ctx, client, "shadow", 40)
	allBound(t, ctx, client, "shadow", 40)
	waitFor(t, time.Minute, "the view matches in shadow mode", func() (bool, string) { return viewMatches(ctx, client, svc) })
	if got := svc.metric(t, `kubesim_serve_decisions_total{source="shadow"}`); got < 40 {
		t.Errorf("shadow decisions %v; want at least 40", got)
	}
	t.Logf("shadow agreement with kube-default: %v", svc.metric(t, "kubesim_serve_shadow_agreement_ratio"))

	// 5. the API server goes away: the service falls back to the ledger,
	// says so, and still answers at once
	stopScheduler()
	api.stop()
	waitFor(t, time.Minute, "the service fell back to the ledger", func() (bool, string) {
		return svc.metric(t, `kubesim_serve_view{view="ledger"}`) == 1 && svc.metric(t, "kubesim_serve_api_reachable") == 0, "still on the informer view"
	})
	if !strings.Contains(svc.logs.String(), "falling back to the ledger view") {
		t.Errorf("the service did not log its fallback:\n%s", svc.logs.String())
	}
	for _, verb := range []string{"filter", "prioritize"} {
		if code := names(t, addr, verb, mkPod("late", 0, ""), nodeNames); code != http.StatusOK {
			t.Errorf("%s by node names with the API server gone: status %d; want 200", verb, code)
		}
	}
}
