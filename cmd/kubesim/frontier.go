package main

import (
	"github.com/spf13/cobra"

	"github.com/kubesim/kubesim/sweep"
)

func newSweepFrontierCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "frontier FILE.yaml DIR",
		Short: "The oracle frontier of admission rules against each cell's best heuristic (round 5)",
		Long: `Frontier reads the cells.csv of DIR, the output of "kubesim sweep FILE.yaml", and prints one
Markdown row per cell (grid point and size): the heuristic with the fewest pods left pending over the
cell's workloads (the reference; never a size cap or admission rule), its count, and the fewest pods
a pending set could have on each workload, summed, while it keeps the reference's high-priority
censored p95 and holds at least the reference's pending memory (M), 0.9 M, or the least memory any
scheduler of the sweep left pending there; and the largest factor f on M at which that oracle still
reaches 0.9 times the reference's count. The workloads are loaded again from FILE.yaml's trace.
It is the frontier table of results/admission-round5/README.md (sim.AdmissionOracle says what the
oracle ignores).`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usagef("give the experiment file and its sweep output, FILE.yaml DIR (%d given)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			spec, err := sweep.ReadSpec(args[0])
			if err != nil {
				return err
			}
			rows, err := sweep.Frontier(cmd.Context(), spec, args[1])
			if err != nil {
				return err
			}
			return sweep.WriteFrontier(cmd.OutOrStdout(), rows)
		},
	}
}
