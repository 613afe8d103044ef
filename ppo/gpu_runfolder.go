package ppo

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/internal/atomicdir"
	"github.com/kubesim/kubesim/model"
	"github.com/kubesim/kubesim/sim"
)

// openRunFolder locks out for a run of TrainGPU, TrainGPUES or TrainES (a
// second run into it fails naming the first one's pid) and creates it; a
// fresh run (no resume) into a folder with history is ErrRunExists unless
// force, and resume with force is ErrConfig. The caller unlocks.
func openRunFolder(out, resume string, force bool) (*atomicdir.Locked, error) {
	if resume != "" && force {
		return nil, fmt.Errorf("%w: resume and force: give one (resume continues the run folder, force replaces it)", ErrConfig)
	}
	lock, err := atomicdir.Lock(out)
	if err != nil {
		return nil, fmt.Errorf("run folder: %w", err)
	}
	if resume == "" && !force {
		if h := runHistory(out); len(h) > 0 {
			lock.Unlock()
			return nil, fmt.Errorf("%w: %s holds %s: continue it with --resume %s, or replace it with --force",
				ErrRunExists, out, strings.Join(h, ", "), filepath.Join(out, LastCheckpoint))
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		lock.Unlock()
		return nil, fmt.Errorf("creating run folder %s: %w", out, err)
	}
	return lock, nil
}

// gpuValidator scores a GPU policy on the validation episodes, logs it
// beside the selection policy's score (computed once, into sum.SelectVal)
// and saves best.ckpt when it is strictly the best so far (*best).
type gpuValidator struct {
	ec   env.GPUConfig
	w    *sim.GPUWorkload
	opts GPUOptions
	logs *runLogs
	sum  *GPUSummary
	best *float64
	save func(path string, upd int64) error // a checkpoint of the policy after upd updates
}

// run validates pol after update upd (steps so far); validateGPU's errors,
// context.Canceled included, are returned as they are.
func (v *gpuValidator) run(ctx context.Context, pol *model.Policy, upd, steps int64) (float64, error) {
	val, err := validateGPU(ctx, pol, v.ec, v.w, v.opts)
	if err != nil {
		return math.NaN(), err
	}
	if math.IsNaN(v.sum.SelectVal) {
		if v.sum.SelectVal, err = selectValGPU(v.ec, v.w, v.opts); err != nil {
			return val, err
		}
	}
	if err := v.logs.validation(upd, steps, val, v.sum.SelectVal); err != nil {
		return val, err
	}
	if val > *v.best {
		*v.best = val
		return val, v.save(filepath.Join(v.opts.Out, BestCheckpoint), upd)
	}
	return val, nil
}
