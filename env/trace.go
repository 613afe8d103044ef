package env

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/kubesim/kubesim/dataset"
	"github.com/kubesim/kubesim/sim"
)

// Trace is a Source of episodes cut from a converted trace (dataset.Load):
// each episode replays one of Windows, drawn at random, on as many machines
// as the episode's initial node count, sampled under a seed drawn from the
// episode's stream, and at one of LoadFactors (drawn from the same stream)
// when there are any. It is safe for concurrent use.
type Trace struct {
	Dir     string
	Windows []dataset.Window
	// LoadFactors, when not empty, replace Options.LoadFactor: each episode
	// draws one of them.
	LoadFactors []float64
	// Options are the loader's options; Window, Machines and Seed are set
	// per episode.
	Options dataset.LoadOptions
}

var errNoWindows = errors.New("trace source has no windows")

// Episode loads a window of the trace on nodes machines.
func (t Trace) Episode(r *rand.Rand, nodes int) (*sim.Workload, error) {
	if len(t.Windows) == 0 {
		return nil, errNoWindows
	}
	o := t.Options
	o.Window = t.Windows[r.IntN(len(t.Windows))]
	o.Machines = nodes
	o.Seed = r.Uint64()
	if len(t.LoadFactors) > 0 {
		o.LoadFactor = t.LoadFactors[r.IntN(len(t.LoadFactors))]
	}
	w, err := dataset.Load(t.Dir, o)
	if err != nil {
		return nil, fmt.Errorf("trace episode from %s, window %v, load factor %g: %w", t.Dir, o.Window, o.LoadFactor, err)
	}
	return w, nil
}
