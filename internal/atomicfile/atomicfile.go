// Package atomicfile writes files so that a reader, or a run that is killed
// half-way, sees either the old contents or the new ones, never a part: the
// data goes to a temporary file in the same directory, which is synced,
// made world-readable (0644) and renamed over the target only when every
// write has succeeded. A symbolic link is followed to its target, and a
// path that is not a regular file (a device, a FIFO) is written through,
// never replaced. Every kubesim output (checkpoints, converted traces,
// logs rewritten in place, result tables) goes through it.
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Write replaces path with what fill writes. If fill or any step fails,
// path is untouched and the temporary file is removed.
//
// What is at path is respected: a symbolic link is followed and its target
// replaced (the link stays a link); a device, FIFO or socket is written
// through, never replaced (--samples /dev/stdout streams, /dev/full fails
// with its write error); a folder is refused.
func Write(path string, fill func(io.Writer) error) (err error) {
	target, err := Resolve(path)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if info, err := os.Stat(target); err == nil && !info.Mode().IsRegular() {
		if info.IsDir() {
			return fmt.Errorf("writing %s: %w", path, ErrIsDir)
		}
		return writeThrough(path, target, fill)
	}
	tmp, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".*.tmp")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriterSize(tmp, 1<<20)
	if err = fill(bw); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = bw.Flush(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = tmp.Chmod(0o644); err != nil { // CreateTemp makes it 0600
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), target); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// ErrIsDir is wrapped by Write's error when path is a folder.
var ErrIsDir = errors.New("is a folder, want a file")

// writeThrough writes to a path that is not a regular file (a device, a
// FIFO) in place: there is nothing to replace atomically, and renaming over
// it would replace the device with a file. Every write error is returned.
func writeThrough(path, target string, fill func(io.Writer) error) error {
	f, err := os.OpenFile(target, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	bw := bufio.NewWriterSize(f, 1<<16)
	err = fill(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// maxLinks bounds the symbolic links Resolve follows (Linux's own limit).
const maxLinks = 40

// Resolve follows path's symbolic links, if any, to the path they lead to,
// which need not exist yet (a dangling link names the file to create). A
// loop of links is an error.
func Resolve(path string) (string, error) {
	p := path
	for range maxLinks {
		info, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return p, nil
		}
		if err != nil {
			return "", err
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			return p, nil
		}
		link, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(p), link)
		}
		p = link
	}
	return "", fmt.Errorf("more than %d symbolic links in a row (a loop?)", maxLinks)
}

// WriteBytes replaces path with data.
func WriteBytes(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// RemoveTemporaries removes the temporary files that writers killed in the
// middle of Write left in dir (".name.123.tmp"). Call it only while no one
// else writes into dir (a locked run folder).
func RemoveTemporaries(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if n := e.Name(); e.Type().IsRegular() && isTemporary(n) {
			os.Remove(filepath.Join(dir, n))
		}
	}
}

// isTemporary reports whether name is one of Write's temporary files.
func isTemporary(name string) bool {
	if !strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".tmp") {
		return false
	}
	mid := strings.TrimSuffix(name[1:], ".tmp")
	i := strings.LastIndexByte(mid, '.')
	return i > 0 && i < len(mid)-1 && strings.Trim(mid[i+1:], "0123456789") == ""
}
