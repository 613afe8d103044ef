package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubesim/kubesim/dataset"
	"github.com/kubesim/kubesim/internal/atomicfile"
	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
	"github.com/kubesim/kubesim/sweep"
)

// replayFlags are the options of `kubesim replay`.
type replayFlags struct {
	workloadFlags
	scheduler string
	json      bool
	samples   string
	inflate   float64
	// scarceModel and scarceF (eval on an openb trace): the node model made
	// scarce at that factor before the runs (env.ScarceModelNamed)
	scarceModel string
	scarceF     float64
}

func newReplayCmd() *cobra.Command {
	var f replayFlags
	cmd := &cobra.Command{
		Use:   "replay",
		Short: "Replay a workload under scheduling heuristics and print the metrics",
		Long: `Replay a workload under one heuristic scheduler, or under every one with
--scheduler all, and print a table of the metrics (or JSON lines with --json). All schedulers
see the same workload and the same simulator seed.

The workload is the built-in synthetic one (--nodes, --pods, --load), or with --trace a window
of a converted trace (--window, --load-factor, --dag) on --nodes machines sampled from it (all
without --nodes). Flags of the other mode are usage errors.

With --trace of a converted openb GPU trace (convert, docs/gpu.md) it runs FGD's experiment
instead: the pods shuffled by --seed and inflated to --inflate x the GPU capacity, never leaving,
under the GPU policies (random, dot-product, gpu-clustering, gpu-packing, best-fit, fgd,
kube-default); --json prints per scheduler gpu_alloc_curve and gpu_frag_curve, 131 numbers each
in percent at arrived workload 0..130%.` + exitStatuses,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runReplay(cmd.Context(), cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.scheduler, "scheduler", "all", "scheduler name, or all")
	fl.BoolVar(&f.json, "json", false, "print one JSON object per scheduler, one per line")
	fl.StringVar(&f.samples, "samples", "", "also write every scheduler's metric time series to this CSV file")
	fl.Float64Var(&f.inflate, "inflate", 1.3, "with an openb --trace: arrived GPU demand as a multiple of the GPU capacity (0: the pod list as it is)")
	f.register(fl)
	noticesToStderr(cmd)
	return cmd
}

// checkCPU checks the flags of a replay or evaluation on a CPU/memory
// trace and returns the schedulers named by --scheduler.
func (f *replayFlags) checkCPU(cmd *cobra.Command) ([]string, error) {
	if cmd.Flags().Changed("inflate") {
		return nil, usagef("--inflate applies with an openb --trace only")
	}
	names, err := schedulerNames(f.scheduler)
	if err != nil {
		return nil, err
	}
	if err := f.check(cmd.Flags()); err != nil {
		return nil, err
	}
	if err := checkOutputFile("--samples", f.samples); err != nil {
		return nil, err
	}
	return names, nil
}

func runReplay(ctx context.Context, cmd *cobra.Command, f replayFlags) error {
	if f.trace != "" && dataset.IsOpenb(f.trace) {
		return runReplayGPU(ctx, cmd, f)
	}
	names, err := f.checkCPU(cmd)
	if err != nil {
		return err
	}
	w, cfg, err := f.build(ctx)
	if err != nil {
		return err
	}
	results, err := replayAll(ctx, w, cfg, schedulerFactories(names))
	if err != nil {
		return err
	}
	if err := writeSamples(f.samples, results); err != nil {
		return err
	}
	return printResults(cmd, w, cfg, f.json, results)
}

// writeSamples writes every result's metric time series to path (the
// --samples flag; "" writes nothing), atomically.
func writeSamples(path string, results []*sim.Result) error {
	if path == "" {
		return nil
	}
	return atomicfile.Write(path, func(out io.Writer) error { return sweep.WriteSamplesCSV(out, results) })
}

// checkOutputFile fails before any work when path (a flag's value; ""
// means not given) cannot be written as a file: a folder, or in a folder
// that does not exist.
func checkOutputFile(flag, path string) error {
	if path == "" {
		return nil
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return usagef("%s %s: is a folder, want a file name", flag, path)
	}
	// a symbolic link is written through to its target (internal/atomicfile)
	target, err := atomicfile.Resolve(path)
	if err != nil {
		return usagef("%s %s: %v", flag, path, err)
	}
	if fi, err := os.Stat(filepath.Dir(target)); err != nil || !fi.IsDir() {
		return usagef("%s %s: folder %s does not exist", flag, path, filepath.Dir(target))
	}
	return nil
}

// printResults writes the comparison as a table or JSON lines.
func printResults(cmd *cobra.Command, w *sim.Workload, cfg sim.Config, asJSON bool, results []*sim.Result) error {
	out := cmd.OutOrStdout()
	if asJSON {
		return sweep.WriteJSONLines(out, results)
	}
	fmt.Fprintf(out, "workload %s: %d pods, %d nodes\n", w.Name, len(w.Pods), len(w.Nodes))
	return sweep.WriteTable(out, results, sweep.MetricsFor(cfg.Grace > 0))
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

// schedulerFactories returns fresh-scheduler factories for registry names,
// seeded with the replay's seed (--seed, which the simulator uses too).
func schedulerFactories(names []string) []sweep.Scheduler {
	fs := make([]sweep.Scheduler, len(names))
	for i, name := range names {
		fs[i] = sweep.Scheduler{Name: name, New: func(seed uint64) (sim.Scheduler, error) { return sched.New(name, seed) }}
	}
	return fs
}

// replayAll replays w under each scheduler, in parallel on the available
// cores; results come back in the order of the factories.
func replayAll(ctx context.Context, w *sim.Workload, cfg sim.Config, fs []sweep.Scheduler) ([]*sim.Result, error) {
	start := time.Now()
	rows, err := sweep.Replay(ctx, []sweep.Case{sweep.NewCase(w, cfg)}, fs)
	if err != nil {
		return nil, err
	}
	results := make([]*sim.Result, len(rows))
	for i, r := range rows {
		results[i] = r.Result
	}
	slog.Info("replayed", "workload", w.Name, "pods", len(w.Pods), "schedulers", len(fs), "elapsed", time.Since(start).Round(time.Millisecond))
	return results, nil
}
