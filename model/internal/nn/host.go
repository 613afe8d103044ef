package nn

import "math"

// Relu sets every negative element of x to zero.
func Relu[T Float](x []T) {
	for i, v := range x {
		if v < 0 {
			x[i] = 0
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

// RowDot writes dst[r] = x[r] . q[sample of r] for x (R x h) and q (B x h).
func RowDot[T Float](l *Layout, dst, x, q []T, h int) {
	for r := range l.Rows() {
		xs := x[r*h : (r+1)*h]
		qs := q[(r/l.N)*h : (r/l.N+1)*h]
		var s T
		for j, v := range xs {
			s += v * qs[j]
		}
		dst[r] = s
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
