package main

import (
	"github.com/spf13/cobra"

	"github.com/kubesim/kubesim/sweep"
)

func newSweepCompareCmd() *cobra.Command {
	var sched, against, metric, whereA, whereB string
	var family int
	cmd := &cobra.Command{
		Use:   "compare A B",
		Short: "Paired difference of a metric between two sweep outputs that replayed the same cells",
		Long: `Compare reads the cells.csv of two sweep outputs (folders or files) that replayed the same grid
points, sizes, evaluation seeds and workloads, and prints, per cell and in total, the mean of
--metric for --scheduler in A and --against in B (default: the same scheduler) with the paired
difference A - B and its 95% interval over evaluation seeds. It is the validation rule's margin
(docs/ppo.md): a candidate checkpoint replaces the shipped one only when the total difference
excludes zero. A can equal B to compare two schedulers of one sweep, or, with --where-a and
--where-b (key=value of a grid setting, such as eval.checkpoint=... or ppo.seed=2), two of its grid
points. With --family K (K candidates judged by one rule) the difference's interval is the
Bonferroni interval at 1 - 0.05/K.

An openb output (a folder with curves.csv, or the file) pairs by pod list and seed instead; its
--metric is a curve read at one arrived level or averaged over a range of levels, such as
gpu_alloc@100 (the default there) or gpu_alloc@50-130, and the last row is the mean over pod lists. For gpu_alloc the
table adds the share of B's unallocated GPUs that A allocates (issue 27's measure):
  kubesim sweep compare results/gpu-es-r13-eval results/gpu-es-r13-eval --scheduler r13-s14 --against fgd --metric gpu_alloc@100`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usagef("give two sweep outputs, A and B (%d given)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if against == "" {
				against = sched
			}
			if !cmd.Flags().Changed("metric") && sweep.IsOpenbOutput(args[0]) {
				metric = sweep.DefaultOpenbMetric
			}
			a := sweep.Side{Path: args[0], Scheduler: sched, Where: whereA}
			b := sweep.Side{Path: args[1], Scheduler: against, Where: whereB}
			if family < 1 {
				return usagef("--family %d: give the number of comparisons judged together, at least 1", family)
			}
			rows, err := sweep.Compare(a, b, metric)
			if err != nil {
				return err
			}
			return sweep.WriteComparison(cmd.OutOrStdout(), a, b, metric, rows, family)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&sched, "scheduler", "ppo", "scheduler whose rows of A count")
	fl.StringVar(&against, "against", "", "scheduler whose rows of B count (default --scheduler)")
	fl.StringVar(&metric, "metric", "unschedulable", "a column of cells.csv; for an openb output CURVE@LEVEL or CURVE@LO-HI, gpu_alloc@100 when not given")
	fl.StringVar(&whereA, "where-a", "", "key=value: only A's rows of that grid point")
	fl.StringVar(&whereB, "where-b", "", "key=value: only B's rows of that grid point")
	fl.IntVar(&family, "family", 1, "comparisons judged together (candidates of one rule): Bonferroni interval at 1 - 0.05/K")
	return cmd
}
