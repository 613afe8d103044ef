package model

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// nanCheckpoint saves a small policy whose weight (or Adam moment) number
// at of its first parameter is v, with a valid checksum.
func nanCheckpoint(t testing.TB, dir string, f64 bool, v float64) string {
	t.Helper()
	p, err := New(Config{NodeFeatures: 3, PodFeatures: 2, Hidden: 4, Rounds: 1, Seed: 1, Float64: f64})
	if err != nil {
		t.Fatal(err)
	}
	switch d := p.params[0].Value.Data().(type) {
	case []float64:
		d[1] = v
	case []float32:
		d[1] = float32(v)
	}
	path := filepath.Join(dir, "bad.ckpt")
	if err := p.Save(path, nil); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestNaNWeightsRefusedAtLoad (issue 28, defect 6): a checkpoint whose
// weights are NaN, with a valid CRC, loaded, and eval exited 0 with the
// policy leaving 200 of 200 pods unschedulable (a greedy pick on NaN
// chooses Pending). Load and Restore now refuse it, naming the parameter.
func TestNaNWeightsRefusedAtLoad(t *testing.T) {
	for _, tc := range []struct {
		name string
		f64  bool
		v    float64
	}{
		{"float64 NaN", true, math.NaN()},
		{"float64 +Inf", true, math.Inf(1)},
		{"float32 NaN", false, math.NaN()},
		{"float32 -Inf", false, math.Inf(-1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := nanCheckpoint(t, t.TempDir(), tc.f64, tc.v)
			_, err := Load(path)
			if !errors.Is(err, ErrCheckpoint) || !strings.Contains(err.Error(), "element 1") || !strings.Contains(err.Error(), path) {
				t.Fatalf("Load: %v; want ErrCheckpoint naming %s and element 1", err, path)
			}
			p, err := New(Config{NodeFeatures: 3, PodFeatures: 2, Hidden: 4, Rounds: 1, Seed: 2, Float64: tc.f64})
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Restore(path); !errors.Is(err, ErrCheckpoint) {
				t.Fatalf("Restore: %v; want ErrCheckpoint", err)
			}
		})
	}
}

// nanCheckpointBytes is a NaN checkpoint's bytes, a seed of FuzzCheckpoint.
func nanCheckpointBytes(t testing.TB) []byte {
	b, err := os.ReadFile(nanCheckpoint(t, t.TempDir(), true, math.NaN()))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
