package main

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/kubesim/kubesim/ppo"
	"github.com/kubesim/kubesim/sweep"
)

func newTrainCmd() *cobra.Command {
	var (
		config, out, resume string
		steps               int64
		verbose             bool
	)
	cmd := &cobra.Command{
		Use:   "train",
		Short: "Train a placement policy with PPO",
		Long: `Train the GNN + pointer policy with PPO on the environment that the config file
describes (sections: trace, windows, cluster, reward, ppo, eval; unknown keys are errors). The run folder
gets monitor.csv, progress.csv, TensorBoard event files, config.json, last.ckpt, best.ckpt (best greedy
evaluation on the validation windows; the test windows are never read) and learning_curve.png. Ctrl-C stops after saving last.ckpt;
--resume continues from a checkpoint.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if config == "" || out == "" {
				return usagef("--config and --out are required")
			}
			spec, err := sweep.ReadSpec(config)
			if err != nil {
				return usageError{err}
			}
			if steps > 0 {
				spec.PPO.TotalTimesteps = steps
				if err := spec.Validate(); err != nil {
					return usageError{err}
				}
			}
			src, valSrc, err := spec.Sources()
			if err != nil {
				return usageError{err}
			}
			opts := ppo.Options{Out: out, Resume: resume}
			if term.IsTerminal(int(os.Stderr.Fd())) {
				opts.Progress = os.Stderr
			}
			if verbose {
				opts.Verbose = cmd.OutOrStdout()
			}
			tr, err := ppo.New(spec.PPO, spec.EnvConfig(), src, valSrc, opts)
			if err != nil {
				return err
			}
			slog.Info("training", "config", config, "out", out, "updates", spec.PPO.Updates,
				"rollout", spec.PPO.RolloutSize, "params", tr.Policy().NumParams())
			sum, err := tr.Train(cmd.Context())
			if err != nil {
				return err
			}
			state := "finished"
			if sum.Interrupted {
				state = "interrupted (last.ckpt saved)"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "training %s: %d steps, %d updates in %s; best eval reward %.4g; outputs in %s\n",
				state, sum.Steps, sum.Updates, sum.Elapsed.Round(1e9), sum.BestEvalReward, out)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&config, "config", "", "training config (YAML)")
	fl.StringVar(&out, "out", "", "run folder, e.g. runs/NAME")
	fl.StringVar(&resume, "resume", "", "checkpoint to continue from")
	fl.Int64Var(&steps, "steps", 0, "override ppo.total_timesteps")
	fl.BoolVar(&verbose, "verbose", false, "print SB3's table after every update")
	return cmd
}
