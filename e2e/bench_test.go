package e2e

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/kubesim/kubesim/serve"
)

// realisticNode is node i as a kubelet reports it: labels, addresses,
// conditions, images and system info, about 3.5 KB of JSON, with 16 cores
// and 64 GiB.
func realisticNode(i int) *corev1.Node {
	n := mkNode(i)
	rl := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourceMemory: resource.MustParse("64Gi"),
		corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceEphemeralStorage: resource.MustParse("100Gi")}
	n.Status.Capacity, n.Status.Allocatable = rl, rl
	for k, v := range map[string]string{
		"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux",
		"node.kubernetes.io/instance-type": "m5.4xlarge", "topology.kubernetes.io/region": "eu-west-1",
	} {
		n.Labels[k] = v
	}
	n.Spec.PodCIDR = fmt.Sprintf("10.%d.%d.0/24", i/256, i%256)
	n.Spec.ProviderID = fmt.Sprintf("aws:///eu-west-1a/i-%017d", i)
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.0.%d.%d", i/256, i%256)}, {Type: corev1.NodeHostName, Address: n.Name}}
	for _, c := range []corev1.NodeConditionType{corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure} {
		n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: c, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficient" + string(c), Message: "kubelet has sufficient resources available"})
	}
	for j := range 12 {
		n.Status.Images = append(n.Status.Images, corev1.ContainerImage{
			Names:     []string{fmt.Sprintf("registry.example.com/team-%d/service-%d@sha256:%064d", j, j, j), fmt.Sprintf("registry.example.com/team-%d/service-%d:v1.%d.0", j, j, j)},
			SizeBytes: int64(50+j) << 20,
		})
	}
	n.Status.NodeInfo = corev1.NodeSystemInfo{MachineID: fmt.Sprintf("%032d", i), SystemUUID: fmt.Sprintf("%032d", i), BootID: fmt.Sprintf("%032d", i),
		KernelVersion: "6.1.0-13-amd64", OSImage: "Debian GNU/Linux 12 (bookworm)", ContainerRuntimeVersion: "containerd://2.1.0", KubeletVersion: "v1.37.2", OperatingSystem: "linux", Architecture: "amd64"}
	return n
}

// BenchmarkExtender times the extender as kube-scheduler sees it: its own
// HTTP extender client (k8s.io/kubernetes/pkg/scheduler.NewHTTPExtender)
// calls filter and then prioritize over loopback, for every node, with
// node names only (nodeCacheCapable: true, the nodes and 4 pods a node in
// the service's informer view) or full Node objects. It reports p50 and
// p99 per verb in milliseconds.
func BenchmarkExtender(b *testing.B) {
	mk, err := serve.LoadPolicy(filepath.Join("..", serve.DefaultCheckpoint))
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{100, 1000} {
		nodes := make([]fwk.NodeInfo, n)
		objs := make([]runtime.Object, 0, 5*n)
		for i := range n {
			node := realisticNode(i)
			ni := framework.NewNodeInfo()
			ni.SetNode(node)
			nodes[i] = ni
			objs = append(objs, node)
			for j := range 4 {
				p := mkPod(fmt.Sprintf("%s-p", node.Name), j, "")
				p.Spec.NodeName, p.Status.Phase = node.Name, corev1.PodRunning
				objs = append(objs, p)
			}
		}
		quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
		in := serve.NewInformer(fake.NewClientset(objs...), serve.InformerConfig{Logger: quiet})
		ctx, cancel := context.WithCancel(context.Background())
		go in.Run(ctx)
		for !in.Synced() {
			time.Sleep(10 * time.Millisecond)
		}
		srv, err := serve.New(serve.Config{Informer: in, Logger: quiet, Workers: 1}, mk)
		if err != nil {
			b.Fatal(err)
		}
		hs := httptest.NewServer(srv)
		for _, names := range []bool{true, false} {
			mode := map[bool]string{true: "names", false: "full"}[names]
			b.Run(fmt.Sprintf("nodes=%d/%s", n, mode), func(b *testing.B) {
				ext, err := scheduler.NewHTTPExtender(&schedulerapi.Extender{
					URLPrefix: hs.URL, FilterVerb: "filter", PrioritizeVerb: "prioritize", Weight: 5,
					NodeCacheCapable: names, HTTPTimeout: metav1.Duration{Duration: 10 * time.Second},
				})
				if err != nil {
					b.Fatal(err)
				}
				var filter, prio []time.Duration
				i := 0
				for b.Loop() {
					pod := mkPod("bench", i, "")
					pod.UID = types.UID("uid-" + pod.Name)
					i++
					t0 := time.Now()
					passed, _, _, err := ext.Filter(pod, nodes)
					t1 := time.Now()
					if err != nil {
						b.Fatal(err)
					}
					if _, _, err := ext.Prioritize(pod, passed); err != nil {
						b.Fatal(err)
					}
					filter, prio = append(filter, t1.Sub(t0)), append(prio, time.Since(t1))
				}
				for _, x := range []struct {
					verb string
					d    []time.Duration
				}{{"filter", filter}, {"prioritize", prio}} {
					slices.Sort(x.d)
					b.ReportMetric(ms(x.d[len(x.d)/2]), x.verb+"-p50-ms")
					b.ReportMetric(ms(x.d[min(len(x.d)-1, len(x.d)*99/100)]), x.verb+"-p99-ms")
				}
			})
		}
		hs.Close()
		cancel()
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
