package main

import (
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/kubesim/kubesim/sweep"
)

func newExperimentCmd() *cobra.Command {
	var (
		config, checkpoint, out string
		seed                    uint64
		asJSON                  bool
	)
	cmd := &cobra.Command{
		Use:   "experiment",
		Short: "Evaluate heuristics (and a trained policy) at every cluster size of an experiment file",
		Long: `Experiment reads an experiment file (the same sections as train) and replays its held-out
workloads: each test window of the trace at each size of eval.nodes, under each of eval.seeds seeds
(the machine sample, replication jitter, simulator noise and the random heuristic's draws), or one
synthetic workload per size and seed. Every scheduler of eval.schedulers, and with --checkpoint the
learned policy (row "ppo"), replays the same workloads. It prints one table per size: each focused metric
as the mean and 95% confidence interval over seeds, then the difference against the best heuristic,
paired by seed. Sizes outside the training range (cluster.min_nodes..max_nodes) are marked. With --out
it also writes results.jsonl and results.csv (one line per replay, every metric) and tables.txt there.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if config == "" {
				return usagef("--config is required")
			}
			spec, err := sweep.ReadSpec(config)
			if err != nil {
				return usageError{err}
			}
			opts := sweep.Options{Checkpoint: checkpoint, Seed: seed}
			if term.IsTerminal(int(os.Stderr.Fd())) {
				opts.Progress = os.Stderr
			}
			rep, err := sweep.Run(cmd.Context(), spec, opts)
			if err != nil {
				return err
			}
			if asJSON {
				err = rep.WriteJSONLines(cmd.OutOrStdout())
			} else {
				err = rep.WriteSummary(cmd.OutOrStdout())
			}
			if err != nil || out == "" {
				return err
			}
			return rep.WriteFiles(out)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&config, "config", "", "experiment file (YAML)")
	fl.StringVar(&checkpoint, "checkpoint", "", "trained policy to evaluate beside the heuristics")
	fl.StringVar(&out, "out", "", "folder for results.jsonl, results.csv and tables.txt")
	fl.Uint64Var(&seed, "seed", 1, "first evaluation seed (eval.seeds seeds from it)")
	fl.BoolVar(&asJSON, "json", false, "print one JSON line per replay instead of tables")
	return cmd
}
