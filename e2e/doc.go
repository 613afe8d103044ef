// Package e2e runs kubesim serve inside a real control plane: an embedded
// etcd, the real kube-apiserver (k8s.io/kubernetes' test server) and the
// real kube-scheduler, configured with the shipped
// deploy/scheduler-config.yaml (its URL and kubeconfig rewritten), which
// calls the extender with node names only. The test creates nodes and
// pods, plays the kubelet (pods marked Running, some Succeeded), deletes
// some, and checks the extender's informer view against the API server's,
// across a restart of the service, in shadow mode, and with the API server
// gone.
//
// It is its own Go module so that the main module never depends on
// k8s.io/kubernetes: `make e2e` runs it; `make test` does not.
package e2e
