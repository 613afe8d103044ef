package main

import (
	"fmt"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/kubesim/kubesim/dataset"
)

func newConvertCmd() *cobra.Command {
	var (
		in, out     string
		compression string
		strict      bool
		batchRows   int
	)
	cmd := &cobra.Command{
		Use:   "convert --in DIR --out DIR",
		Short: "Convert the Alibaba cluster-trace-v2018 CSV tables (or an openb GPU trace) to Arrow",
		Long: `Convert reads the trace tables found in --in (machine_meta, machine_usage,
container_meta, container_usage, batch_task, batch_instance; as .csv, .csv.gz
or the published .tar.gz) and writes one Arrow IPC stream per table to --out,
plus manifest.json. Memory stays bounded whatever the input size. Malformed
rows are counted and reported with file and line; --strict makes the first
one an error. Ends with a summary per table.

A folder with one openb_node_list_*.csv and one openb_pod_list_*.csv
(Alibaba's GPU traces used by FGD) becomes an openb trace instead
(openb_nodes.arrow, openb_pods.arrow, manifest.json); any malformed row is
an error naming file, line and column (docs/gpu.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts := dataset.ConvertOptions{Strict: strict, Compression: compression, BatchRows: batchRows}
			if batchRows < 0 {
				return usagef("--batch-rows %d: must be positive", batchRows)
			}
			switch compression {
			case "none", "lz4", "zstd":
			default:
				return usagef("--compression %q: want none, lz4 or zstd", compression)
			}
			var bar *progressbar.ProgressBar
			if onTerminal(os.Stderr) {
				bar = progressbar.NewOptions64(-1,
					progressbar.OptionSetWriter(os.Stderr),
					progressbar.OptionSetDescription("converting"),
					progressbar.OptionShowBytes(true),
					progressbar.OptionThrottle(100*time.Millisecond),
					progressbar.OptionClearOnFinish())
				opts.Progress = func(done, total int64) {
					if bar.GetMax64() != total {
						bar.ChangeMax64(total)
					}
					bar.Set64(done)
				}
			}
			sum, err := dataset.Convert(cmd.Context(), in, out, opts)
			if bar != nil {
				bar.Finish()
			}
			if err != nil {
				return err
			}
			fmt.Fprint(cmd.OutOrStdout(), sum)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&in, "in", "", "directory holding the trace CSV tables")
	f.StringVar(&out, "out", "", "directory to write the Arrow tables and manifest.json to")
	f.BoolVar(&strict, "strict", false, "fail on the first malformed row instead of counting it")
	f.StringVar(&compression, "compression", "none", "Arrow buffer compression: none, lz4 or zstd")
	f.IntVar(&batchRows, "batch-rows", 1<<16, "rows per Arrow record batch (memory grows with it)")
	cmd.MarkFlagRequired("in")
	cmd.MarkFlagRequired("out")
	return cmd
}

// onTerminal reports whether f is a character device (a terminal), where a
// progress bar makes sense.
func onTerminal(f *os.File) bool {
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}
