// Package atomicdir replaces whole folders and guards them against
// concurrent writers: the folder-level companion of internal/atomicfile.
//
// Replace fills a sibling temporary folder (same parent, so the same file
// system) and swaps it in for the target only when every write succeeded:
// on Linux with one renameat2(RENAME_EXCHANGE), elsewhere by renaming the
// old folder aside and the new one in. A reader therefore sees the old
// complete folder or the new complete one, never a mix; a writer that fails,
// is cancelled or is killed leaves the old folder as it was (a killed one
// also leaves a hidden temporary sibling, which the next Replace removes).
//
// Lock takes an exclusive advisory lock (flock) on the file "<dir>.lock"
// beside the folder and writes the holder's pid in it, so that a second
// writer fails at once with an error naming the folder and that pid. The
// lock file stays after Unlock: removing it would let two writers lock two
// different files of the same name.
package atomicdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kubesim/kubesim/internal/atomicfile"
)

// ErrLocked is wrapped by Lock's error when another process (or another
// Lock in this one) holds the folder's lock.
var ErrLocked = errors.New("locked by another writer")

// LockError says which folder is locked and by whom.
type LockError struct {
	Dir string // the folder
	PID int    // the holder's pid as written in the lock file; 0 if unknown
}

func (e *LockError) Error() string {
	who := "another process"
	if e.PID > 0 {
		who = "process " + strconv.Itoa(e.PID)
	}
	return fmt.Sprintf("%s is being written by %s (lock file %s): wait for it to finish", e.Dir, who, LockPath(e.Dir))
}

func (e *LockError) Unwrap() error { return ErrLocked }

// LockPath returns the lock file of dir: dir + ".lock", beside it.
func LockPath(dir string) string { return filepath.Clean(dir) + ".lock" }

// Lock takes the exclusive lock of dir without waiting, creating dir's
// parent if needed (not dir). dir's symbolic links are followed first, as
// Replace does, so that a link and its target share one lock. The error
// wraps ErrLocked (as a *LockError) when someone else holds it. Release it
// with Unlock.
func Lock(dir string) (*Locked, error) {
	dir, err := resolve(dir)
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	f, err := os.OpenFile(LockPath(dir), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	busy, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	if busy {
		b, _ := os.ReadFile(LockPath(dir))
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		f.Close()
		return nil, &LockError{Dir: dir, PID: pid}
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Locked{dir: dir, f: f}, nil
}

// Locked is a held lock.
type Locked struct {
	dir string
	f   *os.File
}

// Unlock releases the lock; it is safe to call more than once and on nil.
func (l *Locked) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	l.f.Truncate(0)
	err := l.f.Close() // closing the descriptor releases the flock
	l.f = nil
	return err
}

// Replace makes dir hold exactly what fill writes into the folder it is
// given (an empty sibling of dir). A dir that is a symbolic link is
// followed: the folder it points to is replaced and the link stays; a dir
// that is a file or a device is refused. If fill or any step fails, dir is as it
// was and the temporary folder is removed. Replace does not lock: callers
// that may race hold Lock(dir) around it. Stale temporary siblings of dir
// left by killed writers are removed first, so call it under the lock.
func Replace(dir string, fill func(tmp string) error) (err error) {
	link := dir
	if dir, err = resolve(dir); err != nil {
		return fmt.Errorf("replacing %s: %w", link, err)
	}
	if info, err := os.Stat(dir); err == nil && !info.IsDir() {
		return fmt.Errorf("replacing %s: %s is not a folder", link, dir)
	}
	parent, base := filepath.Dir(dir), filepath.Base(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("replacing %s: %w", dir, err)
	}
	removeStale(parent, base)
	tmp, err := os.MkdirTemp(parent, tmpPrefix(base))
	if err != nil {
		return fmt.Errorf("replacing %s: %w", dir, err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	if err = os.Chmod(tmp, 0o755); err != nil { // MkdirTemp makes it 0700
		return fmt.Errorf("replacing %s: %w", dir, err)
	}
	if err = fill(tmp); err != nil {
		return err
	}
	if err = syncDir(tmp); err != nil {
		return fmt.Errorf("replacing %s: %w", dir, err)
	}
	if err = swap(tmp, dir); err != nil {
		return fmt.Errorf("replacing %s: %w", dir, err)
	}
	syncDir(parent)
	return nil
}

// tmpPrefix names the temporary siblings of base (hidden).
func tmpPrefix(base string) string { return "." + base + ".tmp-" }

// removeStale removes temporary siblings of base left by killed writers.
func removeStale(parent, base string) {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range ents {
		if n := e.Name(); e.IsDir() && (strings.HasPrefix(n, tmpPrefix(base)) || strings.HasPrefix(n, oldPrefix(base))) {
			os.RemoveAll(filepath.Join(parent, n))
		}
	}
}

func oldPrefix(base string) string { return "." + base + ".old-" }

// swap puts the folder tmp in dir's place and removes what dir held.
func swap(tmp, dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return os.Rename(tmp, dir)
	}
	if exchange(tmp, dir) == nil {
		return os.RemoveAll(tmp) // tmp now holds the old folder
	}
	// rename the old folder aside, the new one in, then drop the old
	old, err := os.MkdirTemp(filepath.Dir(dir), oldPrefix(filepath.Base(dir)))
	if err != nil {
		return err
	}
	os.Remove(old)
	if err := os.Rename(dir, old); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.Rename(old, dir) // put the old one back
		return err
	}
	return os.RemoveAll(old)
}

// syncDir flushes a folder's entries to disk.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}

// resolve follows dir's symbolic links (atomicfile.Resolve) and cleans it.
func resolve(dir string) (string, error) {
	d, err := atomicfile.Resolve(filepath.Clean(dir))
	if err != nil {
		return dir, err
	}
	return filepath.Clean(d), nil
}
