package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/kubesim/kubesim/agent"
	"github.com/kubesim/kubesim/dataset"
	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/model"
	"github.com/kubesim/kubesim/ppo"
	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
	"github.com/kubesim/kubesim/sweep"
)

// runOpenbSweeps runs the files when they are experiment files of mode
// openb (FGD's experiment, sweep.RunOpenb) and reports done; files of
// other modes are left to the general sweep. Mixing the two, or sharding
// an openb file, is a usage error.
func runOpenbSweeps(cmd *cobra.Command, files []string, out string, jobs int, progress io.Writer, sharded bool, reuse string) (done bool, err error) {
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return false, usageError{fmt.Errorf("reading spec: %w", err)}
		}
		if sweep.IsOpenbSpec(data) {
			n++
		}
	}
	switch {
	case n == 0:
		return false, nil
	case n != len(files):
		return true, usagef("mode: %s files run on their own, not with other experiment files", sweep.ModeOpenb)
	case sharded:
		return true, usagef("mode: %s files do not take --shard or --emit-k8s-job", sweep.ModeOpenb)
	}
	for _, f := range files {
		s, err := sweep.ReadOpenbSpec(f)
		if err != nil {
			return true, usageError{err}
		}
		o := out
		if o == "" {
			o = filepath.Join("results", s.Name)
		}
		res, err := sweep.RunOpenb(cmd.Context(), s, sweep.OpenbOptions{Out: o, Jobs: jobs, Summary: cmd.OutOrStdout(), Progress: progress, ReuseCode: reuse})
		if err != nil {
			return true, fmt.Errorf("%s: %w", f, err)
		}
		from := fmt.Sprintf("%d cells from %s/cells", res.Cached, o)
		if reuse != "" {
			from += fmt.Sprintf(", %d of them revision %s's", res.Reused, reuse)
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "sweep %s: %d runs in %s (%s); outputs in %s\n", s.Name, len(res.Runs), res.Elapsed.Round(1e7), from, o)
	}
	return true, nil
}

// gpuSchedulerNames checks the flags of replay or eval on an openb trace
// and returns the GPU schedulers --scheduler names.
func gpuSchedulerNames(cmd *cobra.Command, f replayFlags) ([]string, error) {
	for _, name := range append(append([]string{"nodes", "autoscale", "max-nodes", "samples"}, traceOnly...), syntheticOnly...) {
		if cmd.Flags().Changed(name) {
			return nil, usagef("--%s does not apply to an openb trace", name)
		}
	}
	if f.inflate < 0 || f.inflate > 10 || math.IsNaN(f.inflate) {
		return nil, usagef("--inflate %g: want 0 (none) to 10", f.inflate)
	}
	names := sched.GPUNames()
	if f.scheduler != "all" {
		if _, err := sched.NewGPU(f.scheduler, 0); err != nil {
			return nil, usageError{err}
		}
		names = []string{f.scheduler}
	}
	return names, nil
}

// runReplayGPU is replay on an openb trace: flags map to sweep.ReplayGPU.
func runReplayGPU(ctx context.Context, cmd *cobra.Command, f replayFlags) error {
	names, err := gpuSchedulerNames(cmd, f)
	if err != nil {
		return err
	}
	w, res, err := replayOpenb(ctx, f, names)
	if err != nil {
		return err
	}
	return printGPUResults(cmd, w, f, res)
}

// replayOpenb loads the openb trace of f and replays it under the
// heuristics names (sweep.ReplayGPU with f's inflation and seed).
func replayOpenb(ctx context.Context, f replayFlags, names []string) (*sim.GPUWorkload, []sim.GPUResult, error) {
	w, err := loadOpenb(f)
	if err != nil {
		return nil, nil, err
	}
	res, err := sweep.ReplayGPU(ctx, w, names, f.inflate, f.seed, runtime.NumCPU())
	if err != nil {
		return nil, nil, err
	}
	return w, res, nil
}

// loadOpenb loads f's openb trace, with --scarce-model's model made scarce
// (env.ScarceModelNamed, pinned in an order drawn from --seed).
func loadOpenb(f replayFlags) (*sim.GPUWorkload, error) {
	w, err := dataset.LoadOpenb(f.trace)
	if err != nil || f.scarceModel == "" {
		return w, err
	}
	sw, s, err := env.ScarceModelNamed(w, f.seed, f.scarceModel, f.scarceF)
	if err != nil {
		return nil, usageError{err}
	}
	slog.Info("scarce model", "model", f.scarceModel, "f", s.F, "pods_pinned", s.Pods, "gpus_pinned", float64(s.PinnedMilli)/sim.GPUMilli, "model_gpus", s.ModelGPUs)
	sw.Name = fmt.Sprintf("%s[%s scarce x%g]", w.Name, f.scarceModel, f.scarceF)
	return sw, nil
}

