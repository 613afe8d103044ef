package sweep

import (
	"os"
	"path/filepath"
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
