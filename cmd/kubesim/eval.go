package main

import (
	"github.com/spf13/cobra"

	"github.com/kubesim/kubesim/agent"
	"github.com/kubesim/kubesim/dataset"
	"github.com/kubesim/kubesim/sim"
	"github.com/kubesim/kubesim/sweep"
)

func newEvalCmd() *cobra.Command {
	var (
		f          replayFlags
		checkpoint string
		byModel    bool
	)
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Compare a trained policy with the heuristics on one workload",
		Long: `Replay one workload under the heuristics and under the learned policy of a checkpoint
(greedy, masked by kube-scheduler's filters, exactly like a heuristic) and print the same table or JSON
lines as replay, with the policy as the row "ppo". The workload flags are replay's: --nodes is
the cluster size with and without --trace.

With --trace of a converted openb GPU trace and the checkpoint of a GPU policy (agent.LoadGPU; a
CPU/memory checkpoint is refused, naming the feature widths), it runs FGD's experiment as replay
does (--inflate, --seed) and adds the policy's run on the same arrivals as the row "ppo", with the
same gpu_alloc_curve and gpu_frag_curve under --json. With --by-model it prints instead where FGD and
the policy stand when the arrived GPU demand first reaches the capacity (agent.DiagnoseGPU): each GPU
model's allocation and idle devices, the GPU pods failed so far by the models they allow, and how many
of the policy's decisions left FGD's node (JSON objects under --json). --scarce-model M makes the node
model M scarce before the runs, as a training draw can (env.ScarceModel: unconstrained GPU pods pinned
to M until by 100% arrived they ask --scarce-f x its GPUs, in an order drawn from --seed).` + exitStatuses,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if checkpoint == "" {
				return usagef("--checkpoint is required")
			}
			if f.trace != "" && dataset.IsOpenb(f.trace) {
				if byModel {
					return runDiagnoseGPU(cmd.Context(), cmd, f, checkpoint)
				}
				return runEvalGPU(cmd.Context(), cmd, f, checkpoint)
			}
			if byModel || f.scarceModel != "" {
				return usagef("--by-model and --scarce-model apply with an openb --trace only")
			}
			names, err := f.checkCPU(cmd)
			if err != nil {
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
	fl.Float64Var(&f.inflate, "inflate", 1.3, "with an openb --trace: arrived GPU demand as a multiple of the GPU capacity (0: the pod list as it is)")
	fl.BoolVar(&byModel, "by-model", false, "with an openb --trace: per GPU model and model constraint, where FGD and the policy stand at 100% arrived")
	fl.StringVar(&f.scarceModel, "scarce-model", "", "with an openb --trace: make this GPU model (T4, G2, ...) scarce before the runs")
	fl.Float64Var(&f.scarceF, "scarce-f", 1.2, "with --scarce-model: pinned pods ask this factor x the model's GPUs by 100% arrived")
	f.register(fl)
	noticesToStderr(cmd)
	return cmd
}
