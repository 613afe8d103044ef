package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/kubesim/kubesim/sweep"
)

func newSweepCmd() *cobra.Command {
	var (
		out, shard, reuse string
		jobs              int
		emit              bool
		job               = sweep.JobOptions{Shards: 4, Image: "ghcr.io/kubesim/kubesim:latest", Claim: "kubesim-work", MountPath: "/work"}
	)
	cmd := &cobra.Command{
		Use:   "sweep FILE.yaml...",
		Short: "Run experiment sweeps: grids of specs, trained and evaluated, cached and resumable",
		Long: `Sweep expands each experiment file's grid (keys are dotted paths into the spec, values their
cartesian product), trains one policy per distinct training configuration and seed (or evaluates
eval.checkpoint, or the heuristics only with eval.train: false), and replays every evaluation cell
(size, load, window, evaluation seed) under every heuristic and the learned policy, on --jobs workers.
Every finished cell is kept under a content hash of its settings, the code revision and the data
manifest, so an interrupted sweep resumes and a repeated one does no work.

It writes results/NAME/ (NAME the spec's name; --out for a single file): cells.csv (one row per
cell, scheduler and seed, every metric), summary.md (the tables, also printed), spec.yaml (the spec
as expanded, with the build and the data manifest hash), and the cells/ and train/ folders of the
cache. With --shard i/n it runs the i-th of n parts and writes the cells only; "kubesim sweep merge"
combines the parts. --emit-k8s-job prints a Kubernetes Indexed Job instead of running: one pod per
shard (--k8s-shards), each running its shard on a shared volume. docs/sweep.md has the details.`,
		Args: atLeastOne("FILE.yaml"),
		RunE: func(cmd *cobra.Command, files []string) error {
			if out != "" && len(files) > 1 {
				return usagef("--out applies to one file; %d given (each goes to results/NAME)", len(files))
			}
			if jobs < 1 {
				return usagef("--jobs %d: must be positive", jobs)
			}
			opts := sweep.SweepOptions{Jobs: jobs}
			if shard != "" {
				if _, err := fmt.Sscanf(shard, "%d/%d", &opts.Shard, &opts.Shards); err != nil ||
					opts.Shards < 1 || opts.Shard < 0 || opts.Shard >= opts.Shards || fmt.Sprintf("%d/%d", opts.Shard, opts.Shards) != shard {
					return usagef("--shard %q: want i/n with 0 <= i < n", shard)
				}
			}
			if term.IsTerminal(int(os.Stderr.Fd())) {
				opts.Progress = os.Stderr
			}
			if done, err := runOpenbSweeps(cmd, files, out, jobs, opts.Progress, shard != "" || emit, reuse); done || err != nil {
				return err
			}
			if reuse != "" {
				return usagef("--reuse-cells applies to mode: %s files only", sweep.ModeOpenb)
			}
			specs := make([]*sweep.Spec, len(files))
			for i, f := range files {
				s, err := sweep.ReadSpec(f)
				if err != nil {
					return usageError{err}
				}
				specs[i] = s
			}
			if emit {
				if shard != "" {
					return usagef("--emit-k8s-job and --shard: the Job gives each pod its shard")
				}
				job.Files, job.Out = files, out
				if cmd.Flags().Changed("jobs") {
					job.Jobs = jobs
				}
				if job.Name == "" {
					job.Name = "sweep-" + strings.ToLower(strings.ReplaceAll(specs[0].Name, "_", "-"))
				}
				if err := sweep.WriteK8sJob(cmd.OutOrStdout(), job); err != nil {
					return usageError{err}
				}
				return nil
			}
			for i, s := range specs {
				o := opts
				o.Out = out
				if o.Out == "" {
					o.Out = filepath.Join("results", s.Name)
				}
				if o.Shards <= 1 {
					o.Summary = cmd.OutOrStdout()
				}
				res, err := sweep.Sweep(cmd.Context(), s, o)
				if err != nil {
					return fmt.Errorf("%s: %w", files[i], err)
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "sweep %s: %d training and %d evaluation cells run, %d cached; outputs in %s\n",
					s.Name, res.Trained, res.Evaluated, res.Cached, o.Out)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&out, "out", "", "output folder (default results/NAME, NAME the spec's name)")
	fl.IntVar(&jobs, "jobs", runtime.NumCPU(), "cells run at once")
	fl.StringVar(&reuse, "reuse-cells", "", "mode: openb only: also take cached cells that this code revision ran (the full commit hash, git rev-parse; a modified tree's adds +hash), to rewrite the tables without running again; the summary names it")
	fl.StringVar(&shard, "shard", "", "run part i of n (i/n, from 0); merge the parts with kubesim sweep merge")
	fl.BoolVar(&emit, "emit-k8s-job", false, "print a Kubernetes Indexed Job that runs the sweep's shards, instead of running it")
	fl.IntVar(&job.Shards, "k8s-shards", job.Shards, "with --emit-k8s-job: shards (pods)")
	fl.IntVar(&job.Parallelism, "k8s-parallelism", 0, "with --emit-k8s-job: pods at once (default all)")
	fl.StringVar(&job.Name, "k8s-name", "", "with --emit-k8s-job: the Job's name (default sweep-NAME)")
	fl.StringVar(&job.Image, "k8s-image", job.Image, "with --emit-k8s-job: image with kubesim on its PATH")
	fl.StringVar(&job.Claim, "k8s-claim", job.Claim, "with --emit-k8s-job: PersistentVolumeClaim holding the specs, data and results")
	fl.StringVar(&job.MountPath, "k8s-mount", job.MountPath, "with --emit-k8s-job: where the volume is mounted (the pods' working directory)")
	fl.StringVar(&job.CPU, "k8s-cpu", "", "with --emit-k8s-job: CPU per pod (request and limit)")
	fl.StringVar(&job.Memory, "k8s-memory", "", "with --emit-k8s-job: memory per pod (request and limit)")
	cmd.AddCommand(newSweepMergeCmd(), newSweepCompareCmd(), newSweepFrontierCmd())
	return cmd
}

func newSweepMergeCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "merge DIR...",
		Short: "Combine the output folders of a sweep's shards and write its tables",
		Long: `Merge checks that the folders ran the same plan (spec and code revision), gathers their
cells and writes cells.csv, summary.md (also printed), spec.yaml and the cells into --out (default:
the first folder, which suits shards that share one folder). A cell missing from every folder is an
error naming it.`,
		Args: atLeastOne("DIR"),
		RunE: func(cmd *cobra.Command, dirs []string) error {
			if out == "" {
				out = dirs[0]
			}
			return sweep.Merge(dirs, out, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "output folder (default: the first DIR)")
	return cmd
}

// atLeastOne wants one argument or more, a usage error otherwise.
func atLeastOne(what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) == 0 {
			return usagef("give at least one %s", what)
		}
		return nil
	}
}
