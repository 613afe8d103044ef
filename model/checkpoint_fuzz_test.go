package model

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
)

// FuzzCheckpoint: the checkpoint decoder returns a policy or an error that
// wraps ErrCheckpoint (or names a missing file), never panics, for any
// bytes, and for any bytes whose trailing checksum is recomputed (so that
// the header and weights are decoded, not rejected by the checksum).
func FuzzCheckpoint(f *testing.F) {
	p, err := New(Config{NodeFeatures: 3, PodFeatures: 2, Hidden: 4, Rounds: 1, Seed: 1})
	if err != nil {
		f.Fatal(err)
	}
	path := filepath.Join(f.TempDir(), "seed.ckpt")
	if err := p.Save(path, map[string]string{"k": "v"}); err != nil {
		f.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good, false)
	f.Add(good, true)
	f.Add(good[:len(good)/2], true)
	f.Add([]byte(checkpointMagic), false)
	f.Add(bytes.Replace(good, []byte(`"hidden":4`), []byte(`"hidden":5`), 1), true)
	f.Add(nanCheckpointBytes(f), false) // issue 28: NaN weights, a valid checksum
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, recompute bool) {
		if recompute && len(data) >= 4 {
			data = bytes.Clone(data)
			binary.LittleEndian.PutUint32(data[len(data)-4:], crc32.Checksum(data[:len(data)-4], crcTable))
		}
		p := filepath.Join(dir, "fuzz.ckpt")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		pol, err := Load(p)
		if err != nil {
			if !errors.Is(err, ErrCheckpoint) {
				t.Fatalf("error %v does not wrap ErrCheckpoint", err)
			}
			return
		}
		if pol == nil {
			t.Fatal("nil policy without error")
		}
	})
}
