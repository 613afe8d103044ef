package env

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestEncoderMatchesEnv: an Encoder given the engine's cluster and current
// pod reproduces the Env's observation exactly, at every step of an episode.
func TestEncoderMatchesEnv(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MinNodes, cfg.MaxNodes = 6, 6
	cfg.Workload.PodsPerNode = 30
	e, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := NewEncoder(cfg)
	if err != nil {
		t.Fatal(err)
	}
	obs, _, err := e.Reset(3)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for step := 0; step < 150; step++ {
		p, ok := e.eng.Next() // the pod the observation is about (Next is idempotent)
		if !ok {
			break
		}
		got := enc.Encode(e.eng.Cluster(), p)
		if !reflect.DeepEqual(got, obs) {
			t.Fatalf("step %d: encoder and env disagree:\n%+v\n%+v", step, got, obs)
		}
		var done, trunc bool
		obs, _, done, trunc, _ = e.Step(r.IntN(obs.N + 1))
		if done || trunc {
			break
		}
	}
}
