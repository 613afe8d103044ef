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

// Gemm computes c = a*b (accumulate false) or c += a*b, with a m x k, b
// k x n and c m x n, all row-major and contiguous.
func Gemm[T Float](m, n, k int, a, b, c []T, accumulate bool) {
	GemmStrided(m, n, k, a, k, b, n, c, n, accumulate)
}

// GemmStrided is Gemm with explicit row strides (leading dimensions), so
// that a, b and c may be column blocks of wider matrices.
func GemmStrided[T Float](m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int, accumulate bool) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		if !accumulate {
			for i := range m {
				clear(c[i*ldc : i*ldc+n])
			}
		}
		return
	}
	beta := T(0)
	if accumulate {
		beta = 1
	}
	switch a := any(a).(type) {
	case []float32:
		blasImpl.Sgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, a, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
	case []float64:
		blasImpl.Dgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, a, lda, any(b).([]float64), ldb, float64(beta), any(c).([]float64), ldc)
	}
}

// level1 is gonum's pure-Go BLAS, used for the row-sized vector operations
// of the host kernels whatever the build's BLAS: its assembly kernels beat
// plain Go loops, and a cgo call per row would cost more than the row.
var level1 gonum.Implementation

// axpy computes y += alpha*x over len(y) elements.
func axpy[T Float](alpha T, x, y []T) {
	switch y := any(y).(type) {
	case []float32:
		level1.Saxpy(len(y), float32(alpha), any(x).([]float32), 1, y, 1)
	case []float64:
		level1.Daxpy(len(y), float64(alpha), any(x).([]float64), 1, y, 1)
	}
}

// dot returns x . y over len(x) elements.
func dot[T Float](x, y []T) T {
	switch x := any(x).(type) {
	case []float32:
		return T(level1.Sdot(len(x), x, 1, any(y).([]float32), 1))
	case []float64:
		return T(level1.Ddot(len(x), x, 1, any(y).([]float64), 1))
	}
	return 0
}
