package sweep

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"

	"github.com/kubesim/kubesim/dataset"
	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/ppo"
	"github.com/kubesim/kubesim/sim"
)

// ModeGPUTrain is the mode of a training file for a GPU policy on an
// openb workload (ppo.TrainGPU); its keys are GPUTrainSpec's.
const ModeGPUTrain = "gpu-train"

// GPUTrainSpec is a GPU training file. Unknown keys are errors.
type GPUTrainSpec struct {
	Name string `yaml:"name"`
	Mode string `yaml:"mode"`
	// Dir holds the openb CSV files (relative to the file's folder);
	// Nodes is the node list, PodList the pod list's name (Dir/
	// openb_pod_list_PODLIST.csv): issue 27 trains on default only.
	Dir     string `yaml:"dir"`
	Nodes   string `yaml:"nodes"`
	PodList string `yaml:"pod_list"`
	// Env is the training environment (subclusters: min_nodes, max_nodes).
	Env env.GPUConfig `yaml:"env"`
	PPO ppo.Config    `yaml:"ppo"`
	// ES, when set, trains by evolution strategies (ppo.TrainGPUES)
	// instead of PPO; the ppo section then gives the architecture (hidden,
	// rounds, logit_clip, pending_clip, prior, zero_init) and the seed.
	ES *ppo.ESConfig `yaml:"es,omitempty"`
	// Validation: the greedy policy on the whole cluster, these seeds'
	// arrivals (never drawn for training) inflated to Inflate.
	Validation struct {
		Seeds   []uint64 `yaml:"seeds"`
		Inflate float64  `yaml:"inflate"`
		// Scarce adds a scarce-model episode of each seed
		// (ppo.GPUOptions.ValScarce, env.ScarceWorkload).
		Scarce bool `yaml:"scarce"`
		// ScarceEach, when > 0, adds for each seed an episode per GPU
		// model of the node list, that model made scarce at this factor
		// (ppo.GPUOptions.ValScarceEach, env.ScarceModel).
		ScarceEach float64 `yaml:"scarce_each"`
		// SpecRate, when > 0, adds for each seed an episode with model
		// constraints drawn at this rate, as env.spec_rate draws them in
		// training (ppo.GPUOptions.ValSpec, env.SpecWorkload).
		SpecRate float64 `yaml:"spec_rate"`
		// MixEach, when > 0, adds for each seed an episode per pod class,
		// that class's share raised by replacing each pod with this
		// probability (ppo.GPUOptions.ValMixEach, env.MixWorkload).
		MixEach float64 `yaml:"mix_each"`
	} `yaml:"validation"`
	// Objective is what validation and evolution strategies' fitness
	// score (ppo.GPUOptions.Objective): alloc100 (the default) or curve.
	Objective string `yaml:"objective"`

	dir string
}

// IsGPUTrainSpec reports whether a file's YAML has mode: gpu-train.
func IsGPUTrainSpec(data []byte) bool {
	var head struct {
		Mode string `yaml:"mode"`
	}
	return yaml.Unmarshal(data, &head) == nil && head.Mode == ModeGPUTrain
}

// ReadGPUTrainSpec reads and validates a GPU training file; errors name
// the file and the key.
func ReadGPUTrainSpec(path string) (*GPUTrainSpec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading spec: %w", err)
	}
	s, err := ParseGPUTrainSpec(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s.dir = filepath.Dir(path)
	return s, nil
}

// ParseGPUTrainSpec parses a GPU training file over the defaults
// (env.DefaultGPUConfig, ppo.DefaultConfig without reward normalisation,
// validation at 1.3x).
func ParseGPUTrainSpec(data []byte) (*GPUTrainSpec, error) {
	s := &GPUTrainSpec{Nodes: "openb_node_list_gpu_node.csv", PodList: "default", Env: env.DefaultGPUConfig(), PPO: ppo.DefaultConfig()}
	s.Validation.Inflate = 1.3
	s.PPO.NormalizeReward = false // TrainGPU's rewards are GPUs, unscaled
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(s); err != nil {
		return nil, err
	}
	switch {
	case s.Mode != ModeGPUTrain:
		return nil, fmt.Errorf("mode = %q: want %s", s.Mode, ModeGPUTrain)
	case s.Name == "":
		return nil, errors.New("name: empty")
	case s.Dir == "":
		return nil, errors.New("dir: empty, want the folder of the openb CSV files")
	case s.PodList == "" || filepath.Base(s.PodList) != s.PodList:
		return nil, fmt.Errorf("pod_list = %q: want a pod list name", s.PodList)
	case s.PPO.EvalFreq > 0 && len(s.Validation.Seeds) == 0:
		return nil, errors.New("validation.seeds: empty, but ppo.eval_freq is set")
	case !(s.Validation.Inflate >= 0 && s.Validation.Inflate <= 10):
		return nil, fmt.Errorf("validation.inflate = %v: want 0 to 10", s.Validation.Inflate)
	case !(s.Validation.ScarceEach >= 0 && s.Validation.ScarceEach <= 10):
		return nil, fmt.Errorf("validation.scarce_each = %v: want 0 (none) or a factor up to 10", s.Validation.ScarceEach)
	case !(s.Validation.SpecRate >= 0 && s.Validation.SpecRate <= 1):
		return nil, fmt.Errorf("validation.spec_rate = %v: want 0 (none) to 1", s.Validation.SpecRate)
	case !(s.Validation.MixEach >= 0 && s.Validation.MixEach <= 1):
		return nil, fmt.Errorf("validation.mix_each = %v: want 0 (none) to 1", s.Validation.MixEach)
	case s.Objective != "" && s.Objective != ppo.ObjectiveAlloc100 && s.Objective != ppo.ObjectiveCurve:
		return nil, fmt.Errorf("objective = %q: want %s or %s", s.Objective, ppo.ObjectiveAlloc100, ppo.ObjectiveCurve)
	}
	if err := s.Env.Validate(); err != nil {
		return nil, fmt.Errorf("env: %w", err)
	}
	if err := s.PPO.Validate(); err != nil {
		return nil, err
	}
	if s.ES != nil {
		if err := s.ES.Validate(); err != nil {
			return nil, err
		}
		if s.ES.EvalFreq > 0 && len(s.Validation.Seeds) == 0 {
			return nil, errors.New("validation.seeds: empty, but es.eval_freq is set")
		}
	}
	return s, nil
}

// Workload reads the spec's node and pod lists.
func (s *GPUTrainSpec) Workload() (*sim.GPUWorkload, error) {
	dir := s.Dir
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(s.dir, dir)
	}
	t, err := dataset.ReadOpenbCSV(filepath.Join(dir, s.Nodes), filepath.Join(dir, "openb_pod_list_"+s.PodList+".csv"))
	if err != nil {
		return nil, err
	}
	return t.Workload()
}

// Options returns the run's ppo.GPUOptions for the run folder out.
func (s *GPUTrainSpec) Options(out, resume string) ppo.GPUOptions {
	return ppo.GPUOptions{Out: out, Resume: resume, ValSeeds: s.Validation.Seeds, ValInflate: s.Validation.Inflate, ValScarce: s.Validation.Scarce, ValScarceEach: s.Validation.ScarceEach, ValSpec: s.Validation.SpecRate,
		ValMixEach: s.Validation.MixEach, Objective: s.Objective}
}
