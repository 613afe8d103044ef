package main

import (
	"github.com/spf13/cobra"

	"github.com/kubesim/kubesim/dataset"
)

func newFidelityCmd() *cobra.Command {
	var trace, against string
	cmd := &cobra.Command{
		Use:   "fidelity --trace DIR [--against DIR]",
		Short: "Compare a converted trace with the real Alibaba v2018 figures (or with another trace)",
		Long: `Fidelity reads a converted trace (the Arrow files of 'kubesim convert') and prints,
per calibrated property (plan_cpu, plan_mem, instance_num, task duration, tasks per DAG
job, DAG depth, dependencies per task, machines per failure_domain_1, machine_meta rows
per machine), its quantiles beside the targets and the Kolmogorov-Smirnov D, then single
figures: the index of dispersion of instances started per 10 minutes, the share of
non-USING machine_meta rows, machines joining after t=0, memory utilisation and its drift
per day, CPU utilisation of busy machines.

Targets are the real figures of calibration.md, built in: a distribution's D is taken
against the piecewise-linear CDF through its published quantiles (and shares), with a
continuity correction for integer-valued properties. With --against, the targets are
another converted trace's figures and D is the two-sample statistic.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if trace == "" {
				return usagef("--trace is required")
			}
			rep, err := dataset.Fidelity(cmd.Context(), trace, against)
			if err != nil {
				return err
			}
			return rep.Write(cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&trace, "trace", "", "directory of the converted trace to check")
	f.StringVar(&against, "against", "", "directory of a converted trace to compare with instead of the built-in targets")
	return cmd
}
