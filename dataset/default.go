package dataset

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
)

// EnsureDefault makes sure dir holds a converted trace: when dir has no
// complete conversion (a manifest whose files are all present with their
// recorded sizes), it generates the synthetic trace of DefaultSynthOptions in
// a temporary directory and converts it into dir (LZ4-compressed, a few MB,
// about a second). Nothing is downloaded. It is safe to call on every run.
func EnsureDefault(ctx context.Context, dir string) error {
	if complete(dir) {
		return nil
	}
	tmp, err := os.MkdirTemp("", "kubesim-synth-*")
	if err != nil {
		return fmt.Errorf("default trace: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := Synth(ctx, DefaultSynthOptions(), tmp); err != nil {
		return fmt.Errorf("default trace: %w", err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	if _, err := Convert(ctx, tmp, dir, ConvertOptions{Compression: "lz4", Logger: quiet}); err != nil {
		return fmt.Errorf("default trace: %w", err)
	}
	return nil
}

// complete reports whether dir has a manifest whose files all exist with
// the recorded sizes.
func complete(dir string) bool {
	m, err := ReadManifest(dir)
	if err != nil || len(m.Tables) == 0 {
		return false
	}
	for _, t := range m.Tables {
		info, err := os.Stat(filepath.Join(dir, t.File))
		if err != nil || info.Size() != t.Bytes {
			return false
		}
	}
	return true
}
