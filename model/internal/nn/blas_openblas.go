//go:build openblas

package nn

// Built with -tags openblas: gorgonia and the host kernels call OpenBLAS
// through cgo (Debian: apt-get install libopenblas-dev). OpenBLAS keeps its
// own thread count (all cores, or OPENBLAS_NUM_THREADS), like the PyTorch
// peer's.

// #cgo LDFLAGS: -lopenblas
import "C"

import (
	"gonum.org/v1/netlib/blas/netlib"
	G "gorgonia.org/gorgonia"
)

const blasName = "openblas"

func useBLAS() {
	impl := netlib.Implementation{}
	G.Use(impl)
	blasImpl = impl
}
