package sweep

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"

	"github.com/kubesim/kubesim/dataset"
	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

// Scheduler makes a fresh placement policy for one replay (policies keep
// per-run state, so each replay gets its own). New gets the case's
// evaluation seed, for policies that draw random numbers; the others
// ignore it.
type Scheduler struct {
	Name string
	New  func(seed uint64) (sim.Scheduler, error)
}

// Case is one evaluation workload: a cluster size, an evaluation seed and a
// trace window (or a synthetic workload of that seed). Every scheduler
// replays the same cases: the comparison is paired.
type Case struct {
	Nodes    int
	Seed     uint64
	Workload string
	// Regime is a suite window's regime (RegimeBurst or RegimeCalm); ""
	// outside a suite.
	Regime string
	// window and dir are a suite case's trace window and folder.
	window dataset.Window
	dir    string
	// load makes the workload and its simulator configuration; cases load
	// lazily, so that a big experiment holds only the workloads being
	// replayed.
	load func() (*sim.Workload, sim.Config, error)
}

// NewCase makes a case of workload w replayed under cfg.
func NewCase(w *sim.Workload, cfg sim.Config) Case {
	return Case{Nodes: len(w.Nodes), Seed: cfg.Seed, Workload: w.Name,
		load: func() (*sim.Workload, sim.Config, error) { return w, cfg, nil }}
}

// Row is one replay of a case by one scheduler.
type Row struct {
	Nodes    int    `json:"nodes"`
	Seed     uint64 `json:"seed"`
	Workload string `json:"workload"`
	// Regime is the suite window's regime; "" outside a suite.
	Regime string      `json:"regime,omitempty"`
	Result *sim.Result `json:"result"`
	// Needed is, in mode: compaction, the fewest nodes that ran the
	// workload (sampled on Nodes machines) within the threshold; Result is
	// the replay at that size and Search the binary search's probes.
	Needed int           `json:"nodes_needed,omitempty"`
	Search *CompactTrace `json:"search,omitempty"`
	// Cell is the hash of the evaluation cell the row belongs to, as
	// stored in the cell's file (checked when the file is read again).
	Cell string `json:"cell,omitempty"`
}

// Cases lists the evaluation workloads of a spec: for each size in
// eval.nodes and each of eval.seeds seeds (first, first+1, ...), each test
// window of the trace sampled on that many machines under that seed, or
// one synthetic workload of that many nodes per seed (seeds disjoint from
// training's). windows are the test windows (nil without a trace).
func Cases(s *Spec, windows []dataset.Window, first uint64) ([]Case, error) {
	ec := s.EnvConfig()
	if s.Trace != nil && len(windows) == 0 {
		return nil, fmt.Errorf("evaluation: no test windows")
	}
	var cases []Case
	for _, n := range s.Eval.Nodes {
		for k := range s.Eval.Seeds {
			seed := first + uint64(k)
			if s.Trace != nil {
				for _, win := range windows {
					cases = append(cases, traceCase(ec, s.Trace.Dir, s.Trace.LoadOptions(win, n, seed), win.Name))
				}
				continue
			}
			sd := evalSeed + seed
			cases = append(cases, Case{Nodes: n, Seed: seed, Workload: fmt.Sprintf("synthetic-%d", seed), load: func() (*sim.Workload, sim.Config, error) {
				w, err := ec.Workload.Episode(rand.New(rand.NewPCG(sd, 0)), n)
				if err != nil {
					return nil, sim.Config{}, fmt.Errorf("evaluation workload of %d nodes, seed %d: %w", n, seed, err)
				}
				return w, ec.WorkloadConfig(w, n, sd), nil
			}})
		}
	}
	return cases, nil
}

// traceCase is the case of one trace window: opts (from
// Trace.LoadOptions, which sets the window, machines and seed) loaded from
// dir and replayed under the episode configuration of ec.
func traceCase(ec env.Config, dir string, opts dataset.LoadOptions, workload string) Case {
	n, seed, win := opts.Machines, opts.Seed, opts.Window
	return Case{Nodes: n, Seed: seed, Workload: workload, load: func() (*sim.Workload, sim.Config, error) {
		w, err := dataset.Load(dir, opts)
		if err != nil {
			return nil, sim.Config{}, fmt.Errorf("evaluation workload %s %v on %d machines, seed %d: %w", dir, win, n, seed, err)
		}
		return w, ec.EpisodeConfig(w, seed), nil
	}}
}

