package main

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

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
already there and its checksums match; a folder holding another trace, an older default, or a corrupt
one, is regenerated. The folder is replaced as a whole and locked while written (see convert).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := dataset.EnsureDefault(cmd.Context(), out); err != nil {
				return err
			}
			// EnsureDefault checks file sizes only: a file corrupted in place
			// would be "ready". Verify the checksums, and make the trace again
			// (without the stamp EnsureDefault regenerates it) when they fail.
			if err := dataset.Verify(out); err != nil {
				slog.Warn("the default trace is corrupt: making it again", "dir", out, "err", err)
				if err := os.Remove(filepath.Join(out, dataset.DefaultStampFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return err
				}
				if err := dataset.EnsureDefault(cmd.Context(), out); err != nil {
					return err
				}
				if err := dataset.Verify(out); err != nil {
					return fmt.Errorf("default trace made again, still not valid: %w", err)
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "default trace ready in %s\n", out)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", out, "directory of the converted trace")
	return cmd
}
