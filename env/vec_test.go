package env

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kubesim/kubesim/sim"
)

// TestVecMatchesSequential: K environments stepped by a VecEnv with any
// number of worker goroutines give exactly what K separate Envs give when
// env i is reset with seed+i, stepped with the same actions and moved to its
// next episode whenever one ends; the final observation of each ended
// episode is kept in Info.Final.
func TestVecMatchesSequential(t *testing.T) {
	cfg := busyConfig(3)
	cfg.MinNodes, cfg.MaxNodes = 2, 6
	cfg.Workload.PodsPerNode = 15
	cfg.MaxSteps = 60 // some episodes are truncated, the smaller ones terminate
	const k, steps, seed = 5, 300, 40
	for _, workers := range []int{1, 2, 3, k} {
		v, err := NewVec(cfg, nil, k)
		if err != nil {
			t.Fatal(err)
		}
		v.workers = workers
		seq := make([]*Env, k)
		seqObs := make([]Obs, k)
		vr := make([]*rand.Rand, k) // action streams of the VecEnv side
		sr := make([]*rand.Rand, k) // the same streams for the sequential side
		for i := range seq {
			if seq[i], err = New(cfg, nil); err != nil {
				t.Fatal(err)
			}
			if seqObs[i], _, err = seq[i].Reset(seed + uint64(i)); err != nil {
				t.Fatal(err)
			}
			vr[i], sr[i] = rand.New(rand.NewPCG(uint64(i), 7)), rand.New(rand.NewPCG(uint64(i), 7))
		}
		b, err := v.Reset(seed)
		if err != nil {
			t.Fatal(err)
		}
		for i := range seq {
			if !reflect.DeepEqual(b.Obs[i], seqObs[i]) {
				t.Fatalf("workers %d: env %d: first observations differ", workers, i)
			}
		}
		var terminated, truncated int
		actions := make([]int, k)
		for s := range steps {
			for i := range actions {
				actions[i] = randomAction(vr[i], b.Obs[i])
			}
			if b, err = v.Step(actions); err != nil {
				t.Fatal(err)
			}
			for i, e := range seq {
				obs, r, term, trunc, info := e.Step(randomAction(sr[i], seqObs[i]))
				var final *Obs
				if term || trunc {
					f := obs.Clone()
					final = &f
					if obs, _, err = e.NextEpisode(); err != nil {
						t.Fatal(err)
					}
					if term {
						terminated++
					} else {
						truncated++
					}
				}
				seqObs[i] = obs
				vi := b.Info[i]
				if (vi.Final == nil) != (final == nil) || (final != nil && !reflect.DeepEqual(*vi.Final, *final)) {
					t.Fatalf("workers %d, step %d, env %d: final observation differs", workers, s, i)
				}
				vi.Final = nil
				if !reflect.DeepEqual(b.Obs[i], obs) || b.Reward[i] != r || b.Terminated[i] != term ||
					b.Truncated[i] != trunc || !reflect.DeepEqual(vi, info) {
					t.Fatalf("workers %d, step %d, env %d: VecEnv gave reward %v, terminated %v, truncated %v, %+v; "+
						"sequential %v, %v, %v, %+v", workers, s, i, b.Reward[i], b.Terminated[i], b.Truncated[i], vi,
						r, term, trunc, info)
				}
			}
		}
		if terminated == 0 || truncated == 0 {
			t.Errorf("workers %d: %d terminated and %d truncated episodes; want both", workers, terminated, truncated)
		}
	}
}

func TestVecErrors(t *testing.T) {
	if _, err := NewVec(DefaultConfig(), nil, 0); err == nil {
		t.Error("NewVec accepted 0 environments")
	}
	bad := DefaultConfig()
	bad.MinNodes = 0
	if _, err := NewVec(bad, nil, 2); err == nil {
		t.Error("NewVec accepted a bad config")
	}
	v, err := NewVec(DefaultConfig(), nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Reset(1); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Step([]int{0}); err == nil {
		t.Error("Step accepted 1 action for 2 environments")
	}
	f, err := NewVec(quietConfig(), failingSource{}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Reset(1); err == nil {
		t.Error("Reset over a failing source gave no error")
	}
}

// flakySource serves a fixed workload ok times, then fails.
type flakySource struct {
	w     *sim.Workload
	ok    int64
	calls atomic.Int64
}

func (f *flakySource) Episode(*rand.Rand, int) (*sim.Workload, error) {
	if f.calls.Add(1) > f.ok {
		return nil, errBroken
	}
	return f.w, nil
}

// TestVecResetError: when an auto-reset fails, Step reports it, wrapped,
// naming the environment.
func TestVecResetError(t *testing.T) {
	cfg := quietConfig()
	cfg.MaxSteps = 2
	v, err := NewVec(cfg, &flakySource{w: twoNodes(), ok: 3}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if v.Len() != 3 {
		t.Fatalf("Len() = %d; want 3", v.Len())
	}
	if _, err := v.Reset(1); err != nil {
		t.Fatal(err)
	}
	actions := []int{2, 2, 2} // Pending for each
	if _, err := v.Step(actions); err != nil {
		t.Fatalf("first step: %v", err)
	}
	// The second step truncates every episode; the resets fail.
	_, err = v.Step(actions)
	if !errors.Is(err, errBroken) {
		t.Fatalf("error %v; want one wrapping %v", err, errBroken)
	}
	for _, name := range []string{"env 0: step", "env 1: step", "env 2: step"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not name %q", err, name)
		}
	}
}
