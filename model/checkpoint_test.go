package model

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// trainedPolicy returns a policy after two training steps (so Adam has
// state) and the batch and PPO inputs used.
func trainedPolicy(t *testing.T, f64 bool) (*Policy, *Batch, []int, []float64, LossConfig) {
	t.Helper()
	p := mustNew(t, testConfig(f64))
	rng := rand.New(rand.NewPCG(71, 72))
	b := randomBatch(rng, 3, 5, 5, 3, 2, false)
	var act ActResult
	if err := p.Act(b, false, rng, &act); err != nil {
		t.Fatal(err)
	}
	lc := LossConfig{ClipCoef: 0.2, VFCoef: 0.5, EntCoef: 0.01, MaxGradNorm: 0.5, LearningRate: 0.01}
	v := []float64{1, -1, 0.5}
	for range 2 {
		if _, err := p.TrainStep(b, act.Actions, act.LogP, v, v, act.Values, lc); err != nil {
			t.Fatal(err)
		}
	}
	return p, b, act.Actions, act.LogP, lc
}

// A save/load round trip gives identical outputs, the caller's metadata
// and Adam's state: one more training step on the original and on the copy
// gives identical weights.
func TestSaveLoadRoundTrip(t *testing.T) {
	for _, f64 := range []bool{false, true} {
		p, b, actions, oldLogp, lc := trainedPolicy(t, f64)
		path := filepath.Join(t.TempDir(), "policy.ckpt")
		meta := map[string]string{"step": "2", "run": "test"}
		if err := p.Save(path, meta); err != nil {
			t.Fatal(err)
		}
		q, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := q.Meta(); got["step"] != "2" || got["run"] != "test" || len(got) != 2 {
			t.Errorf("float64=%v: metadata %v, want %v", f64, got, meta)
		}
		x, y := mustForward(t, p, b), mustForward(t, q, b)
		if !slices.Equal(x.LogP, y.LogP) || !slices.Equal(x.Values, y.Values) {
			t.Errorf("float64=%v: outputs differ after a round trip:\n%v %v\n%v %v", f64, x.LogP, x.Values, y.LogP, y.Values)
		}
		v := []float64{0.3, 0.2, -1}
		for _, pol := range []*Policy{p, q} {
			if _, err := pol.TrainStep(b, actions, oldLogp, v, v, v, lc); err != nil {
				t.Fatal(err)
			}
		}
		for i := range p.params {
			a, c := p.params[i].Value.Data(), q.params[i].Value.Data()
			if !equalData(a, c) {
				t.Errorf("float64=%v: %s differs after one more step on the loaded copy", f64, p.params[i].Name)
			}
		}
		// Restore into a policy of the same architecture.
		r := mustNew(t, testConfig(f64))
		if err := r.Restore(path); err != nil {
			t.Fatal(err)
		}
		if z := mustForward(t, r, b); !slices.Equal(x.LogP, z.LogP) {
			t.Errorf("float64=%v: Restore gives other outputs", f64)
		}
	}
}

func equalData(a, b any) bool {
	switch a := a.(type) {
	case []float32:
		return slices.Equal(a, b.([]float32))
	case []float64:
		return slices.Equal(a, b.([]float64))
	}
	return false
}

// rewrite returns a copy of a checkpoint with its JSON header edited by f
// and a valid checksum, to reach the checks behind the checksum.
func rewrite(t *testing.T, data []byte, f func(h string) string) []byte {
	t.Helper()
	hl := int(binary.LittleEndian.Uint32(data[12:]))
	h := f(string(data[16 : 16+hl]))
	var out bytes.Buffer
	out.Write(data[:12])
	out.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(h))))
	out.WriteString(h)
	out.Write(data[16+hl : len(data)-4])
	out.Write(binary.LittleEndian.AppendUint32(nil, crc32.Checksum(out.Bytes(), crcTable)))
	return out.Bytes()
}

// Truncated, corrupt, foreign and mismatched checkpoints give clear errors
// that wrap ErrCheckpoint and name the file.
func TestCheckpointErrors(t *testing.T) {
	p, _, _, _, _ := trainedPolicy(t, false)
	dir := t.TempDir()
	path := filepath.Join(dir, "good.ckpt")
	if err := p.Save(path, nil); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	flip := func(i int) []byte {
		d := slices.Clone(good)
		d[i] ^= 0x40
		return d
	}
	for _, tc := range []struct {
		name  string
		data  []byte
		wantS string
	}{
		{"empty", nil, "no \"KSPOLICY\" magic"},
		{"foreign", []byte("PK\x03\x04 not a checkpoint"), "magic"},
		{"cut in preamble", good[:10], "truncated"},
		{"cut in header", good[:40], "truncated"},
		{"cut in weights", good[:len(good)/2], "truncated"},
		{"last byte missing", good[:len(good)-1], "truncated"},
		{"trailing bytes", append(slices.Clone(good), 0), "1 unexpected bytes"},
		{"flipped weight bit", flip(len(good) - 100), "checksum mismatch"},
		{"flipped checksum bit", flip(len(good) - 1), "checksum mismatch"},
		{"another version", func() []byte { d := slices.Clone(good); d[8] = 1; return d }(), "version 1"},
		{"huge header", func() []byte { d := slices.Clone(good); d[15] = 0x7f; return d }(), "header length"},
		{"renamed parameter", rewrite(t, good, func(h string) string {
			return strings.Replace(h, `"gnn.embed"`, `"gnn.embod"`, 1)
		}), `parameter 0 is "gnn.embod"`},
		{"unknown header field", rewrite(t, good, func(h string) string {
			return strings.Replace(h, `{"config"`, `{"colour":1,"config"`, 1)
		}), "unknown field"},
		{"header and weights disagree", rewrite(t, good, func(h string) string {
			return strings.Replace(h, `"hidden":8`, `"hidden":9`, 1)
		}), "architecture needs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_"))
			if err := os.WriteFile(f, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(f)
			if err == nil || !errors.Is(err, ErrCheckpoint) || !strings.Contains(err.Error(), tc.wantS) || !strings.Contains(err.Error(), f) {
				t.Errorf("Load error %v, want ErrCheckpoint naming %s and containing %q", err, f, tc.wantS)
			}
		})
	}
	if _, err := Load(filepath.Join(dir, "missing.ckpt")); err == nil || errors.Is(err, ErrCheckpoint) {
		t.Errorf("Load of a missing file: error %v, want a file-system error", err)
	}
	other := mustNew(t, Config{NodeFeatures: 5, PodFeatures: 3, Hidden: 16, Rounds: 2, Seed: 7})
	if err := other.Restore(path); err == nil || !errors.Is(err, ErrCheckpoint) || !strings.Contains(err.Error(), "hidden is 8 in the checkpoint, 16 in the policy") {
		t.Errorf("Restore into another architecture: error %v", err)
	}
	// A failed Save leaves no file behind and reports the path.
	bad := filepath.Join(dir, "no-such-dir", "p.ckpt")
	if err := p.Save(bad, nil); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("Save into a missing folder: error %v", err)
	}
}
