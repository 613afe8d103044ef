package main

import (
	"fmt"
	"math"

	"github.com/spf13/cobra"

	"github.com/kubesim/kubesim/dataset"
)

func newSynthCmd() *cobra.Command {
	d := dataset.DefaultSynthOptions()
	opts := d
	var out string
	cmd := &cobra.Command{
		Use:   "synth --machines N --days D --seed S --out DIR",
		Short: "Generate a synthetic trace in the cluster-trace-v2018 CSV schema",
		Long: `Synth writes the six trace tables (no header, columns as in the trace's
schema.txt) to --out, calibrated to the real Alibaba v2018 figures
(docs/dataset.md): 96-core machines, memory the scarce resource at about 91%,
a daily CPU cycle, batch DAG jobs with the real sizes, depths, fan-in, task
durations, plan_mem shares and heavy-tailed instance counts, arriving in
bursts (whole jobs, big tasks); online containers in app groups that stop and
are replaced; rare maintenance, machines joining during the trace, overlapping
failure domains. --machines counts the machines in service at the start (3.6%
more join later). The same flags give the same bytes. Convert the result with
'kubesim convert'; check it with 'kubesim fidelity'.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case opts.Machines < 1:
				return usagef("--machines %d: must be positive", opts.Machines)
			case !(opts.Days >= 1.0/24) || math.IsInf(opts.Days, 0):
				return usagef("--days %v: must be at least 1/24 (one hour)", opts.Days)
			case opts.BatchConcurrency < 0:
				return usagef("--batch-concurrency %v: must not be negative", opts.BatchConcurrency)
			}
			if err := dataset.Synth(cmd.Context(), opts, out); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote a synthetic trace of %d machines over %g days (seed %d) to %s\n",
				opts.Machines, opts.Days, opts.Seed, out)
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&opts.Machines, "machines", d.Machines, "number of machines")
	f.Float64Var(&opts.Days, "days", d.Days, "trace length in days")
	f.Uint64Var(&opts.Seed, "seed", d.Seed, "random seed")
	f.Float64Var(&opts.BatchConcurrency, "batch-concurrency", d.BatchConcurrency,
		"mean batch instances running per machine (sets the batch job rate; the real trace runs dozens)")
	f.Int64Var(&opts.MachineUsageStep, "machine-usage-step", d.MachineUsageStep, "machine_usage sampling period, seconds")
	f.Int64Var(&opts.ContainerUsageStep, "container-usage-step", d.ContainerUsageStep, "container_usage sampling period, seconds")
	f.StringVar(&out, "out", "", "directory to write the CSV tables to")
	cmd.MarkFlagRequired("out")
	return cmd
}