// runEvalGPU is eval on an openb trace: the heuristics as replay runs them
// and the GPU policy of the checkpoint (agent.EvaluateGPU) on the same
// arrivals, as the row "ppo".
func runEvalGPU(ctx context.Context, cmd *cobra.Command, f replayFlags, checkpoint string) error {
	names, err := gpuSchedulerNames(cmd, f)
	if err != nil {
		return err
	}
	pol, ec, err := agent.LoadGPU(checkpoint)
	if err != nil {
		return err
	}
	w, res, err := replayOpenb(ctx, f, names)
	if err != nil {
		return err
	}
	r, err := agent.EvaluateGPU(ctx, pol, ec, w, f.inflate, f.seed, "ppo")
	if err != nil {
		return err
	}
	return printGPUResults(cmd, w, f, append(res, r))
}

// runDiagnoseGPU is eval --by-model on an openb trace: agent.DiagnoseGPU
// of FGD (the checkpoint's selection policy) and of the policy on the same
// arrivals, as a table or JSON lines.
func runDiagnoseGPU(ctx context.Context, cmd *cobra.Command, f replayFlags, checkpoint string) error {
	if cmd.Flags().Changed("scheduler") {
		return usagef("--scheduler does not apply with --by-model (the rows are the selection policy and the checkpoint's)")
	}
	if _, err := gpuSchedulerNames(cmd, f); err != nil {
		return err
	}
	pol, ec, err := agent.LoadGPU(checkpoint)
	if err != nil {
		return err
	}
	w, err := loadOpenb(f)
	if err != nil {
		return err
	}
	var ds []agent.GPUDiag
	for _, p := range []*model.Policy{nil, pol} {
		name := "ppo"
		if p == nil {
			name = ec.Select
		}
		d, err := agent.DiagnoseGPU(ctx, p, ec, w, f.inflate, f.seed, name)
		if err != nil {
			return err
		}
		ds = append(ds, d)
	}
	out := cmd.OutOrStdout()
	if f.json {
		enc := json.NewEncoder(out)
		for _, d := range ds {
			if err := enc.Encode(d); err != nil {
				return err
			}
		}
		return nil
	}
	fmt.Fprintf(out, "workload %s: %d pods, %d nodes, %d GPUs; inflated to %.2fx, seed %d\n", w.Name, len(w.Pods), len(w.Nodes), w.GPUCapacity(), f.inflate, f.seed)
	return agent.WriteGPUDiags(out, ds)
}

// printGPUResults prints replay's or eval's results on an openb trace: JSON
// lines with --json, else a table.
func printGPUResults(cmd *cobra.Command, w *sim.GPUWorkload, f replayFlags, res []sim.GPUResult) error {
	out := cmd.OutOrStdout()
	if f.json {
		return sweep.WriteGPUJSONLines(out, res)
	}
	fmt.Fprintf(out, "workload %s: %d pods, %d nodes, %d GPUs; inflated to %.2fx, seed %d\n", w.Name, len(w.Pods), len(w.Nodes), w.GPUCapacity(), f.inflate, f.seed)
	return sweep.WriteGPUTable(out, res)
}

// runTrainGPU is train with a gpu-train file: ppo.TrainGPU on the file's
// openb workload, or ppo.TrainGPUES when the file has an es section.
func runTrainGPU(cmd *cobra.Command, config, out, resume string, steps int64, force bool) error {
	spec, err := sweep.ReadGPUTrainSpec(config)
	if err != nil {
		return usageError{err}
	}
	switch {
	case steps != 0 && spec.ES != nil:
		return usagef("--steps does not apply to an es: run (es.generations sets its length)")
	case steps < 0:
		return usagef("--steps %d: must be positive", steps)
	case steps > 0:
		spec.PPO.TotalTimesteps = steps
		if err := spec.PPO.Validate(); err != nil {
			return usageError{err}
		}
	}
	if force && resume != "" {
		return usagef("--force and --resume: give one (--resume continues the run folder, --force replaces it)")
	}
	w, err := spec.Workload()
	if err != nil {
		return err
	}
	opts := spec.Options(out, resume)
	opts.Force = force
	var sum ppo.GPUSummary
	what := "gpu training " + spec.Name + ": %d steps, %d updates"
	if spec.ES != nil {
		sum, err = ppo.TrainGPUES(cmd.Context(), *spec.ES, spec.PPO, spec.Env, w, opts)
		what = "gpu es " + spec.Name + ": %d decisions, %d generations"
	} else {
		sum, err = ppo.TrainGPU(cmd.Context(), spec.PPO, spec.Env, w, opts)
	}
	if err != nil {
		return err
	}
	score := "allocation at 100% arrived"
	if spec.Objective == ppo.ObjectiveCurve {
		score = "mean allocation over 50-130% arrived"
	}
	fmt.Fprintf(cmd.OutOrStdout(), what+" in %s; best validation %s %.2f (%s: %.2f); outputs in %s\n",
		sum.Steps, sum.Updates, sum.Elapsed.Round(1e9), score, sum.BestVal, spec.Env.Select, sum.SelectVal, out)
	if sum.Interrupted {
		return fmt.Errorf("training interrupted: %w (continue with --resume %s)", context.Canceled, filepath.Join(out, ppo.LastCheckpoint))
	}
	return nil
}
