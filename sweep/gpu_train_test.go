package sweep

import (
	"strings"
	"testing"
)

func TestParseGPUTrainSpec(t *testing.T) {
	ok := "name: g\nmode: gpu-train\ndir: x\nenv:\n  min_nodes: 50\n  max_nodes: 300\n  prior: fgd\n  prior_scale: 5\nppo:\n  prior: true\nvalidation:\n  seeds: [1001]\n"
	s, err := ParseGPUTrainSpec([]byte(ok))
	if err != nil {
		t.Fatal(err)
	}
	if s.PodList != "default" || s.Env.Inflate != 1.3 || s.Env.MaxNodes != 300 || !s.PPO.Prior || s.Validation.Inflate != 1.3 {
		t.Errorf("spec %+v", s)
	}
	if o := s.Options("out", ""); o.ValScarce || len(o.ValSeeds) != 1 {
		t.Errorf("options %+v; want one seed, no scarce episodes", o)
	}
	sc, err := ParseGPUTrainSpec([]byte(strings.Replace(ok, "prior_scale: 5\n", "prior_scale: 5\n  scarce_rate: 0.5\n  scarce_pick: uniform\n", 1) + "  scarce: true\n  scarce_each: 1.2\n  spec_rate: 0.3\n"))
	if err != nil {
		t.Fatal(err)
	}
	if o := sc.Options("out", ""); !o.ValScarce || o.ValScarceEach != 1.2 || o.ValSpec != 0.3 || sc.Env.ScarceRate != 0.5 || !sc.Env.ScarceDraw().Uniform {
		t.Errorf("scarce spec: options %+v, env %+v; want scarce validation, each model at 1.2, scarce_rate 0.5, a uniform pick", o, sc.Env)
	}
	mx, err := ParseGPUTrainSpec([]byte(strings.Replace(ok, "prior_scale: 5\n", "prior_scale: 5\n  mix_rate: 0.5\n  mix_max: 0.3\n", 1) + "  mix_each: 0.15\nobjective: curve\n"))
	if err != nil {
		t.Fatal(err)
	}
	if o := mx.Options("out", ""); o.ValMixEach != 0.15 || o.Objective != "curve" || mx.Env.MixRate != 0.5 || mx.Env.MixMax != 0.3 {
		t.Errorf("mix spec: options %+v, env %+v; want mix_each 0.15, objective curve, mix_rate 0.5, mix_max 0.3", o, mx.Env)
	}
	es, err := ParseGPUTrainSpec([]byte(ok + "es:\n  generations: 30\n  pairs: 8\n  episodes: 4\n  sigma: 0.05\n  learning_rate: 0.01\n  eval_freq: 10\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.ES != nil || es.ES == nil || es.ES.Pairs != 8 || es.ES.Sigma != 0.05 {
		t.Errorf("es section: %+v (without one: %+v)", es.ES, s.ES)
	}
	if !IsGPUTrainSpec([]byte(ok)) || IsGPUTrainSpec([]byte("name: g\n")) {
		t.Error("IsGPUTrainSpec")
	}
	for _, bad := range []struct{ yaml, key string }{
		{ok + "typo: 1\n", "typo"},
		{strings.Replace(ok, "max_nodes: 300", "max_nodes: 10", 1), "min_nodes"},
		{strings.Replace(ok, "seeds: [1001]", "seeds: []", 1), "validation.seeds"},
		{strings.Replace(ok, "dir: x", "dir: \"\"", 1), "dir"},
		{strings.Replace(ok, "prior: fgd", "prior: tetris", 1), "prior"},
		{ok + "  bogus: 1\n", "bogus"},
		{strings.Replace(ok, "prior_scale: 5\n", "prior_scale: 5\n  scarce_rate: 2\n", 1), "scarce_rate"},
		{strings.Replace(ok, "prior_scale: 5\n", "prior_scale: 5\n  scarce_pick: largest\n", 1), "scarce_pick"},
		{ok + "  scarce_each: -1\n", "validation.scarce_each"},
		{ok + "  spec_rate: 1.5\n", "validation.spec_rate"},
		{ok + "  mix_each: 2\n", "validation.mix_each"},
		{ok + "objective: mean\n", "objective"},
		{strings.Replace(ok, "prior_scale: 5\n", "prior_scale: 5\n  mix_rate: 0.5\n", 1), "mix_max"},
		{ok + "es:\n  generations: 2\n  pairs: 2\n  episodes: 1\n  sigma: 0\n  learning_rate: 0.1\n", "es.sigma"},
		{ok + "es:\n  generations: 2\n  pairs: 2\n  episodes: 1\n  sigma: 0.1\n  learning_rate: 0.1\n  eval_freq: 1\n  typo: 3\n", "typo"},
		{strings.Replace(ok, "seeds: [1001]", "seeds: []", 1) + "es:\n  generations: 2\n  pairs: 2\n  episodes: 1\n  sigma: 0.1\n  learning_rate: 0.1\n  eval_freq: 1\n", "validation.seeds"},
	} {
		if _, err := ParseGPUTrainSpec([]byte(bad.yaml)); err == nil || !strings.Contains(err.Error(), bad.key) {
			t.Errorf("%q: error %v; want it to name %s", bad.yaml, err, bad.key)
		}
	}
}
