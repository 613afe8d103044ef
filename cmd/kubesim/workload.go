package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kubesim/kubesim/dataset"
	"github.com/kubesim/kubesim/internal/memlimit"
	"github.com/kubesim/kubesim/sim"
	"github.com/kubesim/kubesim/sweep"
)

// workloadFlags choose the workload and cluster of replay and eval. --nodes
// is the cluster size in both modes: the synthetic cluster's nodes, or with
// --trace the machines sampled from the trace.
type workloadFlags struct {
	trace      string
	window     string
	machines   int // deprecated alias of --nodes with --trace
	loadFactor float64
	dag        bool
	warmStart  string
	grace      time.Duration

	nodes     int
	pods      int
	load      float64
	seed      uint64
	autoscale bool
	maxNodes  int

	win     dataset.Window // the resolved --window, set by check
	checked bool           // check passed
}

// defaultNodes is --nodes of the synthetic workload when it is not given.
const defaultNodes = 40

// Flags that apply in one mode only.
var (
	syntheticOnly = []string{"pods", "load"}
	traceOnly     = []string{"window", "load-factor", "dag", "machines", "warm-start", "grace"}
)

// memoryLimit is the memory that sizes are checked against (a variable for tests).
var memoryLimit = memlimit.Detect

// exitStatuses documents run's exit statuses in the help of replay and eval.
const exitStatuses = `
Exit status: 0 on success, 1 on failures, 2 for usage errors (unknown flags or names,
impossible values, flags of the other mode), 3 when the size asked for needs more memory
than this machine has (checked before anything is allocated), 130 when interrupted
(SIGINT, SIGTERM).`

func (f *workloadFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.trace, "trace", "", "converted trace folder (see convert, data); empty: the synthetic workload")
	fl.StringVar(&f.window, "window", "test-0", "with --trace: trace window: train-N, val-N, test-N, dayN, FROM-TO (Go durations or seconds), all")
	fl.IntVar(&f.machines, "machines", 0, "machines sampled from the trace")
	fl.MarkDeprecated("machines", "use --nodes")
	fl.Float64Var(&f.loadFactor, "load-factor", 1, "with --trace: arrival scaling (above 1 replicates pods, below 1 thins)")
	fl.BoolVar(&f.dag, "dag", false, "with --trace: batch tasks wait for the tasks they depend on")
	fl.StringVar(&f.warmStart, "warm-start", "placement", "with --trace: placement (the containers running at the window's start on their trace machines, as experiments do) or none (they arrive together at its start)")
	fl.DurationVar(&f.grace, "grace", 0, "with --trace: go on this long after the window without arrivals and report unschedulable_after_grace (docs/sim.md); 0: none")
	fl.IntVar(&f.nodes, "nodes", defaultNodes, "cluster size: nodes of the synthetic cluster; with --trace, machines sampled from the trace (0 or not given: all)")
	fl.IntVar(&f.pods, "pods", 0, "synthetic only: pods in the workload (0: 250 per node)")
	fl.Float64Var(&f.load, "load", 1.0, "synthetic only: offered memory load (1 = the cluster's memory)")
	fl.Uint64Var(&f.seed, "seed", 1, "seed of the workload, the simulator and the schedulers")
	fl.BoolVar(&f.autoscale, "autoscale", false, "enable the cluster autoscaler (template: the first node's shape)")
	fl.IntVar(&f.maxNodes, "max-nodes", 0, "with --autoscale: the autoscaler's upper bound (0: twice the initial nodes)")
}

// stderrOf writes to the command's error stream as it is when written to.
type stderrOf struct{ cmd *cobra.Command }

func (w stderrOf) Write(p []byte) (int, error) { return w.cmd.ErrOrStderr().Write(p) }

// noticesToStderr sends the flag parser's notices (deprecated flags) to the
// error stream: cobra prints them on the output stream, amid JSON lines.
func noticesToStderr(cmd *cobra.Command) { cmd.Flags().SetOutput(stderrOf{cmd}) }

// check validates the flags (fl says which were given) and refuses sizes
// that need more memory than there is, before anything big is allocated.
// It resolves --nodes with --trace (from --machines, or 0 for all) and the
// window. Errors in the command line are usage errors; a size too big for
// the memory wraps memlimit.ErrTooBig.
func (f *workloadFlags) check(fl *pflag.FlagSet) error {
	for _, name := range syntheticOnly {
		if f.trace != "" && fl.Changed(name) {
			return usagef("--%s applies to the synthetic workload only, not with --trace", name)
		}
	}
	for _, name := range traceOnly {
		if f.trace == "" && fl.Changed(name) {
			return usagef("--%s applies with --trace only (the synthetic workload does not use it)", name)
		}
	}
	if fl.Changed("max-nodes") && !f.autoscale {
		return usagef("--max-nodes applies with --autoscale only")
	}
	if f.maxNodes < 0 {
		return usagef("--max-nodes %d: must not be negative", f.maxNodes)
	}
	if f.trace != "" {
		if err := f.checkTrace(fl); err != nil {
			return err
		}
		f.checked = true
		return nil
	}
	switch {
	case f.nodes <= 0:
		return usagef("--nodes %d: must be positive", f.nodes)
	case f.pods < 0:
		return usagef("--pods %d: must not be negative", f.pods)
	}
	what := []string{fmt.Sprintf("--nodes %d", f.nodes)}
	pods := uint64(f.pods)
	if f.pods > 0 {
		what = append(what, fmt.Sprintf("--pods %d", f.pods))
	} else {
		pods = satMul(uint64(f.nodes), uint64(sim.DefaultSyntheticOptions(1).Pods))
	}
	if err := f.checkMemory(fl, what, uint64(f.nodes), pods); err != nil {
		return err
	}
	f.checked = true
	return nil
}

