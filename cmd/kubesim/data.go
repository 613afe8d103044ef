package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubesim/kubesim/dataset"
)

// defaultTrace is where `make run` keeps the default data.
const defaultTrace = "data/default-trace"

func newDataCmd() *cobra.Command {
	out := defaultTrace
	cmd := &cobra.Command{
		Use:   "data",
		Short: "Make sure the default trace exists (synthesise and convert it when absent)",
		Long: `Data makes sure --out holds a converted trace: when it has none, it generates the
synthetic default trace (400 machines, 2 days, calibrated to the Alibaba v2018 facts) and converts it
to Arrow (35 MB, one to two seconds). Nothing is downloaded. It does nothing when the default trace is
already there; a folder holding another trace, or an older default, is regenerated.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := dataset.EnsureDefault(cmd.Context(), out); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "default trace ready in %s\n", out)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", out, "directory of the converted trace")
	return cmd
}
