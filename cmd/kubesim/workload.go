package main

import (
	"github.com/spf13/pflag"

	"github.com/kubesim/kubesim/dataset"
	"github.com/kubesim/kubesim/sim"
)

// workloadFlags choose the workload and cluster of replay and eval.
type workloadFlags struct {
	trace      string
	window     string
	machines   int
	loadFactor float64
	dag        bool

	nodes     int
	pods      int
	load      float64
	seed      uint64
	autoscale bool
	maxNodes  int
}

func (f *workloadFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.trace, "trace", "", "converted trace folder (see convert, data); empty: the synthetic workload")
	fl.StringVar(&f.window, "window", "test-0", "trace window: train-N, test-N, dayN, FROM-TO (Go durations or seconds), all")
	fl.IntVar(&f.machines, "machines", 0, "machines sampled from the trace (0: all)")
	fl.Float64Var(&f.loadFactor, "load-factor", 1, "trace arrival scaling (above 1 replicates pods, below 1 thins)")
	fl.BoolVar(&f.dag, "dag", false, "batch tasks wait for the tasks they depend on")
	fl.IntVar(&f.nodes, "nodes", 40, "nodes at the start")
	fl.IntVar(&f.pods, "pods", 0, "pods in the synthetic workload (0: 250 per node)")
	fl.Float64Var(&f.load, "load", 1.0, "offered memory load of the synthetic workload (1 = the cluster's memory)")
	fl.Uint64Var(&f.seed, "seed", 1, "seed of the workload, the simulator and the schedulers")
	fl.BoolVar(&f.autoscale, "autoscale", false, "enable the cluster autoscaler (template: the first node's shape)")
	fl.IntVar(&f.maxNodes, "max-nodes", 0, "autoscaler upper bound (0: twice --nodes)")
}

// build returns the workload and simulator configuration the flags describe.
func (f *workloadFlags) build() (*sim.Workload, sim.Config, error) {
	if f.trace != "" {
		return f.buildTrace()
	}
	if f.nodes <= 0 {
		return nil, sim.Config{}, usagef("--nodes %d: must be positive", f.nodes)
	}
	if f.pods < 0 {
		return nil, sim.Config{}, usagef("--pods %d: must not be negative", f.pods)
	}
	if f.maxNodes < 0 {
		return nil, sim.Config{}, usagef("--max-nodes %d: must not be negative", f.maxNodes)
	}
	o := sim.DefaultSyntheticOptions(f.nodes)
	o.Seed, o.Load = f.seed, f.load
	if f.pods > 0 {
		o.Pods = f.pods
	}
	w, err := sim.Synthetic(o)
	if err != nil {
		return nil, sim.Config{}, usageError{err}
	}
	cfg := f.simConfig(w)
	if err := cfg.Validate(); err != nil {
		return nil, sim.Config{}, usageError{err}
	}
	return w, cfg, nil
}

// simConfig is the simulator configuration for w under the flags.
func (f *workloadFlags) simConfig(w *sim.Workload) sim.Config {
	cfg := sim.DefaultConfig()
	cfg.Seed = f.seed
	if f.autoscale && len(w.Nodes) > 0 {
		cfg.Autoscaler.Enabled = true
		cfg.Autoscaler.Template = w.Nodes[0]
		cfg.Autoscaler.Template.Name = "autoscaled"
		cfg.Autoscaler.Template.Taints = nil
		cfg.Autoscaler.MinNodes = 1
		cfg.Autoscaler.MaxNodes = f.maxNodes
		if f.maxNodes == 0 {
			cfg.Autoscaler.MaxNodes = 2 * len(w.Nodes)
		}
	}
	return cfg
}

// buildTrace loads the trace window the flags name.
func (f *workloadFlags) buildTrace() (*sim.Workload, sim.Config, error) {
	switch {
	case f.machines < 0:
		return nil, sim.Config{}, usagef("--machines %d: must not be negative", f.machines)
	case !(f.loadFactor > 0):
		return nil, sim.Config{}, usagef("--load-factor %v: must be positive", f.loadFactor)
	}
	win, err := dataset.ResolveWindow(f.trace, f.window)
	if err != nil {
		return nil, sim.Config{}, usageError{err}
	}
	w, err := dataset.Load(f.trace, dataset.LoadOptions{
		Window: win, Machines: f.machines, LoadFactor: f.loadFactor, DAG: f.dag, Seed: f.seed,
	})
	if err != nil {
		return nil, sim.Config{}, err
	}
	cfg := f.simConfig(w)
	if err := cfg.Validate(); err != nil {
		return nil, sim.Config{}, usageError{err}
	}
	return w, cfg, nil
}