// checkTrace is check with --trace.
func (f *workloadFlags) checkTrace(fl *pflag.FlagSet) error {
	if fl.Changed("machines") {
		if fl.Changed("nodes") && f.nodes != f.machines {
			return usagef("--machines %d and --nodes %d: --machines is the old name of --nodes, give one", f.machines, f.nodes)
		}
		f.nodes = f.machines
	} else if !fl.Changed("nodes") {
		f.nodes = 0
	}
	switch {
	case f.nodes < 0:
		return usagef("--nodes %d: must not be negative (0: all the trace's machines)", f.nodes)
	case !(f.loadFactor > 0) || math.IsInf(f.loadFactor, 0):
		return usagef("--load-factor %v: must be positive", f.loadFactor)
	case f.warmStart != "placement" && f.warmStart != "none":
		return usagef("--warm-start %q: want placement or none", f.warmStart)
	case f.grace < 0:
		return usagef("--grace %v: must not be negative", f.grace)
	}
	// a folder without a valid manifest is not a trace: a failure (1),
	// not a usage error
	m, err := dataset.ReadManifest(f.trace)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("--trace %s: %w: no %s (make one with kubesim convert or kubesim data)", f.trace, dataset.ErrNotTrace, dataset.ManifestFile)
	}
	if err != nil {
		return fmt.Errorf("--trace %s: %w", f.trace, err)
	}
	win, err := dataset.ResolveWindow(f.trace, f.window)
	if err != nil {
		return usagef("--window %s: %w", f.window, err)
	}
	f.win = win
	nodes, pods := m.EstimateSize(win, f.nodes, f.loadFactor)
	what := []string{"--trace " + f.trace, "--window " + f.window}
	if f.nodes > 0 {
		what = append(what, fmt.Sprintf("--nodes %d", f.nodes))
	}
	if fl.Changed("load-factor") {
		what = append(what, fmt.Sprintf("--load-factor %g", f.loadFactor))
	}
	return f.checkMemory(fl, what, nodes, pods)
}

// checkMemory checks that replaying pods pods on nodes nodes (more under the
// autoscaler) fits in memory; what are the flags that set the size.
func (f *workloadFlags) checkMemory(fl *pflag.FlagSet, what []string, nodes, pods uint64) error {
	peak := nodes
	if f.autoscale {
		peak = satMul(nodes, 2)
		if f.maxNodes > 0 {
			peak = max(nodes, uint64(f.maxNodes))
		}
		if fl.Changed("max-nodes") {
			what = append(what, fmt.Sprintf("--max-nodes %d", f.maxNodes))
		}
	}
	size := fmt.Sprintf("%d pods", pods)
	if peak != uint64(f.nodes) {
		size = fmt.Sprintf("%d nodes, %s", peak, size)
	}
	desc := fmt.Sprintf("%s (%s)", strings.Join(what, " "), size)
	return memoryLimit().Check(desc, memlimit.Estimate(peak, pods))
}

// satMul is a*b, or math.MaxUint64 when that overflows.
func satMul(a, b uint64) uint64 {
	if a != 0 && b > math.MaxUint64/a {
		return math.MaxUint64
	}
	return a * b
}

// build returns the workload and simulator configuration the flags
// describe; check must have passed.
func (f *workloadFlags) build(ctx context.Context) (*sim.Workload, sim.Config, error) {
	if !f.checked {
		return nil, sim.Config{}, errors.New("workload flags used before they were checked")
	}
	if f.trace != "" {
		return f.buildTrace(ctx)
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
	cfg.Grace = sim.Time(f.grace / time.Millisecond)
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
func (f *workloadFlags) buildTrace(ctx context.Context) (*sim.Workload, sim.Config, error) {
	t := sweep.Trace{Dir: f.trace, LoadFactor: f.loadFactor, DAG: f.dag, WarmStart: f.warmStart}
	w, err := dataset.LoadContext(ctx, f.trace, t.LoadOptions(f.win, f.nodes, f.seed))
	if err != nil {
		return nil, sim.Config{}, err
	}
	cfg := f.simConfig(w)
	if err := cfg.Validate(); err != nil {
		return nil, sim.Config{}, usageError{err}
	}
	return w, cfg, nil
}
