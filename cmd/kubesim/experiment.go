package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/kubesim/kubesim/dataset"
	"github.com/kubesim/kubesim/ppo"
	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
	"github.com/kubesim/kubesim/sweep"

	"github.com/kubesim/kubesim/internal/atomicfile"
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
workloads — each test window of the trace sampled on each size of eval.nodes machines, or eval.seeds
synthetic workloads per size — under the heuristics of eval.schedulers and, with --checkpoint, the
learned policy (row "ppo"). It prints one table per size, each metric averaged over the workloads of
that size; sizes outside the training range (cluster.min_nodes..max_nodes) test generalisation. With
--out it also writes results.jsonl (one line per replay) and tables.txt there.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if config == "" {
				return usagef("--config is required")
			}
			spec, err := sweep.ReadSpec(config)
			if err != nil {
				return usageError{err}
			}
			var test []dataset.Window
			if spec.Trace != nil {
				ws, err := windows(spec)
				if err != nil {
					return err
				}
				test = ws.Test
			}
			scheds, err := experimentSchedulers(spec, checkpoint, seed)
			if err != nil {
				return err
			}
			cases, err := sweep.Cases(spec, test, seed)
			if err != nil {
				return err
			}
			rows, err := sweep.Replay(cmd.Context(), cases, scheds)
			if err != nil {
				return err
			}
			var tables, lines bytes.Buffer
			sizes, bySize := sweep.BySize(rows)
			for _, n := range sizes {
				note := ""
				if n < spec.Cluster.MinNodes || n > spec.Cluster.MaxNodes {
					note = ", outside the training range"
				}
				fmt.Fprintf(&tables, "%s: %d nodes (%d workloads%s)\n", spec.Name, n, len(rows)/len(scheds)/len(sizes), note)
				if err := sweep.WriteTable(&tables, bySize[n]); err != nil {
					return err
				}
			}
			enc := json.NewEncoder(&lines)
			for _, r := range rows {
				if err := enc.Encode(r); err != nil {
					return err
				}
			}
			if asJSON {
				_, err = cmd.OutOrStdout().Write(lines.Bytes())
			} else {
				_, err = cmd.OutOrStdout().Write(tables.Bytes())
			}
			if err != nil {
				return err
			}
			if out == "" {
				return nil
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return err
			}
			if err := atomicfile.WriteBytes(filepath.Join(out, "results.jsonl"), lines.Bytes()); err != nil {
				return err
			}
			return atomicfile.WriteBytes(filepath.Join(out, "tables.txt"), tables.Bytes())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&config, "config", "", "experiment file (YAML)")
	fl.StringVar(&checkpoint, "checkpoint", "", "trained policy to evaluate beside the heuristics")
	fl.StringVar(&out, "out", "", "folder for results.jsonl and tables.txt")
	fl.Uint64Var(&seed, "seed", 1, "seed of machine sampling, the simulator and the heuristics")
	fl.BoolVar(&asJSON, "json", false, "print one JSON line per replay instead of tables")
	return cmd
}

// experimentSchedulers lists the heuristics of the spec and the policy.
func experimentSchedulers(spec *sweep.Spec, checkpoint string, seed uint64) ([]sweep.Scheduler, error) {
	var names []string
	for _, n := range spec.Eval.Schedulers {
		got, err := schedulerNames(n)
		if err != nil {
			return nil, err
		}
		names = append(names, got...)
	}
	var out []sweep.Scheduler
	for _, name := range names {
		out = append(out, sweep.Scheduler{Name: name, New: func() (sim.Scheduler, error) { return sched.New(name, seed) }})
	}
	if checkpoint != "" {
		if _, _, err := ppo.LoadPolicy(checkpoint); err != nil {
			return nil, err // fail before any replay starts
		}
		// A Policy keeps scratch buffers, so replays running in parallel
		// each load their own copy.
		out = append(out, sweep.Scheduler{Name: "ppo", New: func() (sim.Scheduler, error) {
			pol, ec, err := ppo.LoadPolicy(checkpoint)
			if err != nil {
				return nil, err
			}
			return ppo.NewScheduler("ppo", pol, ec)
		}})
	}
	if len(out) == 0 {
		return nil, usagef("no schedulers: eval.schedulers is empty and no --checkpoint")
	}
	return out, nil
}
