package main

import (
	"context"
	"fmt"

	"github.com/kubesim/kubesim/dataset"
	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/sim"
	"github.com/kubesim/kubesim/sweep"
)

// sources returns the training and evaluation episode sources of a spec:
// nil (the synthetic workload of the env config; evaluation on disjoint
// seeds) without a trace, otherwise the trace's train and test windows,
// which must not overlap.
func sources(_ context.Context, s *sweep.Spec) (train, eval env.Source, err error) {
	if s.Trace == nil {
		return nil, nil, nil
	}
	ws, err := windows(s)
	if err != nil {
		return nil, nil, err
	}
	opts := dataset.LoadOptions{LoadFactor: s.Trace.LoadFactor, DAG: s.Trace.DAG, MachineMemMiB: s.Trace.MachineMemMiB}
	return env.Trace{Dir: s.Trace.Dir, Windows: ws.Train, Options: opts}, env.Trace{Dir: s.Trace.Dir, Windows: ws.Test, Options: opts}, nil
}

// windows resolves a spec's train and test windows (the default split of
// the trace when none are named) and refuses overlapping ones.
func windows(s *sweep.Spec) (dataset.Windows, error) {
	dir := s.Trace.Dir
	var ws dataset.Windows
	if s.Windows == nil || (len(s.Windows.Train) == 0 && len(s.Windows.Test) == 0) {
		m, err := dataset.ReadManifest(dir)
		if err != nil {
			return ws, err
		}
		if ws, err = dataset.DefaultWindows(sim.Time(m.Span) * sim.Second); err != nil {
			return ws, err
		}
	} else {
		for _, name := range s.Windows.Train {
			w, err := dataset.ResolveWindow(dir, name)
			if err != nil {
				return ws, usageError{fmt.Errorf("windows.train: %w", err)}
			}
			ws.Train = append(ws.Train, w)
		}
		for _, name := range s.Windows.Test {
			w, err := dataset.ResolveWindow(dir, name)
			if err != nil {
				return ws, usageError{fmt.Errorf("windows.test: %w", err)}
			}
			ws.Test = append(ws.Test, w)
		}
	}
	if err := ws.Validate(); err != nil {
		return ws, usageError{fmt.Errorf("windows: %w", err)}
	}
	return ws, nil
}
