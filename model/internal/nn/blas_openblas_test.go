//go:build openblas

package nn

import (
	"os"
	"testing"
)

func TestOpenBLASSingleThreaded(t *testing.T) {
	if os.Getenv("OPENBLAS_NUM_THREADS") != "" {
		t.Skip("OPENBLAS_NUM_THREADS is set")
	}
	UseBLAS()
	if n := blasThreads(); n != 1 {
		t.Errorf("OpenBLAS runs %d threads after UseBLAS, want 1", n)
	}
	if BLASName() != "openblas" {
		t.Errorf("BLASName() = %q", BLASName())
	}
}
