package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubesim/kubesim/sim"
)

// clock is the tests' fixed wall clock.
var clock = time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)

// nodeB builds a corev1.Node fluently.
type nodeB struct{ n corev1.Node }

func mkNode(name, cpu, mem string) *nodeB {
	return &nodeB{corev1.Node{
		TypeMeta:   metav1.TypeMeta{Kind: "Node", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
		Status: corev1.NodeStatus{
			Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem), corev1.ResourcePods: resource.MustParse("110")},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem), corev1.ResourcePods: resource.MustParse("110")},
		},
	}}
}

func (b *nodeB) zone(z string) *nodeB { b.n.Labels[sim.LabelZone] = z; return b }
func (b *nodeB) label(k, v string) *nodeB {
	b.n.Labels[k] = v
	return b
}
func (b *nodeB) taint(k, v string, e corev1.TaintEffect) *nodeB {
	b.n.Spec.Taints = append(b.n.Spec.Taints, corev1.Taint{Key: k, Value: v, Effect: e})
	return b
}
func (b *nodeB) annotate(k, v string) *nodeB {
	if b.n.Annotations == nil {
		b.n.Annotations = map[string]string{}
	}
	b.n.Annotations[k] = v
	return b
}
func (b *nodeB) alloc(name corev1.ResourceName, q string) *nodeB {
	b.n.Status.Allocatable[name] = resource.MustParse(q)
	return b
}
func (b *nodeB) obj() corev1.Node { return b.n }

// podB builds a corev1.Pod fluently.
type podB struct{ p corev1.Pod }

func mkPod(name string) *podB {
	return &podB{corev1.Pod{
		TypeMeta:   metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name), CreationTimestamp: metav1.NewTime(clock.Add(-30 * time.Second))},
	}}
}

// container adds a container with requests and limits ("" leaves one out).
func (b *podB) container(cpuReq, memReq, cpuLim, memLim string) *podB {
	c := corev1.Container{Name: fmt.Sprintf("c%d", len(b.p.Spec.Containers)), Image: "registry.k8s.io/pause:3.10",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}}
	for _, x := range []struct {
		l    corev1.ResourceList
		name corev1.ResourceName
		q    string
	}{{c.Resources.Requests, corev1.ResourceCPU, cpuReq}, {c.Resources.Requests, corev1.ResourceMemory, memReq},
		{c.Resources.Limits, corev1.ResourceCPU, cpuLim}, {c.Resources.Limits, corev1.ResourceMemory, memLim}} {
		if x.q != "" {
			x.l[x.name] = resource.MustParse(x.q)
		}
	}
	b.p.Spec.Containers = append(b.p.Spec.Containers, c)
	return b
}
func (b *podB) init(cpu, mem string) *podB {
	b.p.Spec.InitContainers = append(b.p.Spec.InitContainers, corev1.Container{Name: "init", Image: "busybox",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}}})
	return b
}
func (b *podB) tolerate(k string, op corev1.TolerationOperator, v string, e corev1.TaintEffect) *podB {
	b.p.Spec.Tolerations = append(b.p.Spec.Tolerations, corev1.Toleration{Key: k, Operator: op, Value: v, Effect: e})
	return b
}
func (b *podB) selector(k, v string) *podB {
	if b.p.Spec.NodeSelector == nil {
		b.p.Spec.NodeSelector = map[string]string{}
	}
	b.p.Spec.NodeSelector[k] = v
	return b
}
func (b *podB) priority(p int32) *podB { b.p.Spec.Priority = &p; return b }
func (b *podB) owner(kind, name string) *podB {
	t := true
	b.p.OwnerReferences = append(b.p.OwnerReferences, metav1.OwnerReference{APIVersion: "apps/v1", Kind: kind, Name: name, UID: "owner-" + "x", Controller: &t})
	return b
}
func (b *podB) obj() *corev1.Pod { return &b.p }

// args builds ExtenderArgs with full nodes.
func args(p *corev1.Pod, nodes ...corev1.Node) extenderv1.ExtenderArgs {
	return extenderv1.ExtenderArgs{Pod: p, Nodes: &corev1.NodeList{Items: nodes}}
}

// fakePolicy is an injected Policy: it calls f.
type fakePolicy struct {
	f func(c *sim.Cluster, dst []float64) ([]float64, error)
}

func (p fakePolicy) Probs(c *sim.Cluster, _ *sim.Pod, dst []float64) ([]float64, error) {
	return p.f(c, dst)
}

// prefer returns a policy that puts all its probability on node i (or
// Pending when i is out of range).
func prefer(i int) NewPolicy {
	return func() (Policy, error) {
		return fakePolicy{func(c *sim.Cluster, dst []float64) ([]float64, error) {
			clear(dst)
			dst[min(i, c.Len())] = 1
			return dst, nil
		}}, nil
	}
}

var (
	shippedOnce sync.Once
	shippedMk   NewPolicy
	shippedErr  error
)

// shipped returns the maker of the shipped checkpoint's policy, loaded once.
func shipped(t testing.TB) NewPolicy {
	t.Helper()
	shippedOnce.Do(func() { shippedMk, shippedErr = LoadPolicy(filepath.Join("..", DefaultCheckpoint)) })
	if shippedErr != nil {
		t.Fatal(shippedErr)
	}
	return shippedMk
}

// newTestServer returns a server with the fixed clock and a quiet logger.
func newTestServer(t testing.TB, cfg Config, mk NewPolicy) *Server {
	t.Helper()
	cfg.Now = func() time.Time { return clock }
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Workers == 0 {
		cfg.Workers = 2
	}
	s, err := New(cfg, mk)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// post sends body (a value, or []byte as is) to path and returns the
// status and the answer.
func post(t testing.TB, h http.Handler, path string, body any) (int, []byte) {
	t.Helper()
	data, ok := body.([]byte)
	if !ok {
		var err error
		if data, err = json.Marshal(body); err != nil {
			t.Fatal(err)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, bytes.NewReader(data)))
	return rec.Code, rec.Body.Bytes()
}

// scoresOf decodes a HostPriorityList.
func scoresOf(t testing.TB, body []byte) map[string]int64 {
	t.Helper()
	var l extenderv1.HostPriorityList
	if err := json.Unmarshal(body, &l); err != nil {
		t.Fatalf("decoding %s: %v", body, err)
	}
	m := map[string]int64{}
	for _, h := range l {
		m[h.Host] = h.Score
	}
	return m
}

// metric returns the text of /metrics.
func metricsText(t testing.TB, h http.Handler) string {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	return rec.Body.String()
}

// newRecorder sends a bodiless request.
func newRecorder(h http.Handler, method, path string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec
}

// sim1 is one core and 1 GiB.
func sim1() sim.Resources { return sim.Resources{CPU: 1000, Mem: 1024} }
