package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplaces(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.txt")
	if err := WriteBytes(p, []byte("old")); err != nil {
		t.Fatal(err)
	}
	if err := WriteBytes(p, []byte("new")); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(p)
	if err != nil || string(got) != "new" {
		t.Fatalf("read %q, %v; want new", got, err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v; want 0644", fi.Mode().Perm())
	}
	assertOnly(t, dir, "out.txt")
}

// TestFailedWriteKeepsOld: a fill that fails half-way leaves the old file
// and no temporary file behind, and the error says which file.
func TestFailedWriteKeepsOld(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.txt")
	if err := WriteBytes(p, []byte("old")); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Write(p, func(w io.Writer) error {
		w.Write([]byte("partial"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v; want it to wrap boom", err)
	}
	got, _ := os.ReadFile(p)
	if string(got) != "old" {
		t.Errorf("file holds %q after a failed write; want old", got)
	}
	assertOnly(t, dir, "out.txt")
}

func TestWriteMissingDir(t *testing.T) {
	if err := WriteBytes(filepath.Join(t.TempDir(), "no", "such", "f"), nil); err == nil {
		t.Error("no error writing into a missing directory")
	}
}

func assertOnly(t *testing.T, dir, name string) {
	t.Helper()
	es, _ := os.ReadDir(dir)
	if len(es) != 1 || es[0].Name() != name {
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %v; want only %s", names, name)
	}
}
