package atomicdir

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func names(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, e := range ents {
		s = append(s, e.Name())
	}
	return strings.Join(s, " ")
}

// TestSecondLockFailsNamingPID: a second writer gets ErrLocked with the
// folder and the holder's pid; after Unlock the lock can be taken again.
func TestSecondLockFailsNamingPID(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "trace")
	l, err := Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Lock(dir)
	var le *LockError
	if !errors.Is(err, ErrLocked) || !errors.As(err, &le) {
		t.Fatalf("second Lock: %v; want a *LockError wrapping ErrLocked", err)
	}
	if le.PID != os.Getpid() || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), strconv.Itoa(os.Getpid())) {
		t.Errorf("error %q (pid %d); want it to name %s and pid %d", err, le.PID, dir, os.Getpid())
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	l2, err := Lock(dir)
	if err != nil {
		t.Fatalf("Lock after Unlock: %v", err)
	}
	l2.Unlock()
}

func TestReplaceSwapsWholeFolder(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	for _, files := range [][]string{{"a", "b"}, {"c"}} {
		err := Replace(dir, func(tmp string) error {
			for _, f := range files {
				write(t, filepath.Join(tmp, f), f)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := names(t, dir), strings.Join(files, " "); got != want {
			t.Errorf("folder holds %q; want %q", got, want)
		}
	}
	if got := names(t, parent); got != "out" {
		t.Errorf("parent holds %q; want only out", got)
	}
}

// TestFailedReplaceKeepsOld: a fill that fails half-way (an interrupted
// conversion) leaves the old folder whole and no temporary folder.
func TestFailedReplaceKeepsOld(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	os.Mkdir(dir, 0o755)
	write(t, filepath.Join(dir, "old"), "old")
	boom := errors.New("boom")
	err := Replace(dir, func(tmp string) error {
		write(t, filepath.Join(tmp, "new"), "partial")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Replace: %v; want boom", err)
	}
	if got := names(t, dir); got != "old" {
		t.Errorf("folder holds %q after a failed Replace; want old", got)
	}
	if got := names(t, parent); got != "out" {
		t.Errorf("parent holds %q; want only out", got)
	}
}

// TestReplaceRemovesStaleTemporaries: a writer killed mid-way leaves a
// hidden sibling; the next Replace removes it.
func TestReplaceRemovesStaleTemporaries(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	os.Mkdir(filepath.Join(parent, ".out.tmp-123"), 0o755)
	if err := Replace(dir, func(string) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if got := names(t, parent); got != "out" {
		t.Errorf("parent holds %q; want only out", got)
	}
}

// TestReplaceFollowsSymlink (issue 28, defect 11): convert --out on a
// symbolic link to a folder replaced the link with a folder and left the
// target as it was. The target is now replaced and the link stays; a
// link to a file is refused; a link and its target share one lock.
func TestReplaceFollowsSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real")
	os.MkdirAll(target, 0o755)
	os.WriteFile(filepath.Join(target, "old"), []byte("old"), 0o644)
	link := filepath.Join(dir, "link")
	os.Symlink("real", link)
	err := Replace(link, func(tmp string) error {
		return os.WriteFile(filepath.Join(tmp, "new"), []byte("new"), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link is no longer a link (%v)", err)
	}
	if b, err := os.ReadFile(filepath.Join(target, "new")); err != nil || string(b) != "new" {
		t.Errorf("target/new: %q, %v; want the new folder in the target's place", b, err)
	}
	if _, err := os.Stat(filepath.Join(target, "old")); err == nil {
		t.Error("target/old is still there")
	}

	l, err := Lock(link)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	if _, err := Lock(target); !errors.Is(err, ErrLocked) {
		t.Errorf("locking the target while its link is locked: %v; want ErrLocked", err)
	}

	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	flink := filepath.Join(dir, "flink")
	os.Symlink(file, flink)
	if err := Replace(flink, func(string) error { return nil }); err == nil {
		t.Error("replacing a link to a file succeeded; want an error")
	}
}
