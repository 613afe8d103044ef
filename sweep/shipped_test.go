package sweep

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestShippedExperiments: every file in experiments/ parses, validates and
// expands its grid (the data and checkpoints it names need not exist); a
// file of mode openb parses and validates as an OpenbSpec.
func TestShippedExperiments(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "experiments", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no experiment files (%v)", err)
	}
	for _, f := range files {
		if data, err := os.ReadFile(f); err == nil && IsOpenbSpec(data) {
			s, err := ReadOpenbSpec(f)
			if err != nil {
				t.Errorf("%s: %v", f, err)
			} else if s.Name+".yaml" != filepath.Base(f) {
				t.Errorf("%s: name %q; the shipped files are named after their experiment (results/NAME)", f, s.Name)
			}
			continue
		}
		if data, err := os.ReadFile(f); err == nil && IsGPUTrainSpec(data) {
			s, err := ReadGPUTrainSpec(f)
			if err != nil {
				t.Errorf("%s: %v", f, err)
			} else if s.Name+".yaml" != filepath.Base(f) {
				t.Errorf("%s: name %q; the shipped files are named after their experiment (results/NAME)", f, s.Name)
			}
			continue
		}
		s, err := ReadSpec(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		points, err := s.Expand()
		if err != nil {
			t.Errorf("%s: expanding the grid: %v", f, err)
			continue
		}
		if s.Name+".yaml" != filepath.Base(f) {
			t.Errorf("%s: name %q; the shipped files are named after their experiment (results/NAME)", f, s.Name)
		}
		t.Logf("%s: %d grid points", filepath.Base(f), len(points))
	}
}

// TestShippedGPUPolicyIsItsRound: experiments/gpu-policy.yaml is the file
// of the round and training seed that validation picked (docs/ppo.md, "The
// shipped GPU policy") under another name, so that results/gpu-policy/, the
// files of that training, is what it trains. Editing one of the two files
// and not the other breaks the claim and this test.
func TestShippedGPUPolicyIsItsRound(t *testing.T) {
	read := func(name string) *GPUTrainSpec {
		s, err := ReadGPUTrainSpec(filepath.Join("..", "experiments", name))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	shipped, round := read("gpu-policy.yaml"), read("gpu-es-r14-s17.yaml")
	if shipped.Name != "gpu-policy" || round.Name != "gpu-es-r14-s17" {
		t.Fatalf("names %q and %q", shipped.Name, round.Name)
	}
	shipped.Name = round.Name
	if !reflect.DeepEqual(shipped, round) {
		t.Errorf("experiments/gpu-policy.yaml differs from experiments/gpu-es-r14-s17.yaml beyond its name:\n%+v\n%+v", *shipped, *round)
	}
}
