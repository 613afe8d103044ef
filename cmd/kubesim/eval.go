package main

import (
	"github.com/spf13/cobra"

	"github.com/kubesim/kubesim/agent"
	"github.com/kubesim/kubesim/sim"
	"github.com/kubesim/kubesim/sweep"
)

func newEvalCmd() *cobra.Command {
	var (
		f          replayFlags
		checkpoint string
	)
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Compare a trained policy with the heuristics on one workload",
		Long: `Replay one workload under the heuristics and under the learned policy of a checkpoint
(greedy, masked by kube-scheduler's filters, exactly like a heuristic) and print the same table or JSON
lines as replay, with the policy as the row "ppo". The workload flags are replay's: --nodes is
the cluster size with and without --trace.` + exitStatuses,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if checkpoint == "" {
				return usagef("--checkpoint is required")
			}
			names, err := schedulerNames(f.scheduler)
			if err != nil {
				return err
			}
			if err := f.check(cmd.Flags()); err != nil {
				return err
			}
			if err := checkOutputFile("--samples", f.samples); err != nil {
				return err
			}
			pol, ec, err := agent.Load(checkpoint)
			if err != nil {
				return err
			}
			w, cfg, err := f.build(cmd.Context())
			if err != nil {
				return err
			}
			fs := schedulerFactories(names)
			fs = append(fs, sweep.Scheduler{Name: "ppo", New: func(uint64) (sim.Scheduler, error) { return agent.NewScheduler("ppo", pol, ec) }})
			results, err := replayAll(cmd.Context(), w, cfg, fs)
			if err != nil {
				return err
			}
			if err := writeSamples(f.samples, results); err != nil {
				return err
			}
			return printResults(cmd, w, cfg, f.json, results)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&checkpoint, "checkpoint", "", "checkpoint written by train (best.ckpt or last.ckpt)")
	fl.StringVar(&f.scheduler, "scheduler", "all", "heuristics to compare with: a name, or all")
	fl.BoolVar(&f.json, "json", false, "print one JSON object per scheduler, one per line")
	fl.StringVar(&f.samples, "samples", "", "also write every scheduler's and the policy's metric time series to this CSV file")
	f.register(fl)
	noticesToStderr(cmd)
	return cmd
}
