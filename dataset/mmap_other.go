//go:build !unix

package dataset

import (
	"fmt"
	"io"
	"os"
)

// mapFile reads f into memory where memory mapping is not available.
func mapFile(f *os.File, size int64) (data []byte, release func(), err error) {
	b := make([]byte, size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", f.Name(), err)
	}
	return b, func() {}, nil
}
