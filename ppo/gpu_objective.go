package ppo

import (
	"fmt"
	"math"

	"github.com/kubesim/kubesim/sim"
)

// The objectives of GPU training (GPUOptions.Objective): what evolution
// strategies' fitness and validation read from an episode's allocation
// curve. PPO's reward is the GPUs each step allocates either way.
const (
	// ObjectiveAlloc100 ("" too) is the GPU allocation at 100% arrived
	// (alloc100), the level issue 27's bar names.
	ObjectiveAlloc100 = "alloc100"
	// ObjectiveCurve is the mean of the allocation curve over arrived
	// CurveFrom-130%: a policy ahead at 100% and behind before it
	// (docs/gpu.md, "Buying the 100% point") does not score as ahead.
	ObjectiveCurve = "curve"
)

// CurveFrom is ObjectiveCurve's first arrived level, in %: below it every
// policy of FGD's experiment places nearly every pod of the default list.
const CurveFrom = 50

// checkObjective reports an objective GPUOptions does not know.
func checkObjective(obj string) error {
	switch obj {
	case "", ObjectiveAlloc100, ObjectiveCurve:
		return nil
	}
	return fmt.Errorf("%w: objective %q: want %s or %s", ErrConfig, obj, ObjectiveAlloc100, ObjectiveCurve)
}

// objectiveValue is obj's score of a run: alloc100 (the end's allocation
// where the curve has no value near 100%), or the mean of the curve's
// values over CurveFrom-130% (the end's allocation when it has none).
func objectiveValue(obj string, r sim.GPUResult) float64 {
	if obj == ObjectiveCurve {
		var s float64
		n := 0
		for k := CurveFrom; k < len(r.AllocCurve); k++ {
			if v := r.AllocCurve[k]; !math.IsNaN(v) {
				s += v
				n++
			}
		}
		if n == 0 {
			return r.AllocPct
		}
		return s / float64(n)
	}
	if v := alloc100(r.AllocCurve); !math.IsNaN(v) {
		return v
	}
	return r.AllocPct
}

// metaGPUObjective is the checkpoint metadata key of a GPU run's
// objective (objectiveName); a checkpoint without it is alloc100's.
const metaGPUObjective = "ppo/objective"

// objectiveName is obj with "" spelled out.
func objectiveName(obj string) string {
	if obj == "" {
		return ObjectiveAlloc100
	}
	return obj
}

// checkResumedObjective refuses to resume a run under another objective
// than its checkpoint's: the best score so far, and so best.ckpt, would
// compare scores of two kinds.
func checkResumedObjective(path string, meta map[string]string, obj string) error {
	was := ObjectiveAlloc100
	if v, ok := meta[metaGPUObjective]; ok {
		was = v
	}
	if was != objectiveName(obj) {
		return fmt.Errorf("%w: resuming from %s: it was trained with objective %s, the config asks for %s", ErrConfig, path, was, objectiveName(obj))
	}
	return nil
}

// gpuValHeaderFor is validation.csv's header in a GPU run of objective
// obj: the score columns say what they hold (val_alloc100 and
// select_alloc100, or val_curve and select_curve).
func gpuValHeaderFor(obj string) []string {
	if obj == ObjectiveCurve {
		return []string{"update", "steps", "val_curve", "select_curve"}
	}
	return gpuValHeader
}
