// Command kubesim is the command line of the kubesim project: replay
// workloads under scheduling heuristics, convert and synthesise traces, train
// and evaluate learned policies. It is thin: every command parses flags and
// calls the packages that do the work.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// usageError marks errors in the command line itself (unknown names,
// impossible values); they exit with status 2, other failures with 1.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "kubesim",
		Short:         "Learned Kubernetes scheduling in a fast trace-driven cluster simulator",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newReplayCmd(), newEvalCmd(), newTrainCmd(), newSynthCmd(), newConvertCmd(), newDataCmd())
	return root
}

func main() {
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := newRootCmd().ExecuteContext(ctx)
	if err == nil {
		return
	}
	fmt.Fprintln(os.Stderr, "kubesim:", err)
	var u usageError
	if errors.As(err, &u) {
		os.Exit(2)
	}
	os.Exit(1)
}
