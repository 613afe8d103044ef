package dataset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
)

// defaultVersion identifies the generator behind the default trace beside
// DefaultSynthOptions: bump it whenever Synth writes other bytes for the same
// options, so that default traces made before are made again.
const defaultVersion = 2

// DefaultStampFile is the file, beside the manifest, in which EnsureDefault
// records what it generated (format, defaultVersion and the SynthOptions).
const DefaultStampFile = "default-trace.json"

// defaultStamp is the content of DefaultStampFile.
type defaultStamp struct {
	Format  string       `json:"format"`
	Version int          `json:"version"`
	Synth   SynthOptions `json:"synth"`
}

const defaultStampFormat = "kubesim-default-trace"

func currentStamp() defaultStamp {
	return defaultStamp{Format: defaultStampFormat, Version: defaultVersion, Synth: DefaultSynthOptions()}
}

// EnsureDefault makes sure dir holds the current default trace: when dir has
// no complete conversion (a manifest whose files are all present with their
// recorded sizes), or one that is not stamped (DefaultStampFile) as the
// synthetic trace of the current DefaultSynthOptions and generator version,
// it generates that trace in a temporary directory and converts it into dir
// (LZ4-compressed, about 30 MB, in one to two seconds), replacing what was
// there: dir belongs to EnsureDefault, so a default trace of an older
// version (the 40-machine one, made before the stamp existed) is made again.
// Nothing is downloaded. It is safe to call on every run.
func EnsureDefault(ctx context.Context, dir string) error {
	if err := EnsureSynth(ctx, dir, DefaultSynthOptions()); err != nil {
		return fmt.Errorf("default trace: %w", err)
	}
	return nil
}

// EnsureSynth makes sure dir holds the synthetic trace of opts, converted:
// as EnsureDefault does for the default trace, it generates and converts
// the trace when dir holds no complete conversion stamped with opts and the
// current generator version, replacing what was there. The multi-trace
// suite (sweep's suite section) makes its traces with it.
func EnsureSynth(ctx context.Context, dir string, opts SynthOptions) error {
	if err := opts.defaults(); err != nil {
		return err
	}
	want := defaultStamp{Format: defaultStampFormat, Version: defaultVersion, Synth: opts}
	if complete(dir) && stamped(dir, want) {
		return nil
	}
	// an interrupted regeneration must not leave the old stamp behind
	stamp := filepath.Join(dir, DefaultStampFile)
	if err := os.Remove(stamp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	tmp, err := os.MkdirTemp("", "kubesim-synth-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := Synth(ctx, opts, tmp); err != nil {
		return err
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	if _, err := Convert(ctx, tmp, dir, ConvertOptions{Compression: "lz4", Logger: quiet}); err != nil {
		return err
	}
	b, err := json.MarshalIndent(want, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(stamp, append(b, '\n'))
}

// stamped reports whether dir's DefaultStampFile records the trace want.
func stamped(dir string, want defaultStamp) bool {
	b, err := os.ReadFile(filepath.Join(dir, DefaultStampFile))
	if err != nil {
		return false
	}
	var s defaultStamp
	return json.Unmarshal(b, &s) == nil && s == want
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
