package main

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
	"github.com/kubesim/kubesim/sweep"
)

// replayFlags are the options of `kubesim replay`.
type replayFlags struct {
	scheduler string
	nodes     int
	pods      int
	load      float64
	seed      uint64
	json      bool
	autoscale bool
	maxNodes  int
}

func newReplayCmd() *cobra.Command {
	var f replayFlags
	cmd := &cobra.Command{
		Use:   "replay",
		Short: "Replay a workload under scheduling heuristics and print the metrics",
		Long: `Replay a workload (the built-in synthetic one) under one heuristic scheduler, or
under every one with --scheduler all, and print a table of the metrics (or JSON lines with --json).
All schedulers see the same workload and the same simulator seed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runReplay(cmd.Context(), cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.scheduler, "scheduler", "all", "scheduler name, or all")
	fl.IntVar(&f.nodes, "nodes", 40, "nodes at the start")
	fl.IntVar(&f.pods, "pods", 0, "pods in the synthetic workload (0: 250 per node)")
	fl.Float64Var(&f.load, "load", 1.0, "offered memory load of the synthetic workload (1 = the cluster's memory)")
	fl.Uint64Var(&f.seed, "seed", 1, "seed of the workload, the simulator and the schedulers")
	fl.BoolVar(&f.json, "json", false, "print one JSON object per scheduler, one per line")
	fl.BoolVar(&f.autoscale, "autoscale", false, "enable the cluster autoscaler (template: the first node's shape)")
	fl.IntVar(&f.maxNodes, "max-nodes", 0, "autoscaler upper bound (0: twice --nodes)")
	return cmd
}

func runReplay(ctx context.Context, cmd *cobra.Command, f replayFlags) error {
	names, err := schedulerNames(f.scheduler)
	if err != nil {
		return err
	}
	if f.nodes <= 0 {
		return usagef("--nodes %d: must be positive", f.nodes)
	}
	if f.pods < 0 {
		return usagef("--pods %d: must not be negative", f.pods)
	}
	o := sim.DefaultSyntheticOptions(f.nodes)
	o.Seed, o.Load = f.seed, f.load
	if f.pods > 0 {
		o.Pods = f.pods
	}
	w, err := sim.Synthetic(o)
	if err != nil {
		return usageError{err}
	}
	cfg := sim.DefaultConfig()
	cfg.Seed = f.seed
	if f.autoscale {
		cfg.Autoscaler.Enabled = true
		cfg.Autoscaler.Template = w.Nodes[0]
		cfg.Autoscaler.Template.Name = "autoscaled"
		cfg.Autoscaler.MinNodes = 1
		cfg.Autoscaler.MaxNodes = f.maxNodes
		if f.maxNodes == 0 {
			cfg.Autoscaler.MaxNodes = 2 * f.nodes
		}
	}
	if err := cfg.Validate(); err != nil {
		return usageError{err}
	}
	results, err := replayAll(ctx, w, cfg, names, f.seed)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if f.json {
		return sweep.WriteJSONLines(out, results)
	}
	fmt.Fprintf(out, "workload %s: %d pods, %d nodes, load %.2f\n", w.Name, len(w.Pods), len(w.Nodes), f.load)
	return sweep.WriteTable(out, results)
}

// schedulerNames resolves --scheduler to registry names.
func schedulerNames(s string) ([]string, error) {
	if s == "all" {
		return sched.Names(), nil
	}
	if _, err := sched.New(s, 0); err != nil {
		return nil, usageError{err}
	}
	return []string{s}, nil
}

// replayAll replays w under each scheduler, in parallel on the available
// cores; results come back in the order of names.
func replayAll(ctx context.Context, w *sim.Workload, cfg sim.Config, names []string, seed uint64) ([]*sim.Result, error) {
	results := make([]*sim.Result, len(names))
	errs := make([]error, len(names))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			s, err := sched.New(name, seed)
			if err != nil {
				errs[i] = err
				return
			}
			start := time.Now()
			results[i], errs[i] = sim.Run(ctx, w, cfg, s)
			if errs[i] == nil {
				slog.Info("replayed", "scheduler", name, "pods", results[i].Pods, "elapsed", time.Since(start).Round(time.Millisecond))
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return results, nil
}
