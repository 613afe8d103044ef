package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubesim/kubesim/serve"
)

func newServeCmd() *cobra.Command {
	var (
		checkpoint, addr string
		kubeconfig       string
		cfg              serve.Config
		grace            time.Duration
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the learned policy as a kube-scheduler extender, guarded by kube-default",
		Long: `Serve the learned policy behind kube-scheduler's extender protocol: POST /filter and
POST /prioritize (ExtenderArgs with Nodes or NodeNames), POST /nodes (a NodeList for the node
cache), GET /healthz and GET /metrics. The answer falls back to kube-default's scores when the
policy's top node fails the hard filters, when it errors, or when it exceeds --latency-budget;
with --shadow it always answers with kube-default's scores and logs the policy's choice.
Without --checkpoint it loads ` + serve.DefaultCheckpoint + ` from the working directory.
With --kubeconfig, or in a pod with a ServiceAccount, it watches the API server's nodes and
pods and takes node load from them (nodeCacheCapable: true needs it); without API access, or
while the API server does not answer, it estimates node load from the pods it placed.
SIGTERM or SIGINT stops it after the requests in flight (up to --grace). docs/serve.md.` + exitStatuses,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfg.Budget <= 0 {
				return usagef("--latency-budget must be positive")
			}
			switch {
			case cfg.MaxBody <= 0:
				return usagef("--max-body %d: must be positive", cfg.MaxBody)
			case cfg.Workers < 0:
				return usagef("--workers %d: must not be negative (0: GOMAXPROCS)", cfg.Workers)
			case cfg.MaxRequestNodes <= 0:
				return usagef("--max-nodes %d: must be positive", cfg.MaxRequestNodes)
			}
			path, err := serve.ResolveCheckpoint(checkpoint)
			if err != nil {
				return err
			}
			mk, err := serve.LoadPolicy(path)
			if err != nil {
				return err
			}
			rc, err := serve.ClientConfig(kubeconfig)
			switch {
			case errors.Is(err, serve.ErrNoAPIAccess):
				slog.Warn("no API access: node load is the service's own estimate, and requests that name nodes only are refused unless POST /nodes taught it the nodes", "reason", err)
			case err != nil:
				return err
			default:
				if cfg.Informer, err = serve.InformerFor(rc, serve.InformerConfig{}); err != nil {
					return err
				}
				go cfg.Informer.Run(cmd.Context())
				slog.Info("watching the API server", "host", rc.Host)
			}
			srv, err := serve.New(cfg, mk)
			if err != nil {
				return err
			}
			serve.LowLatencyGC() // GOGC=400 unless GOGC is set: the tail latency (docs/serve.md)
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("serve: %w", err)
			}
			slog.Info("serving", "addr", ln.Addr().String(), "checkpoint", path, "shadow", cfg.Shadow, "latency_budget", cfg.Budget)
			if err := srv.Serve(cmd.Context(), ln, grace); err != nil {
				return err
			}
			slog.Info("stopped")
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&checkpoint, "checkpoint", "", "checkpoint written by train (default "+serve.DefaultCheckpoint+")")
	fl.StringVar(&addr, "addr", ":8888", "address to listen on")
	fl.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the API server to watch (default: the in-cluster configuration when in a pod)")
	fl.BoolVar(&cfg.Shadow, "shadow", false, "answer with kube-default's scores; log and count the policy's choice")
	fl.DurationVar(&cfg.Budget, "latency-budget", 50*time.Millisecond, "the policy's time per decision before falling back to kube-default")
	fl.IntVar(&cfg.Workers, "workers", 0, "policy instances serving requests in parallel (0: GOMAXPROCS)")
	fl.Int64Var(&cfg.MaxBody, "max-body", 32<<20, "largest request body in bytes")
	fl.IntVar(&cfg.MaxRequestNodes, "max-nodes", 10_000, "most nodes in one request (counted while decoding; more is a 413)")
	fl.DurationVar(&grace, "grace", 30*time.Second, "how long shutdown waits for requests in flight")
	return cmd
}
