package env

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/sched"
)

// With prior.heuristics the observation holds each heuristic's prior one
// after the other, each exactly what prior.heuristic alone would give, at
// every step of an episode (here driven by the second prior's choices).
func TestGatedPriorHoldsEachHeuristicsPrior(t *testing.T) {
	names := []string{sched.NameTetris, sched.NameKubeDefaultNoSpread, sched.NameKubeDefault}
	cfg := DefaultConfig()
	cfg.MinNodes, cfg.MaxNodes = 5, 5
	cfg.Workload.PodsPerNode = 20
	cfg.Prior = Prior{Heuristics: names, Scale: 20, Pending: -10, Normalize: Range}
	e, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	single := make([]*Encoder, len(names))
	for j, name := range names {
		c := cfg
		c.Prior = Prior{Heuristic: name, Scale: 20, Pending: -10, Normalize: Range}
		if single[j], err = NewEncoder(c); err != nil {
			t.Fatal(err)
		}
	}
	obs, _, err := e.Reset(3)
	if err != nil {
		t.Fatal(err)
	}
	differ := false
	for step := 0; step < 80; step++ {
		w := obs.N + 1
		if len(obs.Prior) != len(names)*w {
			t.Fatalf("step %d: %d prior entries for %d nodes and %d heuristics", step, len(obs.Prior), obs.N, len(names))
		}
		p, ok := e.eng.Next()
		if !ok {
			break
		}
		for j := range names {
			want := single[j].Encode(e.eng.Cluster(), p).Prior
			if got := obs.Prior[j*w : (j+1)*w]; !slices.Equal(got, want) {
				t.Fatalf("step %d: block %d (%s) %v, the heuristic alone %v", step, j, names[j], got, want)
			}
		}
		differ = differ || !slices.Equal(obs.Prior[:w], obs.Prior[w:2*w])
		best := obs.N
		for i := range obs.N {
			if obs.Mask[i] && (best == obs.N || obs.Prior[w+i] > obs.Prior[w+best]) {
				best = i
			}
		}
		var done, trunc bool
		obs, _, done, trunc, _ = e.Step(best)
		if done || trunc {
			break
		}
	}
	if !differ {
		t.Error("tetris and kube-default-nospread gave the same prior at every step: the test checks nothing")
	}
}

// Bad prior.heuristics settings are errors naming their key.
func TestGatedPriorValidate(t *testing.T) {
	for _, tc := range []struct {
		p   Prior
		key string
	}{
		{Prior{Heuristic: sched.NameTetris, Heuristics: []string{sched.NameTetris, sched.NameKubeDefault}, Scale: 1}, "prior.heuristics"},
		{Prior{Heuristics: []string{sched.NameTetris}, Scale: 1}, "prior.heuristics"},
		{Prior{Heuristics: []string{sched.NameTetris, "nope"}, Scale: 1}, "prior.heuristics[1]"},
		{Prior{Heuristics: []string{sched.NameTetris, sched.NameKubeDefault, sched.NameTetris}, Scale: 1}, "prior.heuristics[2]"},
		{Prior{Heuristics: []string{sched.NameTetris, sched.NameKubeDefault}}, "prior.scale"},
	} {
		cfg := DefaultConfig()
		cfg.Prior = tc.p
		err := cfg.Validate()
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%+v: error %v, want one naming %s", tc.p, err, tc.key)
		}
	}
	p := Prior{Heuristics: []string{sched.NameTetris, sched.NameKubeDefault}, Scale: 10}
	if p.Gate() != 2 || !slices.Equal(p.Names(), p.Heuristics) {
		t.Errorf("Gate %d, Names %v", p.Gate(), p.Names())
	}
	if one := (Prior{Heuristic: sched.NameTetris, Scale: 1}); one.Gate() != 0 || !slices.Equal(one.Names(), []string{sched.NameTetris}) {
		t.Errorf("single prior: Gate %d, Names %v", one.Gate(), one.Names())
	}
}
