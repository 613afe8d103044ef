//go:build openblas

package nn

// Built with -tags openblas: gorgonia and the host kernels call OpenBLAS
// through cgo (Debian: apt-get install libopenblas-dev).

// #cgo LDFLAGS: -lopenblas
// void openblas_set_num_threads(int num_threads);
// int openblas_get_num_threads(void);
import "C"

import (
	"os"

	"gonum.org/v1/netlib/blas/netlib"
	G "gorgonia.org/gorgonia"
)

const blasName = "openblas"

// useBLAS plugs OpenBLAS into gorgonia and the host kernels, single-threaded
// unless OPENBLAS_NUM_THREADS says otherwise. The policy's matrices are
// small (K = 64); the host pass runs chunks of samples on goroutines of its
// own; and OpenBLAS's worker threads spin, which loses on a shared machine:
// with the load average at 3 on 2 cores, one thread beat two in 7 of 8
// benchmark runs (B=256 N=10 training: 25.0k and 26.3k against 20.3k and
// 22.3k samples/s).
func useBLAS() {
	if os.Getenv("OPENBLAS_NUM_THREADS") == "" {
		C.openblas_set_num_threads(1)
	}
	impl := netlib.Implementation{}
	G.Use(impl)
	blasImpl = impl
}

// blasThreads reports OpenBLAS's thread count.
func blasThreads() int { return int(C.openblas_get_num_threads()) }
