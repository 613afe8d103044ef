package serve

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubesim/kubesim/sim"
)

var update = flag.Bool("update", false, "rewrite serve/testdata from the fixtures and the shipped checkpoint's answers")

// goldenNodes is a small cluster of real node objects: two zones, a GPU
// node tainted NoSchedule, a node with a PreferNoSchedule taint, a cordoned
// node, one node whose state comes from annotations, and allocatable below
// capacity (system reserved).
func goldenNodes() []corev1.Node {
	return []corev1.Node{
		mkNode("node-a1", "16", "64Gi").zone("eu-west-1a").label("node.kubernetes.io/instance-type", "m5.4xlarge").alloc(corev1.ResourceCPU, "15800m").alloc(corev1.ResourceMemory, "62Gi").obj(),
		mkNode("node-a2", "16", "64Gi").zone("eu-west-1a").label("node.kubernetes.io/instance-type", "m5.4xlarge").
			annotate(AnnotationRequestedCPU, "12").annotate(AnnotationRequestedMemory, "40Gi").annotate(AnnotationPods, "31").
			annotate(AnnotationUsedCPU, "9500m").annotate(AnnotationUsedMemory, "35Gi").obj(),
		mkNode("node-b1", "32", "128Gi").zone("eu-west-1b").label("node.kubernetes.io/instance-type", "m5.8xlarge").
			taint("maintenance", "soon", corev1.TaintEffectPreferNoSchedule).obj(),
		mkNode("node-b2", "8", "32Gi").zone("eu-west-1b").label("node.kubernetes.io/instance-type", "m5.2xlarge").alloc(corev1.ResourcePods, "58").obj(),
		mkNode("gpu-b3", "48", "192Gi").zone("eu-west-1b").label("accelerator", "nvidia-a10g").alloc("nvidia.com/gpu", "4").
			taint("nvidia.com/gpu", "present", corev1.TaintEffectNoSchedule).obj(),
		func() corev1.Node {
			n := mkNode("node-c1", "16", "64Gi").zone("eu-west-1c").obj()
			n.Spec.Unschedulable = true
			return n
		}(),
	}
}

// goldenCases are the request fixtures: verb, file stem and the request.
func goldenCases() []struct {
	verb, name string
	args       extenderv1.ExtenderArgs
} {
	web := mkPod("web-7d9c5-x2x8q").owner("ReplicaSet", "web-7d9c5").priority(1000).
		container("500m", "1Gi", "1", "2Gi").container("100m", "128Mi", "200m", "128Mi").init("1", "256Mi").obj()
	batch := mkPod("train-0").container("", "", "4", "16Gi"). // requests default to limits
									tolerate("nvidia.com/gpu", corev1.TolerationOpExists, "", corev1.TaintEffectNoSchedule).obj()
	zonal := mkPod("cache-0").container("2", "8Gi", "", "").selector(sim.LabelZone, "eu-west-1a").obj()
	huge := mkPod("huge-0").container("20", "100Gi", "", "").obj()
	return []struct {
		verb, name string
		args       extenderv1.ExtenderArgs
	}{
		{"prioritize", "prioritize-web", args(web, goldenNodes()...)},
		{"filter", "filter-web", args(web, goldenNodes()...)},
		{"prioritize", "prioritize-gpu-toleration", args(batch, goldenNodes()...)},
		{"filter", "filter-zone-selector", args(zonal, goldenNodes()...)},
		{"prioritize", "prioritize-zone-selector", args(zonal, goldenNodes()...)},
		{"prioritize", "prioritize-fits-one", args(huge, goldenNodes()...)},
	}
}

// TestGolden replays the request fixtures of testdata/*.request.json
// against the shipped checkpoint and compares the answers with
// testdata/*.response.json. With -update it rewrites both from the
// fixtures above.
func TestGolden(t *testing.T) {
	for _, tc := range goldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			reqPath := filepath.Join("testdata", tc.name+".request.json")
			respPath := filepath.Join("testdata", tc.name+".response.json")
			if *update {
				data, err := json.MarshalIndent(tc.args, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(reqPath, append(data, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			req, err := os.ReadFile(reqPath)
			if err != nil {
				t.Fatal(err)
			}
			s := newTestServer(t, Config{Workers: 1}, shipped(t))
			code, body := post(t, s, "/"+tc.verb, req)
			if code != http.StatusOK {
				t.Fatalf("status %d: %s", code, body)
			}
			var pretty bytes.Buffer
			if err := json.Indent(&pretty, body, "", "  "); err != nil {
				t.Fatal(err)
			}
			if *update {
				if err := os.WriteFile(respPath, pretty.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(respPath)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(pretty.Bytes(), want) {
				t.Errorf("%s %s:\ngot  %s\nwant %s", tc.verb, reqPath, pretty.Bytes(), want)
			}
			if m := metricsText(t, s); tc.verb == "prioritize" && !bytes.Contains([]byte(m), []byte(`kubesim_serve_fallbacks_total{reason="error"} 0`)) {
				t.Errorf("the shipped policy fell back:\n%s", grep(m, "fallbacks"))
			}
		})
	}
}
