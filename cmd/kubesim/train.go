package main

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/kubesim/kubesim/ppo"
	"github.com/kubesim/kubesim/sweep"
)

func newTrainCmd() *cobra.Command {
	var (
		config, out, resume string
		steps               int64
		verbose, force      bool
	)
	cmd := &cobra.Command{
		Use:   "train",
		Short: "Train a placement policy with PPO",
		Long: `Train the GNN + pointer policy with PPO on the environment that the config file
describes (sections: trace, windows, cluster, reward, ppo, eval; unknown keys are errors). The run folder
gets monitor.csv, progress.csv, TensorBoard event files, config.json, last.ckpt, best.ckpt (best greedy
evaluation on the validation windows; the test windows are never read; none with ppo.eval_freq 0) and
learning_curve.png. Ctrl-C stops after saving last.ckpt; --resume continues from a checkpoint.

The run folder is locked while training writes it (a second training into it fails, naming the first
one's pid). A folder with history (progress.csv, checkpoints) is continued with --resume or replaced
with --force, never overwritten otherwise; nothing in it changes until the run has started.

A file with mode: gpu-train (experiments/gpu-policy.yaml, docs/gpu.md) trains a GPU policy on an openb
workload instead (ppo.TrainGPU): progress.csv, validation.csv, last.ckpt and best.ckpt in the run folder.

A file with an es section (experiments/suite-es.yaml) searches the same policy's weights with evolution
strategies instead of PPO (ppo.TrainES): progress.csv, validation.csv, last.ckpt and best.ckpt.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if config == "" || out == "" {
				return usagef("--config and --out are required")
			}
			if data, err := os.ReadFile(config); err == nil && sweep.IsGPUTrainSpec(data) {
				return runTrainGPU(cmd, config, out, resume, steps, force)
			}
			spec, err := sweep.ReadSpec(config)
			if err != nil {
				return usageError{err}
			}
			if len(spec.Grid) > 0 {
				return usagef("%s has a grid section: train one configuration per file, or run the grid with kubesim sweep", config)
			}
			if cmd.Flags().Changed("steps") {
				if steps <= 0 {
					return usagef("--steps %d: must be positive", steps)
				}
				spec.PPO.TotalTimesteps = steps
				if err := spec.Validate(); err != nil {
					return usageError{err}
				}
			}
			// the evaluation's schedulers, as experiment checks them, so that
			// a typo fails now and not after hours of training
			if _, err := sweep.Schedulers(spec, ""); err != nil {
				return usageError{fmt.Errorf("%s: %w", config, err)}
			}
			if err := spec.EnsureData(cmd.Context()); err != nil {
				return err
			}
			src, valSrc, err := spec.Sources()
			if err != nil {
				return usageError{err}
			}
			opts := ppo.Options{Out: out, Resume: resume, Force: force}
			if force && resume != "" {
				return usagef("--force and --resume: give one (--resume continues the run folder, --force replaces it)")
			}
			if term.IsTerminal(int(os.Stderr.Fd())) {
				opts.Progress = os.Stderr
			}
			if verbose {
				opts.Verbose = cmd.OutOrStdout()
			}
			var sum ppo.Summary
			if spec.ES != nil {
				slog.Info("training with evolution strategies", "config", config, "out", out, "generations", spec.ES.Generations)
				sum, err = ppo.TrainES(cmd.Context(), *spec.ES, spec.PPO, spec.EnvConfig(), src, valSrc, opts)
			} else {
				var tr *ppo.Trainer
				if tr, err = ppo.New(spec.PPO, spec.EnvConfig(), src, valSrc, opts); err != nil {
					return err
				}
				slog.Info("training", "config", config, "out", out, "updates", spec.PPO.Updates,
					"rollout", spec.PPO.RolloutSize, "params", tr.Policy().NumParams())
				sum, err = tr.Train(cmd.Context())
			}
			if err != nil {
				return err
			}
			state := "finished"
			if sum.Interrupted {
				state = "interrupted (last.ckpt saved)"
			}
			best := fmt.Sprintf("best eval score %.4g (ppo.select: %s)", sum.BestEvalScore, cmp.Or(spec.PPO.Select, ppo.SelectReward))
			if math.IsNaN(sum.BestEvalScore) {
				best = "no evaluation ran, so no best.ckpt (use last.ckpt)"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "training %s: %d steps, %d updates in %s; %s; outputs in %s\n",
				state, sum.Steps, sum.Updates, sum.Elapsed.Round(1e9), best, out)
			if sum.Interrupted {
				// exit 130, not 0: `train && eval` must not go on after a Ctrl-C
				return fmt.Errorf("training interrupted: %w (continue with --resume %s)", context.Canceled, filepath.Join(out, ppo.LastCheckpoint))
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&config, "config", "", "training config (YAML)")
	fl.StringVar(&out, "out", "", "run folder, e.g. runs/NAME")
	fl.StringVar(&resume, "resume", "", "checkpoint to continue from (the run folder's logs continue)")
	fl.BoolVar(&force, "force", false, "replace a run folder that has history (progress.csv, checkpoints); refused without it")
	fl.Int64Var(&steps, "steps", 0, "override ppo.total_timesteps")
	fl.BoolVar(&verbose, "verbose", false, "print SB3's table after every update")
	return cmd
}
