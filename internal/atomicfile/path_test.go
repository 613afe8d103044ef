package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Tests of issue 28, defect 11: Write renamed over the path without
// looking at what was there, so --samples /dev/full (as root) replaced the
// device with a regular file, and --samples on a symbolic link replaced
// the link with a file and left its target unchanged.

// TestSymlinkTargetReplaced: a link is followed; its target gets the new
// contents and the link stays a link, also through a chain of links and
// a dangling one (whose target is created). A loop of links is an error.
func TestSymlinkTargetReplaced(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "data", "target.csv")
	os.MkdirAll(filepath.Dir(target), 0o755)
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.csv")
	os.Symlink("data/target.csv", link) // relative: resolved against the link's folder
	chain := filepath.Join(dir, "chain.csv")
	os.Symlink(link, chain)
	for _, p := range []string{link, chain} {
		if err := WriteBytes(p, []byte("new via "+filepath.Base(p))); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Lstat(p); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is no longer a link (%v)", p, err)
		}
		if b, _ := os.ReadFile(target); string(b) != "new via "+filepath.Base(p) {
			t.Errorf("target holds %q after writing %s", b, p)
		}
	}
	assertOnly(t, filepath.Dir(target), "target.csv")

	dangling := filepath.Join(dir, "dangling.csv")
	os.Symlink(filepath.Join(dir, "made.csv"), dangling)
	if err := WriteBytes(dangling, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "made.csv")); err != nil || string(b) != "x" {
		t.Errorf("dangling link's target: %q, %v; want it created", b, err)
	}

	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.Symlink(b, a)
	os.Symlink(a, b)
	if err := WriteBytes(a, []byte("x")); err == nil || !strings.Contains(err.Error(), "symbolic links") {
		t.Errorf("loop of links: %v; want an error", err)
	}
}

// TestDeviceWrittenThrough: a device or FIFO is written in place and stays
// what it was; a device's write error (/dev/full: no space) is returned.
func TestDeviceWrittenThrough(t *testing.T) {
	if err := WriteBytes(os.DevNull, []byte("discarded")); err != nil {
		t.Errorf("writing %s: %v", os.DevNull, err)
	}
	if fi, err := os.Lstat(os.DevNull); err != nil || fi.Mode()&os.ModeDevice == 0 {
		t.Fatalf("%s is not a device any more (%v)", os.DevNull, err)
	}
	if _, err := os.Stat("/dev/full"); err == nil {
		err := WriteBytes("/dev/full", []byte("x"))
		if !errors.Is(err, syscall.ENOSPC) {
			t.Errorf("writing /dev/full: %v; want ENOSPC", err)
		}
		if fi, err := os.Lstat("/dev/full"); err != nil || fi.Mode()&os.ModeDevice == 0 {
			t.Fatalf("/dev/full is not a device any more (%v)", err)
		}
	}

	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	got := make(chan string)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- err.Error()
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- string(b)
	}()
	if err := WriteBytes(fifo, []byte("streamed")); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "streamed" {
		t.Errorf("the FIFO's reader got %q; want \"streamed\"", s)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced (%v)", err)
	}
}

// TestFolderRefused: a folder at the path is an error, not replaced.
func TestFolderRefused(t *testing.T) {
	dir := t.TempDir()
	if err := WriteBytes(dir, []byte("x")); !errors.Is(err, ErrIsDir) {
		t.Errorf("writing over a folder: %v; want ErrIsDir", err)
	}
}

// TestRemoveTemporaries: Write's temporaries (".name.123.tmp") left by a
// killed writer are removed; other hidden files and regular files stay
// (issue 28, defect 15: an orphan .last.ckpt.*.tmp after a kill).
func TestRemoveTemporaries(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{".last.ckpt.123456.tmp", ".progress.csv.9.tmp", ".keep", "last.ckpt", ".x.tmp", ".a.b.tmp"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o644)
	}
	RemoveTemporaries(dir)
	// ".x.tmp" has no random part and ".a.b.tmp" a non-numeric one: not Write's
	var got []string
	es, _ := os.ReadDir(dir) // sorted by name
	for _, e := range es {
		got = append(got, e.Name())
	}
	if want := ".a.b.tmp .keep .x.tmp last.ckpt"; strings.Join(got, " ") != want {
		t.Errorf("left %v; want %s", got, want)
	}
}
