package sweep

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/ppo"
)

func TestParseSpec(t *testing.T) {
	s, err := ParseSpec([]byte(`
name: small
cluster:
  min_nodes: 4
  max_nodes: 8
  sim:
    autoscaler:
      enabled: false
reward:
  balance_form: inverse
ppo:
  n_envs: 2
  n_steps: 128
  batch_size: 32
  total_timesteps: 2560
`))
	if err != nil {
		t.Fatal(err)
	}
	ec := s.EnvConfig()
	// Given keys change; the rest keep their defaults (n_epochs 10, gamma 0.99, fragment weight 1).
	if s.Name != "small" || ec.MinNodes != 4 || ec.MaxNodes != 8 || ec.Sim.Autoscaler.Enabled ||
		ec.Reward.BalanceForm != "inverse" || ec.Reward.Fragment != 1 {
		t.Errorf("env config %+v", ec)
	}
	if s.PPO.NEnvs != 2 || s.PPO.NEpochs != 10 || s.PPO.Gamma != 0.99 || s.PPO.Updates != 10 {
		t.Errorf("ppo config %+v", s.PPO)
	}
}

func TestParseSpecErrors(t *testing.T) {
	cases := []struct {
		name, yaml, want string
	}{
		{"unknown key names key and line", "ppo:\n  n_env: 3\n", "line 2: field n_env not found"},
		{"unknown section", "rewards:\n  balance: 1\n", "field rewards not found"},
		{"bad value names key", "ppo:\n  gamma: 2\n", "ppo.gamma"},
		{"env key", "cluster:\n  min_nodes: 0\n", "min_nodes"},
		{"sim key", "cluster:\n  sim:\n    backoff_initial_ms: 0\n", "backoff_initial_ms"},
		{"windows without trace", "windows:\n  train: [day1]\n", "without a trace"},
		{"wrong type", "ppo:\n  n_steps: many\n", "cannot unmarshal"},
		{"two of three splits", "trace:\n  dir: d\nwindows:\n  train: [0h-1h]\n  test: [2h-3h]\n", "train, validation and test"},
		{"unknown warm start", "trace:\n  dir: d\n  warm_start: hot\n", "trace.warm_start"},
		{"warm-up without length", "trace:\n  dir: d\n  warm_start: warmup\n", "trace.warm_up_ms"},
		{"warm-up length without warm-up", "trace:\n  dir: d\n  warm_up_ms: 60000\n", "applies only to warm_start: warmup"},
		{"node template", "cluster:\n  node_template:\n    cpu_millicores: -1\n", "node_template.cpu_millicores"},
		{"no seeds", "eval:\n  seeds: 0\n", "eval.seeds"},
		{"es key", "ppo:\n  select: unschedulable\nes:\n  generations: 1\n  pairs: 1\n  episodes: 1\n  sigma: 0\n  learning_rate: 0.1\n", "es.sigma"},
		{"es unknown key", "es:\n  generation: 1\n", "field generation not found"},
		{"es selects on its count", "es:\n  generations: 1\n  pairs: 1\n  episodes: 1\n  sigma: 0.1\n  learning_rate: 0.1\n", "ppo.select"},
	}
	for _, tc := range cases {
		_, err := ParseSpec([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v; want it to contain %q", tc.name, err, tc.want)
		}
	}
}

// TestReadSpecResolvesTraceDir: a relative trace.dir names a folder beside
// the spec file, whatever the working directory; an absolute one is kept.
func TestReadSpecResolvesTraceDir(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ dir, want string }{
		{"../data/trace", filepath.Join(filepath.Dir(dir), "data", "trace")},
		{"/abs/trace", "/abs/trace"},
	} {
		path := filepath.Join(dir, "exp.yaml")
		if err := os.WriteFile(path, []byte("trace:\n  dir: "+tc.dir+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := ReadSpec(path)
		if err != nil {
			t.Fatal(err)
		}
		if s.Trace.Dir != tc.want || s.Trace.WarmStart != WarmPlacement {
			t.Errorf("trace.dir %q -> %q (warm start %q); want %q, placement", tc.dir, s.Trace.Dir, s.Trace.WarmStart, tc.want)
		}
	}
}

// TestEmptySpecIsError: an empty config file (or comments only, or a null
// document) is an error; the old code trained on the built-in defaults.
func TestEmptySpecIsError(t *testing.T) {
	for _, data := range []string{"", "\n\n", "# only a comment\n", "---\n", "null\n", "~\n"} {
		if _, err := ParseSpec([]byte(data)); !errors.Is(err, ErrEmptySpec) {
			t.Errorf("ParseSpec(%q): %v; want ErrEmptySpec", data, err)
		}
	}
	if _, err := ParseSpec([]byte("ppo:\n  seed: 1\n---\nppo:\n  seed: 2\n")); err == nil {
		t.Error("two documents parsed without error")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "empty.yaml")
	os.WriteFile(p, nil, 0o644)
	if _, err := ReadSpec(p); !errors.Is(err, ErrEmptySpec) || !strings.Contains(err.Error(), p) {
		t.Errorf("ReadSpec: %v; want ErrEmptySpec naming %s", err, p)
	}
}

// FuzzParseSpec: the YAML spec decoder returns a spec or an error, never
// panics, and what it returns validates; so do the points of its grid.
func FuzzParseSpec(f *testing.F) {
	for _, seed := range []string{"", "ppo:\n  seed: 1\n", "eval:\n  nodes: [3, 7]\n  seeds: 2\n",
		"trace:\n  dir: x\nwindows:\n  train: [day1]\n", "ppo: {hidden: -1}", "a: &a [*a]", "cluster:\n  workload:\n    pods_per_node: 10\n",
		"ppo:\n  eval_freq: 0\n", "reward:\n  w1: .inf\n",
		"grid:\n  ppo.seed: [1, 2]\n  eval.nodes: [3, 7]\n", "grid:\n  cluster.sim.autoscaler.enabled: [true, false]\n",
		// issue 28: reals for whole numbers, NaN and infinities, in the spec and a grid
		"eval:\n  seeds: 2.5\n", "trace:\n  dir: t\n  load_factor: .nan\n", "reward:\n  balance: .inf\n",
		"grid:\n  eval.seeds: [1, 2.5]\n", "trace:\n  dir: t\ngrid:\n  trace.load_factor: [1, .NaN]\n"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSpec(data)
		if err != nil {
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("ParseSpec accepted a spec that does not validate: %v", err)
		}
		// a grid expands to validated points, or fails, without panicking
		n := 1
		for _, a := range s.Grid {
			n *= len(a.Values)
		}
		if n > 64 {
			return
		}
		pts, err := s.Expand()
		if err != nil {
			return
		}
		for _, p := range pts {
			if err := p.Validate(); err != nil {
				t.Fatalf("grid point %s does not validate: %v", Point(p.Settings), err)
			}
		}
	})
}

// TestESTrainKey: an es section is part of a training cell's key (another
// sigma trains anew; the worker count does not), and a spec without one
// keeps the key it had before es existed (no ES field in the hashed JSON).
func TestESTrainKey(t *testing.T) {
	base := trainKey{Code: "c"}
	b, err := json.Marshal(base)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "ES") {
		t.Errorf("a PPO run's key %s names ES", b)
	}
	hash := func(es *ppo.ESConfig) string {
		k := base
		k.ES = esKey(es)
		h, err := hashOf(k)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	es := ppo.ESConfig{Generations: 2, Pairs: 2, Episodes: 2, Sigma: 0.1, LearningRate: 0.1}
	two := es
	two.Workers = 1
	other := es
	other.Sigma = 0.2
	switch {
	case hash(nil) == hash(&es):
		t.Error("an es section does not change the training key")
	case hash(&es) != hash(&two):
		t.Error("the worker count changes the training key")
	case hash(&es) == hash(&other):
		t.Error("another sigma keeps the training key")
	}
}
