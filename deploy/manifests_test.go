// Package deploy holds the manifests that run `kubesim serve` next to
// kube-scheduler; its test decodes them with the upstream types.
package deploy

import (
	"bytes"
	"os"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedv1 "k8s.io/kube-scheduler/config/v1"
	"sigs.k8s.io/yaml"
)

// documents splits a YAML file at its "---" lines.
func documents(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var docs [][]byte
	for _, d := range bytes.Split(data, []byte("\n---\n")) {
		if len(bytes.TrimSpace(d)) > 0 {
			docs = append(docs, d)
		}
	}
	return docs
}

// TestSchedulerConfig decodes the KubeSchedulerConfiguration strictly
// (unknown keys are errors) and checks its extender.
func TestSchedulerConfig(t *testing.T) {
	docs := documents(t, "scheduler-config.yaml")
	if len(docs) != 1 {
		t.Fatalf("%d documents; want 1", len(docs))
	}
	var cfg schedv1.KubeSchedulerConfiguration
	if err := yaml.UnmarshalStrict(docs[0], &cfg); err != nil {
		t.Fatalf("scheduler-config.yaml: %v", err)
	}
	if cfg.APIVersion != schedv1.SchemeGroupVersion.String() || cfg.Kind != "KubeSchedulerConfiguration" {
		t.Errorf("apiVersion %q kind %q", cfg.APIVersion, cfg.Kind)
	}
	if len(cfg.Extenders) != 1 {
		t.Fatalf("%d extenders; want 1", len(cfg.Extenders))
	}
	e := cfg.Extenders[0]
	if !strings.HasSuffix(e.URLPrefix, ":8888") || e.FilterVerb != "filter" || e.PrioritizeVerb != "prioritize" ||
		e.Weight <= 0 || !e.Ignorable || e.HTTPTimeout.Duration <= 0 {
		t.Errorf("extender %+v", e)
	}
	// kubernetes/kubernetes#141781: the nodes that a filter extender without
	// nodeCacheCapable passes back get empty NodeInfos in kube-scheduler
	// v1.37, and its resource scores see every node idle
	if !e.NodeCacheCapable {
		t.Errorf("extender nodeCacheCapable false; want true (names only, and never filterVerb without it: docs/serve.md)")
	}
}

// TestExtender decodes the Deployment and the Service strictly and checks
// that they agree on labels and ports, and that the command is serve.
func TestExtender(t *testing.T) {
	docs := documents(t, "extender.yaml")
	if len(docs) != 2 {
		t.Fatalf("%d documents; want a Deployment and a Service", len(docs))
	}
	var dep appsv1.Deployment
	if err := yaml.UnmarshalStrict(docs[0], &dep); err != nil {
		t.Fatalf("extender.yaml Deployment: %v", err)
	}
	var svc corev1.Service
	if err := yaml.UnmarshalStrict(docs[1], &svc); err != nil {
		t.Fatalf("extender.yaml Service: %v", err)
	}
	if dep.Kind != "Deployment" || svc.Kind != "Service" {
		t.Fatalf("kinds %q, %q", dep.Kind, svc.Kind)
	}
	pod := dep.Spec.Template
	for k, v := range svc.Spec.Selector {
		if pod.Labels[k] != v || dep.Spec.Selector.MatchLabels[k] != v {
			t.Errorf("service selector %s=%s does not select the pods (%v)", k, v, pod.Labels)
		}
	}
	c := pod.Spec.Containers[0]
	if len(c.Args) == 0 || c.Args[0] != "serve" || c.Ports[0].ContainerPort != 8888 || svc.Spec.Ports[0].Port != 8888 {
		t.Errorf("container args %v ports %v, service ports %v", c.Args, c.Ports, svc.Spec.Ports)
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("readiness probe %+v; want GET /healthz", c.ReadinessProbe)
	}
	if g := pod.Spec.TerminationGracePeriodSeconds; g == nil || *g <= 30 {
		t.Errorf("terminationGracePeriodSeconds %v; want more than serve's --grace 30s", g)
	}
	sa := rbac(t)
	if pod.Spec.ServiceAccountName != sa.Name || dep.Namespace != sa.Namespace {
		t.Errorf("pods run as %s/%s; want the ServiceAccount %s/%s of rbac.yaml", dep.Namespace, pod.Spec.ServiceAccountName, sa.Namespace, sa.Name)
	}
}

// rbac decodes rbac.yaml strictly: a ServiceAccount, a ClusterRole that
// may get, list and watch nodes and pods and nothing more, and a binding of
// the one to the other. It returns the ServiceAccount.
func rbac(t *testing.T) corev1.ServiceAccount {
	t.Helper()
	docs := documents(t, "rbac.yaml")
	if len(docs) != 3 {
		t.Fatalf("rbac.yaml: %d documents; want a ServiceAccount, a ClusterRole and a ClusterRoleBinding", len(docs))
	}
	var sa corev1.ServiceAccount
	var role rbacv1.ClusterRole
	var bind rbacv1.ClusterRoleBinding
	for i, v := range []any{&sa, &role, &bind} {
		if err := yaml.UnmarshalStrict(docs[i], v); err != nil {
			t.Fatalf("rbac.yaml document %d: %v", i, err)
		}
	}
	if sa.Kind != "ServiceAccount" || role.Kind != "ClusterRole" || bind.Kind != "ClusterRoleBinding" {
		t.Fatalf("rbac.yaml kinds %q, %q, %q", sa.Kind, role.Kind, bind.Kind)
	}
	granted := map[string]bool{}
	for _, r := range role.Rules {
		if len(r.NonResourceURLs) > 0 || len(r.ResourceNames) > 0 {
			t.Errorf("rule %+v: want plain resource rules", r)
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					granted[g+"/"+res+":"+v] = true
				}
			}
		}
	}
	want := map[string]bool{}
	for _, res := range []string{"nodes", "pods"} {
		for _, v := range []string{"get", "list", "watch"} {
			want["/"+res+":"+v] = true
		}
	}
	if len(granted) != len(want) {
		t.Errorf("ClusterRole grants %v; want exactly %v", granted, want)
	}
	for k := range want {
		if !granted[k] {
			t.Errorf("ClusterRole does not grant %s", k)
		}
	}
	if bind.RoleRef.Kind != "ClusterRole" || bind.RoleRef.Name != role.Name || len(bind.Subjects) != 1 ||
		bind.Subjects[0].Kind != "ServiceAccount" || bind.Subjects[0].Name != sa.Name || bind.Subjects[0].Namespace != sa.Namespace {
		t.Errorf("binding %+v does not bind ClusterRole %s to ServiceAccount %s/%s", bind, role.Name, sa.Namespace, sa.Name)
	}
	return sa
}
