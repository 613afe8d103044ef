package agent

import (
	"encoding/json"
	"fmt"

	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/model"
)

// MetaEnv is the checkpoint metadata key under which the trainer stores the
// environment configuration (JSON) that the policy's observations follow.
const MetaEnv = "env/config"

// Load reads a checkpoint written by the trainer: the policy and the
// environment configuration it was trained with (its observation encoding).
func Load(path string) (*model.Policy, env.Config, error) {
	pol, err := LoadPolicy(path)
	if err != nil {
		return nil, env.Config{}, err
	}
	meta := pol.Meta()
	ec := env.DefaultConfig()
	if s, ok := meta[MetaEnv]; ok {
		if err := json.Unmarshal([]byte(s), &ec); err != nil {
			return nil, env.Config{}, fmt.Errorf("loading %s: bad %s metadata: %w", path, MetaEnv, err)
		}
	}
	return pol, ec, nil
}

// LoadPolicy reads a checkpoint's policy and checks that it reads the
// observations of this build's environment.
func LoadPolicy(path string) (*model.Policy, error) {
	pol, err := model.Load(path)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", path, err)
	}
	if c := pol.Config(); c.NodeFeatures != env.NodeFeatures || c.PodFeatures != env.PodFeatures {
		return nil, fmt.Errorf("loading %s: the policy reads %d node and %d pod features; this build's environment has %d and %d",
			path, c.NodeFeatures, c.PodFeatures, env.NodeFeatures, env.PodFeatures)
	}
	return pol, nil
}
