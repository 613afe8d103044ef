package e2e

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	apitesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
	schedtesting "k8s.io/kubernetes/cmd/kube-scheduler/app/testing"
)

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startEtcd starts an embedded etcd on loopback ports in a temporary
// directory and returns its client URL; it stops when the test ends.
func startEtcd(t *testing.T) string {
	t.Helper()
	cfg := embed.NewConfig()
	cfg.Dir = filepath.Join(t.TempDir(), "etcd")
	client, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", freePort(t)))
	peer, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", freePort(t)))
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*client}, []url.URL{*client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*peer}, []url.URL{*peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel = "error"
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatalf("etcd: %v", err)
	}
	t.Cleanup(e.Close)
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(time.Minute):
		t.Fatal("etcd: not ready after a minute")
	}
	return client.String()
}

// apiServer is a running kube-apiserver; stop tears it down once.
type apiServer struct {
	config *rest.Config
	stop   func()
}

// startAPIServer starts the real kube-apiserver on etcdURL. Two admission
// plugins are off because no controller manager runs: ServiceAccount (none
// creates the default ServiceAccount) and TaintNodesByCondition (none would
// lift the not-ready taint it puts on every new node).
func startAPIServer(t *testing.T, etcdURL string) *apiServer {
	t.Helper()
	storage := storagebackend.NewDefaultConfig(path.Join("kubesim-e2e", "registry"), nil)
	storage.Transport.ServerList = []string{etcdURL}
	opts := apitesting.NewDefaultTestServerOptions()
	opts.DisableInvariantChecks = true
	srv, err := apitesting.StartTestServer(t, opts, []string{"--disable-admission-plugins=ServiceAccount,TaintNodesByCondition"}, storage)
	if err != nil {
		t.Fatalf("kube-apiserver: %v", err)
	}
	var once sync.Once
	a := &apiServer{config: srv.ClientConfig, stop: func() { once.Do(srv.TearDownFn) }}
	t.Cleanup(a.stop)
	return a
}

// writeKubeconfig writes cfg as a kubeconfig file and returns its path.
func writeKubeconfig(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["e2e"] = &clientcmdapi.Cluster{
		Server: cfg.Host, CertificateAuthorityData: cfg.CAData, TLSServerName: cfg.ServerName, InsecureSkipTLSVerify: cfg.Insecure,
	}
	kc.AuthInfos["e2e"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken, ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: "e2e"}
	kc.CurrentContext = "e2e"
	p := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// schedulerConfig rewrites the shipped deploy/scheduler-config.yaml for
// this control plane: the extender's URL, the kubeconfig, no leader
// election. Everything else (verbs, weight, timeout, nodeCacheCapable,
// ignorable) is as shipped.
func schedulerConfig(t *testing.T, kubeconfig, extenderURL string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "deploy", "scheduler-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		switch trimmed := strings.TrimSpace(line); {
		case strings.HasPrefix(trimmed, "kubeconfig:"):
			line = strings.Replace(line, strings.TrimPrefix(trimmed, "kubeconfig:"), " "+kubeconfig, 1)
		case strings.HasPrefix(trimmed, "leaderElect:"):
			line = strings.Replace(line, trimmed, "leaderElect: false", 1)
		case strings.HasPrefix(trimmed, "- urlPrefix:"):
			line = strings.Replace(line, trimmed, "- urlPrefix: "+extenderURL, 1)
		}
		out = append(out, line)
	}
	p := filepath.Join(t.TempDir(), "scheduler-config.yaml")
	if err := os.WriteFile(p, []byte(strings.Join(out, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// startScheduler runs the real kube-scheduler with the configuration at
// cfgPath until stop or the end of the test.
func startScheduler(t *testing.T, ctx context.Context, cfgPath string) (stop func()) {
	t.Helper()
	srv, err := schedtesting.StartTestServer(t, ctx, []string{"--config=" + cfgPath})
	if err != nil {
		t.Fatalf("kube-scheduler: %v", err)
	}
	var once sync.Once
	stop = func() { once.Do(srv.TearDownFn) }
	t.Cleanup(stop)
	return stop
}
