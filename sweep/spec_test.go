package sweep

import (
	"strings"
	"testing"
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
	}
	for _, tc := range cases {
		_, err := ParseSpec([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v; want it to contain %q", tc.name, err, tc.want)
		}
	}
}
