package sweep

import (
	"fmt"

	"github.com/kubesim/kubesim/dataset"
	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/sim"
)

// ResolveWindows returns the spec's train, validation and test windows: the
// named ones, or the trace's default split (dataset.DefaultWindows) when
// none are named. Windows of different splits must not overlap, and with
// warm_start: warmup every window must start at least warm_up_ms into the
// trace. The spec must have a trace section.
func (s *Spec) ResolveWindows() (dataset.Windows, error) {
	var ws dataset.Windows
	if s.Trace == nil {
		return ws, fmt.Errorf("windows: the spec has no trace section")
	}
	if s.Suite != nil {
		return ws, fmt.Errorf("windows: the spec's suite chooses its windows per trace (Suite.EvalWindows)")
	}
	dir := s.Trace.Dir
	if s.Windows == nil || len(s.Windows.Train)+len(s.Windows.Validation)+len(s.Windows.Test) == 0 {
		m, err := dataset.ReadManifest(dir)
		if err != nil {
			return ws, err
		}
		if ws, err = dataset.DefaultWindows(sim.Time(m.Span) * sim.Second); err != nil {
			return ws, fmt.Errorf("windows: default split of %s: %w", dir, err)
		}
	} else {
		sets := []struct {
			key   string
			names []string
			dst   *[]dataset.Window
		}{{"windows.train", s.Windows.Train, &ws.Train}, {"windows.validation", s.Windows.Validation, &ws.Val}, {"windows.test", s.Windows.Test, &ws.Test}}
		for _, set := range sets {
			for i, name := range set.names {
				w, err := dataset.ResolveWindow(dir, name)
				if err != nil {
					return ws, fmt.Errorf("%s[%d]: %w", set.key, i, err)
				}
				*set.dst = append(*set.dst, w)
			}
		}
	}
	if err := ws.Validate(); err != nil {
		return ws, fmt.Errorf("windows: %w", err)
	}
	if s.Trace.WarmStart == WarmUp {
		for _, set := range [][]dataset.Window{ws.Train, ws.Val, ws.Test} {
			for _, w := range set {
				if w.From < s.Trace.WarmUpMs {
					return ws, fmt.Errorf("windows: %s starts before trace.warm_up_ms (%s): warm_start: %s needs that much trace before every window",
						w, s.Trace.WarmUpMs, WarmUp)
				}
			}
		}
	}
	return ws, nil
}

// LoadOptions are the trace loader's options for one workload of the trace
// section: window win (moved back by the warm-up of warm_start: warmup, so
// that the workload holds it) sampled on machines machines under seed. Every
// path from a trace section to a workload builds its options here:
// evaluation cases, the training and validation sources, and the replay and
// eval commands.
func (t *Trace) LoadOptions(win dataset.Window, machines int, seed uint64) dataset.LoadOptions {
	return dataset.LoadOptions{
		Window: extend(win, t.warmUp()), Machines: machines, Seed: seed,
		LoadFactor: t.LoadFactor, DAG: t.DAG, MachineMemMiB: t.MachineMemMiB,
		WarmStart: t.WarmStart == WarmPlacement, WindowStreams: t.WindowStreams,
	}
}

// warmUp is the simulated warm-up before each window (zero unless
// warm_start: warmup).
func (t *Trace) warmUp() sim.Time {
	if t != nil && t.WarmStart == WarmUp {
		return t.WarmUpMs
	}
	return 0
}

// warmUp is the spec's warm-up before each window.
func (s *Spec) warmUp() sim.Time { return s.Trace.warmUp() }

// extend moves a window's start back by the warm-up, so that the workload
// holds the warm-up before the window.
func extend(w dataset.Window, warmUp sim.Time) dataset.Window {
	w.From -= warmUp
	return w
}

// Sources returns the episode sources of training: train draws from the
// training windows and val from the validation windows, which the trainer
// uses for checkpoint selection. The test windows reach neither. Without a
// trace both are nil (the synthetic workload of the environment config;
// the trainer validates on seeds disjoint from training's).
func (s *Spec) Sources() (train, val env.Source, err error) {
	if s.Trace == nil {
		return nil, nil, nil
	}
	if s.Suite != nil {
		if train, err = s.Suite.Source(SplitTrain, s.Trace); err != nil {
			return nil, nil, err
		}
		if val, err = s.Suite.Source(SplitValidation, s.Trace); err != nil {
			return nil, nil, err
		}
		return train, val, nil
	}
	ws, err := s.ResolveWindows()
	if err != nil {
		return nil, nil, err
	}
	mk := func(set []dataset.Window) env.Source {
		out := make([]dataset.Window, len(set))
		for i, w := range set {
			out[i] = s.Trace.LoadOptions(w, 0, 0).Window
		}
		// env.Trace sets each episode's window, machine count, seed and
		// (with train_load_factors) load factor
		return env.Trace{Dir: s.Trace.Dir, Windows: out, LoadFactors: s.Trace.TrainLoadFactors,
			Options: s.Trace.LoadOptions(dataset.Window{}, 0, 0)}
	}
	return mk(ws.Train), mk(ws.Val), nil
}
