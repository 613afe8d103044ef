package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/kubesim/kubesim/sweep"
)

// runOpenbSweeps runs the files when they are experiment files of mode
// openb (FGD's experiment, sweep.RunOpenb) and reports done; files of
// other modes are left to the general sweep. Mixing the two, or sharding
// an openb file, is a usage error.
func runOpenbSweeps(cmd *cobra.Command, files []string, out string, jobs int, sharded bool) (done bool, err error) {
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return false, usageError{fmt.Errorf("reading spec: %w", err)}
		}
		if sweep.IsOpenbSpec(data) {
			n++
		}
	}
	switch {
	case n == 0:
		return false, nil
	case n != len(files):
		return true, usagef("mode: %s files run on their own, not with other experiment files", sweep.ModeOpenb)
	case sharded:
		return true, usagef("mode: %s files do not take --shard or --emit-k8s-job", sweep.ModeOpenb)
	}
	for _, f := range files {
		s, err := sweep.ReadOpenbSpec(f)
		if err != nil {
			return true, usageError{err}
		}
		o := out
		if o == "" {
			o = filepath.Join("results", s.Name)
		}
		res, err := sweep.RunOpenb(cmd.Context(), s, sweep.OpenbOptions{Out: o, Jobs: jobs, Summary: cmd.OutOrStdout()})
		if err != nil {
			return true, fmt.Errorf("%s: %w", f, err)
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "sweep %s: %d runs in %s; outputs in %s\n", s.Name, len(res.Runs), res.Elapsed.Round(1e7), o)
	}
	return true, nil
}
