package serve

import (
	"context"
	"errors"
	"fmt"
	"os"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// ErrNoAPIAccess says that the service has no way to reach the API server:
// no kubeconfig given and not running in a pod.
var ErrNoAPIAccess = errors.New("no kubeconfig given and not running in a cluster")

// ClientConfig returns the API server's client configuration: from the
// kubeconfig file when path is set, else the in-cluster configuration
// (the pod's ServiceAccount) when running in a pod, else ErrNoAPIAccess.
func ClientConfig(path string) (*rest.Config, error) {
	if path != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", path)
		if err != nil {
			return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
		}
		return cfg, nil
	}
	if os.Getenv("KUBERNETES_SERVICE_HOST") == "" {
		return nil, ErrNoAPIAccess
	}
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return nil, fmt.Errorf("in-cluster configuration: %w", err)
	}
	return cfg, nil
}

// InformerFor returns an informer view of the API server that cfg reaches,
// probed with GET /readyz; the caller runs it.
func InformerFor(cfg *rest.Config, ic InformerConfig) (*Informer, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "kubesim-serve"
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("serve: API client: %w", err)
	}
	if ic.Probe == nil {
		ic.Probe = func(ctx context.Context) error {
			return client.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).Error()
		}
	}
	return NewInformer(client, ic), nil
}
