package sweep

import (
	"fmt"
	"slices"

	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/sim"
)

// OpenbMix shifts every cell's pod list toward one pod class before its
// arrivals are drawn: each pod is replaced, with probability Share, by a
// pod of Class drawn from the list's own pods of that class
// (env.MixWorkload, its draw seeded by the cell's seed). It is the
// training's mix shift (env.mix_rate) as an evaluation: a list's own pods
// in other proportions, for diagnostics on validation seeds of the
// training list, where the held-out lists may not be looked at.
type OpenbMix struct {
	// Class is the raised pod class: cpu, share, one or multi
	// (env.MixClassNames).
	Class string `yaml:"class"`
	// Share is the probability that a pod is replaced, in (0, 1].
	Share float64 `yaml:"share"`
}

// validate checks the mix; errors name the key.
func (m *OpenbMix) validate() error {
	if m == nil {
		return nil
	}
	if m.class() < 0 {
		return fmt.Errorf("mix.class = %q: want one of %v", m.Class, env.MixClassNames)
	}
	if !(m.Share > 0 && m.Share <= 1) {
		return fmt.Errorf("mix.share = %g: want a probability in (0, 1]", m.Share)
	}
	return nil
}

// class is Class's index in env.MixClassNames, or -1.
func (m *OpenbMix) class() int { return slices.Index(env.MixClassNames[:], m.Class) }

// apply returns w shifted for the cell of seed (w itself without a mix).
func (m *OpenbMix) apply(w *sim.GPUWorkload, seed uint64) *sim.GPUWorkload {
	if m == nil {
		return w
	}
	return env.MixWorkload(w, m.class(), m.Share, seed)
}

// describe is the summary's sentence on the mix ("" without one).
func (m *OpenbMix) describe() string {
	if m == nil {
		return ""
	}
	return fmt.Sprintf(" Every pod list is shifted toward its own %s pods: each pod is replaced with probability %g by one of them, drawn per seed (env.MixWorkload); the rows are not the published lists.", m.Class, m.Share)
}
