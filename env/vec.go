package env

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
)

// Batch is what VecEnv returns: element i belongs to environment i. It is
// owned by the VecEnv and overwritten by the next Step or Reset.
type Batch struct {
	Obs        []Obs
	Reward     []float64
	Terminated []bool
	Truncated  []bool
	Info       []Info
}

// VecEnv steps K environments in parallel goroutines and resets each one
// automatically when its episode ends, like Stable-Baselines3's vectorised
// environments: on the step that ends an episode, Batch.Obs[i] is already the
// first observation of the next episode, Terminated/Truncated[i] say how the
// last one ended, Info[i].Episode summarises it and Info[i].Final holds its
// last observation (to bootstrap the value of a truncated episode).
//
// Environment i behaves exactly like a single Env reset with seed+i whose
// NextEpisode is called whenever an episode ends, whatever the number of
// goroutines. A VecEnv is not safe for concurrent use.
type VecEnv struct {
	envs    []*Env
	final   []Obs // per environment, the last observation of its last ended episode
	errs    []error
	batch   Batch
	workers int
}

// NewVec returns k environments over one config and one source, which must
// be safe for concurrent use (Synthetic and Fixed are). Call Reset before
// Step. They are stepped by up to GOMAXPROCS goroutines.
func NewVec(cfg Config, src Source, k int) (*VecEnv, error) {
	if k < 1 {
		return nil, fmt.Errorf("%w: vector of %d environments: need at least 1", ErrConfig, k)
	}
	v := &VecEnv{
		envs:    make([]*Env, k),
		final:   make([]Obs, k),
		errs:    make([]error, k),
		workers: min(k, runtime.GOMAXPROCS(0)),
		batch: Batch{
			Obs:        make([]Obs, k),
			Reward:     make([]float64, k),
			Terminated: make([]bool, k),
			Truncated:  make([]bool, k),
			Info:       make([]Info, k),
		},
	}
	for i := range v.envs {
		e, err := New(cfg, src)
		if err != nil {
			return nil, err
		}
		v.envs[i] = e
	}
	return v, nil
}

// Len returns K, the number of environments.
func (v *VecEnv) Len() int { return len(v.envs) }

// Reset resets environment i with seed+i and returns the first observations
// (zero rewards, no episode ended).
func (v *VecEnv) Reset(seed uint64) (*Batch, error) {
	v.parallel(func(i int) error {
		var err error
		b := &v.batch
		b.Obs[i], b.Info[i], err = v.envs[i].Reset(seed + uint64(i))
		b.Reward[i], b.Terminated[i], b.Truncated[i] = 0, false, false
		return err
	})
	if err := v.err("reset"); err != nil {
		return nil, err
	}
	return &v.batch, nil
}

// Step applies actions[i] to environment i, all in parallel, and resets the
// environments whose episode ended. len(actions) must be K.
func (v *VecEnv) Step(actions []int) (*Batch, error) {
	if len(actions) != len(v.envs) {
		return nil, fmt.Errorf("env: %d actions for %d environments", len(actions), len(v.envs))
	}
	v.parallel(func(i int) error {
		e, b := v.envs[i], &v.batch
		obs, r, term, trunc, info := e.Step(actions[i])
		b.Reward[i], b.Terminated[i], b.Truncated[i] = r, term, trunc
		if term || trunc {
			obs.CopyTo(&v.final[i])
			info.Final = &v.final[i]
			next, _, err := e.NextEpisode()
			if err != nil {
				b.Obs[i], b.Info[i] = Obs{}, info
				return err
			}
			obs = next
		}
		b.Obs[i], b.Info[i] = obs, info
		return nil
	})
	if err := v.err("step"); err != nil {
		return nil, err
	}
	return &v.batch, nil
}

// parallel runs f for every environment, environments split into contiguous
// chunks, one per worker goroutine; f's errors land in v.errs.
func (v *VecEnv) parallel(f func(i int) error) {
	k := len(v.envs)
	run := func(w int) {
		for i := w * k / v.workers; i < (w+1)*k/v.workers; i++ {
			v.errs[i] = f(i)
		}
	}
	if v.workers == 1 {
		run(0)
		return
	}
	var wg sync.WaitGroup
	for w := 1; w < v.workers; w++ {
		wg.Go(func() { run(w) })
	}
	run(0)
	wg.Wait()
}

// err joins the errors of the last parallel call, naming the environment.
func (v *VecEnv) err(op string) error {
	var errs []error
	for i, err := range v.errs {
		if err != nil {
			errs = append(errs, fmt.Errorf("env %d: %s: %w", i, op, err))
		}
	}
	return errors.Join(errs...)
}
