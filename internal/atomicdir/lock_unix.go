//go:build unix

package atomicdir

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes f's flock without waiting; busy reports that another
// descriptor holds it.
func tryLock(f *os.File) (busy bool, err error) {
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return true, nil
	}
	return false, err
}
