package nn

import (
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// blasImpl is the BLAS used by the host kernels; UseBLAS makes gorgonia's
// graphs use the same one. Pure Go (gonum) unless the package is built with
// the openblas tag (blas_openblas.go).
var (
	blasOnce sync.Once
	blasImpl interface {
		blas.Float32
		blas.Float64
	} = gonum.Implementation{}
)

// UseBLAS selects the build's BLAS for gorgonia and the host kernels. It is
// idempotent and cheap after the first call; the policy calls it in New.
func UseBLAS() { blasOnce.Do(useBLAS) }

// BLASName names the BLAS in use: "gonum" (pure Go) or "openblas" (cgo).
func BLASName() string { return blasName }

// Gemm computes c = a*b (accumulate false) or c += a*b, with a m x k, b k x n
// and c m x n, all row-major and contiguous.
func Gemm[T Float](m, n, k int, a, b, c []T, accumulate bool) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		if !accumulate {
			clear(c[:m*n])
		}
		return
	}
	beta := T(0)
	if accumulate {
		beta = 1
	}
	switch a := any(a).(type) {
	case []float32:
		blasImpl.Sgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, a, k, any(b).([]float32), n, float32(beta), any(c).([]float32), n)
	case []float64:
		blasImpl.Dgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, a, k, any(b).([]float64), n, float64(beta), any(c).([]float64), n)
	}
}
