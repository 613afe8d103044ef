//go:build unix

package dataset

import (
	"fmt"
	"os"
	"syscall"
)

// mapFile maps f read-only; release unmaps it. An empty file maps to nil.
func mapFile(f *os.File, size int64) (data []byte, release func(), err error) {
	if size == 0 {
		return nil, func() {}, nil
	}
	if size != int64(int(size)) {
		return nil, nil, fmt.Errorf("%s: too large to map", f.Name())
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("mapping %s: %w", f.Name(), err)
	}
	return b, func() { syscall.Munmap(b) }, nil
}
