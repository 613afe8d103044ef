// Command kubesim is the command line of the kubesim project: replay
// workloads under scheduling heuristics, convert and synthesise traces, train
// and evaluate learned policies. It is thin: every command parses flags and
// calls the packages that do the work.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/kubesim/kubesim/internal/memlimit"
)

// usageError marks errors in the command line itself (unknown names,
// impossible values); they exit with status 2, sizes too big for the memory
// (memlimit.ErrTooBig) with 3, other failures with 1.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "kubesim",
		Short: "Learned Kubernetes scheduling in a fast trace-driven cluster simulator",
		Long: `Learned Kubernetes scheduling in a fast trace-driven cluster simulator.

Exit status: 0 on success, 1 on failures, 2 for usage errors, 3 when a size needs more
memory than this machine has, 130 when interrupted (SIGINT, SIGTERM).`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newReplayCmd(), newEvalCmd(), newTrainCmd(), newSynthCmd(), newConvertCmd(), newDataCmd(), newFidelityCmd(), newServeCmd())
	root.AddCommand(newSweepCmd())
	return root
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// ExitInterrupted is the exit status of a command stopped by SIGINT or
// SIGTERM (128 + SIGINT's number, as shells report a Ctrl-C), so that
// `kubesim train ... && kubesim eval ...` stops after a Ctrl-C.
const ExitInterrupted = 130

// run executes the command line args and returns the exit status: 0, 1 for
// failures, 2 for usage errors (bad flags, unknown names, impossible values),
// 3 for sizes that need more memory than there is (memlimit.ErrTooBig), 130
// when ctx was cancelled (a signal) and the command stopped for it.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	slog.SetDefault(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo})))
	root := newRootCmd()
	root.SetArgs(args)
	out := &checkedWriter{w: stdout}
	root.SetOut(out)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil && out.err != nil {
		// a summary that did not reach stdout (a full disk, /dev/full, a
		// closed pipe) is a failure, not a success
		err = fmt.Errorf("writing the output: %w", out.err)
	}
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "kubesim:", err)
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return ExitInterrupted
	}
	if errors.Is(err, memlimit.ErrTooBig) {
		return 3
	}
	var u usageError
	if errors.As(err, &u) || strings.HasPrefix(err.Error(), "unknown command") ||
		strings.HasPrefix(err.Error(), "required flag") || strings.Contains(err.Error(), "accepts 0 arg") {
		return 2
	}
	return 1
}

// checkedWriter remembers the first error of the writes through it, so
// that a command whose output could not be written does not exit 0.
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}