// evalSeed offsets synthetic evaluation workloads from training's seeds.
const evalSeed = 1 << 61

// Replay runs every case under every scheduler and returns the rows in
// (case, scheduler) order. Cases run in parallel on the available cores;
// each case's workload is loaded once and replayed by every scheduler.
func Replay(ctx context.Context, cases []Case, scheds []Scheduler) ([]Row, error) {
	return ReplayProgress(ctx, cases, scheds, nil)
}

// ReplayProgress is Replay with a callback after each replay, for progress
// bars; it is called from several goroutines. After the first error, or
// once ctx is done, no new case starts.
func ReplayProgress(ctx context.Context, cases []Case, scheds []Scheduler, done func(Row)) ([]Row, error) {
	rows := make([]Row, len(cases)*len(scheds))
	err := parallel(ctx, runtime.GOMAXPROCS(0), len(cases), func(ci int) error {
		out, err := replayCase(ctx, cases[ci], scheds, false, done)
		copy(rows[ci*len(scheds):], out)
		return err
	})
	if err != nil {
		return nil, err
	}
	return rows, nil
}

// replayCase loads a case's workload once and replays it under every
// scheduler, in order, then with bounds its fluid relaxation (row
// FluidBound) and, when the cluster has a fixed capacity, its admission
// bound (row AdmissionBound, a Result holding only Unschedulable and the
// pod counts): sim.PackingBound when no replay of the case evicted a pod,
// else the pooled sim.AdmissionBound. done, when not nil, is called after
// each replay.
func replayCase(ctx context.Context, c Case, scheds []Scheduler, bounds bool, done func(Row)) ([]Row, error) {
	w, cfg, err := c.load()
	if err != nil {
		return nil, err
	}
	rows := make([]Row, 0, len(scheds))
	for _, sc := range scheds {
		s, err := sc.New(c.Seed)
		if err != nil {
			return nil, err
		}
		r, err := sim.Run(ctx, w, cfg, s)
		if err != nil {
			return nil, fmt.Errorf("%s on %s (%d nodes, seed %d): %w", sc.Name, c.Workload, c.Nodes, c.Seed, err)
		}
		r.Scheduler = sc.Name
		row := Row{Nodes: c.Nodes, Seed: c.Seed, Workload: c.Workload, Regime: c.Regime, Result: r}
		rows = append(rows, row)
		if done != nil {
			done(row)
		}
	}
	if bounds {
		fw, err := sim.Fluid(w)
		if err != nil {
			return nil, err
		}
		// on one node every scheduler decides alike: first fit is the cheapest
		r, err := sim.Run(ctx, fw, sim.FluidConfig(cfg), sched.NewFirstFit())
		if err != nil {
			return nil, fmt.Errorf("fluid relaxation of %s (%d nodes, seed %d): %w", c.Workload, c.Nodes, c.Seed, err)
		}
		r.Scheduler = FluidBound
		row := Row{Nodes: c.Nodes, Seed: c.Seed, Workload: c.Workload, Regime: c.Regime, Result: r}
		rows = append(rows, row)
		if done != nil {
			done(row)
		}
		// the per-node bound holds for runs without evictions (a warm
		// service evicted would free its node); with any, the pooled one
		boundOf := sim.PackingBound
		for _, r := range rows[:len(scheds)] {
			if r.Result.Evictions > 0 {
				boundOf = sim.AdmissionBound
			}
		}
		bound, ok, err := boundOf(w, cfg)
		if err != nil {
			return nil, fmt.Errorf("admission bound of %s (%d nodes, seed %d): %w", c.Workload, c.Nodes, c.Seed, err)
		}
		if ok {
			br := &sim.Result{Scheduler: AdmissionBound, Pods: r.Pods, Unschedulable: bound}
			row := Row{Nodes: c.Nodes, Seed: c.Seed, Workload: c.Workload, Regime: c.Regime, Result: br}
			rows = append(rows, row)
			if done != nil {
				done(row)
			}
		}
	}
	return rows, nil
}
