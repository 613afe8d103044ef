package nn

import (
	"math"
	"unsafe"
)

// Relu sets every negative element of x (and -0) to zero. It clears by the
// sign bit, without a branch: with activations of random sign a branch
// mispredicts half the time, which made this pass cost more than the matmul.
func Relu[T Float](x []T) {
	switch s := any(x).(type) {
	case []float32:
		// Two elements per 64-bit word: move each sign bit to the bottom of
		// its half, widen it to a 32-bit mask and clear the negative halves.
		n2 := len(s) / 2
		if n2 > 0 {
			w := unsafe.Slice((*uint64)(unsafe.Pointer(&s[0])), n2)
			for i, v := range w {
				m := (v >> 31) & 0x0000_0001_0000_0001
				w[i] = v &^ (m * 0xffff_ffff)
			}
		}
		for i := 2 * n2; i < len(s); i++ {
			u := math.Float32bits(s[i])
			s[i] = math.Float32frombits(u &^ uint32(int32(u)>>31))
		}
	case []float64:
		for i, v := range s {
			u := math.Float64bits(v)
			s[i] = math.Float64frombits(u &^ uint64(int64(u)>>63))
		}
	}
}

// ConcatCols writes dst (rows x (sum of widths)) with the columns of each
// source side by side: source i is rows x widths[i]. A nil source stands for
// a column block of ones.
func ConcatCols[T Float](dst []T, rows int, srcs [][]T, widths []int) {
	total := 0
	for _, w := range widths {
		total += w
	}
	for r := range rows {
		off := r * total
		for i, s := range srcs {
			w := widths[i]
			d := dst[off : off+w]
			if s == nil {
				for j := range d {
					d[j] = 1
				}
			} else {
				copy(d, s[r*w:(r+1)*w])
			}
			off += w
		}
	}
}

// LogSoftmax replaces each row of x (rows x k) by its log-softmax, computed
// in float64.
func LogSoftmax[T Float](x []T, rows, k int) {
	for r := range rows {
		row := x[r*k : (r+1)*k]
		mx := math.Inf(-1)
		for _, v := range row {
			mx = max(mx, float64(v))
		}
		s := 0.0
		for _, v := range row {
			s += math.Exp(float64(v) - mx)
		}
		lse := mx + math.Log(s)
		for j, v := range row {
			row[j] = T(float64(v) - lse)
		}
	}
}

// ReluGrad writes dst = g where out (a ReLU's output, so >= 0) is positive
// and 0 where it is zero: the ReLU's backward pass, without branches.
func ReluGrad[T Float](dst, out, g []T) {
	switch d := any(dst).(type) {
	case []float32:
		o, gs := any(out).([]float32), any(g).([]float32)
		o, gs = o[:len(d)], gs[:len(d)]
		for i := range d {
			u := math.Float32bits(o[i])
			d[i] = math.Float32frombits(math.Float32bits(gs[i]) & uint32(int32(u|-u)>>31))
		}
	case []float64:
		o, gs := any(out).([]float64), any(g).([]float64)
		o, gs = o[:len(d)], gs[:len(d)]
		for i := range d {
			u := math.Float64bits(o[i])
			d[i] = math.Float64frombits(math.Float64bits(gs[i]) & uint64(int64(u|-u)>>63))
		}
	}
}
