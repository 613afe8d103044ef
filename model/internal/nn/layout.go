package nn

import "fmt"

// Layout describes the rows of a padded node matrix: B samples of N rows,
// which rows are real nodes, and which failure domain each belongs to. The
// pooling and aggregation kernels and ops read it; the policy refills it for
// every batch (Set) without allocating once it has grown.
type Layout struct {
	B, N int
	// PoolW[r] is 1/n_b for a valid row r of a sample b with n_b valid rows,
	// and 0 for padding: the weights of the per-sample mean over valid nodes.
	PoolW []float64
	// Seg[r] is the failure-domain segment of row r, numbered densely over
	// the whole batch in row order; -1 for padding. A node without a domain
	// (domain id -1) is a segment of its own.
	Seg []int32
	// SegInv[s] is 1/|segment s|.
	SegInv []float64

	ids  map[int32]int32 // domain id -> segment, one sample at a time
	cnt  []int32
	sc32 []float32
	sc64 []float64
}

// Rows is the number of rows B*N.
func (l *Layout) Rows() int { return l.B * l.N }

// Segments is the number of failure-domain segments in the batch.
func (l *Layout) Segments() int { return len(l.SegInv) }

// Set fills l for b samples of n rows: valid[r] says whether row r is a real
// node, domain[r] its failure-domain id (nodes of one sample with the same id
// are neighbours; -1 means none but itself). Domain ids are compared within a
// sample only. A sample with no valid row pools to zero.
func (l *Layout) Set(b, n int, valid []bool, domain []int32) error {
	r := b * n
	if len(valid) != r || len(domain) != r {
		return fmt.Errorf("layout: %d valid flags and %d domain ids for %d rows", len(valid), len(domain), r)
	}
	l.B, l.N = b, n
	l.PoolW = Grow(l.PoolW, r)
	l.Seg = Grow(l.Seg, r)
	l.SegInv = l.SegInv[:0]
	l.cnt = l.cnt[:0]
	if l.ids == nil {
		l.ids = make(map[int32]int32)
	}
	for s := range b {
		clear(l.ids)
		nv := 0
		for i := s * n; i < (s+1)*n; i++ {
			if !valid[i] {
				l.Seg[i] = -1
				continue
			}
			nv++
			d := domain[i]
			seg, ok := l.ids[d]
			if d < 0 || !ok {
				seg = int32(len(l.cnt))
				l.cnt = append(l.cnt, 0)
				if d >= 0 {
					l.ids[d] = seg
				}
			}
			l.Seg[i] = seg
			l.cnt[seg]++
		}
		w := 0.0
		if nv > 0 {
			w = 1 / float64(nv)
		}
		for i := s * n; i < (s+1)*n; i++ {
			if valid[i] {
				l.PoolW[i] = w
			} else {
				l.PoolW[i] = 0
			}
		}
	}
	for _, c := range l.cnt {
		l.SegInv = append(l.SegInv, 1/float64(c))
	}
	return nil
}

func scratch[T Float](l *Layout, n int) []T {
	var z T
	switch any(z).(type) {
	case float32:
		l.sc32 = Grow(l.sc32, n)
		return any(l.sc32).([]T)
	default:
		l.sc64 = Grow(l.sc64, n)
		return any(l.sc64).([]T)
	}
}

// Pool writes dst (B x h) = the per-sample sum of the rows of src (R x h),
// each row weighted by PoolW (weighted) or by 1 (every row, padding included).
func Pool[T Float](l *Layout, dst, src []T, h int, weighted bool) {
	clear(dst[:l.B*h])
	for r := range l.Rows() {
		w := T(1)
		if weighted {
			if l.PoolW[r] == 0 {
				continue
			}
			w = T(l.PoolW[r])
		}
		axpy(w, src[r*h:(r+1)*h], dst[(r/l.N)*h:(r/l.N+1)*h])
	}
}

// Spread writes dst (R x h): row r = src's row of r's sample (B x h), times
// PoolW[r] (weighted) or 1. It is the adjoint of Pool with the same weights.
func Spread[T Float](l *Layout, dst, src []T, h int, weighted bool) {
	for r := range l.Rows() {
		w := T(1)
		if weighted {
			w = T(l.PoolW[r])
		}
		d := dst[r*h : (r+1)*h]
		s := src[(r/l.N)*h : (r/l.N+1)*h]
		for j := range d {
			d[j] = w * s[j]
		}
	}
}

// SegMeans returns the S x h matrix of the means over each segment of the
// columns [off, off+h) of src (rows of width stride). It lives in l's
// scratch space: valid until l's next kernel call.
func SegMeans[T Float](l *Layout, src []T, stride, off, h int) []T {
	return segMeans(l, src, stride, off, h)
}

func segMeans[T Float](l *Layout, src []T, stride, off, h int) []T {
	m := scratch[T](l, l.Segments()*h)
	clear(m)
	for r := range l.Rows() {
		seg := l.Seg[r]
		if seg < 0 {
			continue
		}
		axpy(1, src[r*stride+off:r*stride+off+h], m[int(seg)*h:int(seg+1)*h])
	}
	for seg, inv := range l.SegInv {
		d := m[seg*h : (seg+1)*h]
		w := T(inv)
		for j := range d {
			d[j] *= w
		}
	}
	return m
}

// Aggregate writes dst (R x h): for row r of sample b,
//
//	dst[r] = a[r, 0:h] + mean over r's segment of a[., h:2h] + c[b]
//
// where a is R x 2h and c is B x h; a padding row gets no segment mean.
// This is one message-passing round's pre-activation: the self term, the
// failure-domain neighbour term and the per-sample context term.
func Aggregate[T Float](l *Layout, dst, a, c []T, h int) {
	m := segMeans(l, a, 2*h, h, h)
	for r := range l.Rows() {
		d := dst[r*h : (r+1)*h]
		self := a[r*2*h : r*2*h+h]
		self = self[:len(d)]
		ctx := c[(r/l.N)*h : (r/l.N+1)*h]
		ctx = ctx[:len(d)]
		if seg := l.Seg[r]; seg >= 0 {
			nb := m[int(seg)*h : int(seg+1)*h]
			nb = nb[:len(d)]
			for j := range d {
				d[j] = self[j] + nb[j] + ctx[j]
			}
		} else {
			for j := range d {
				d[j] = self[j] + ctx[j]
			}
		}
	}
}

// Combine writes dst (R x h): for row r of sample b,
//
//	dst[r] = relu(self[r] + seg[segment of r] + c[b])
//
// (no seg term for padding rows). It is Aggregate with the neighbour
// weights applied after the segment mean: the host pass multiplies the S
// segment means by the neighbour weights, S x h x h work instead of R x h x h.
func Combine[T Float](l *Layout, dst, self, seg, c []T, h int) {
	for r := range l.Rows() {
		d := dst[r*h : (r+1)*h]
		sf := self[r*h : (r+1)*h]
		sf = sf[:len(d)]
		ctx := c[(r/l.N)*h : (r/l.N+1)*h]
		ctx = ctx[:len(d)]
		if s := l.Seg[r]; s >= 0 {
			nb := seg[int(s)*h : int(s+1)*h]
			nb = nb[:len(d)]
			for j := range d {
				d[j] = sf[j] + nb[j] + ctx[j]
			}
		} else {
			for j := range d {
				d[j] = sf[j] + ctx[j]
			}
		}
		Relu(d)
	}
}

// AggregateGrad writes dst (R x 2h), the gradient of Aggregate's output with
// respect to a given the output's gradient g (R x h): dst[r, 0:h] = g[r] and
// dst[r, h:2h] = mean of g over r's segment (0 for padding). The neighbour
// mean's matrix is symmetric, so its adjoint is itself.
func AggregateGrad[T Float](l *Layout, dst, g []T, h int) {
	m := segMeans(l, g, h, 0, h)
	for r := range l.Rows() {
		copy(dst[r*2*h:r*2*h+h], g[r*h:(r+1)*h])
		nb := dst[r*2*h+h : (r+1)*2*h]
		if seg := l.Seg[r]; seg >= 0 {
			copy(nb, m[int(seg)*h:int(seg+1)*h])
		} else {
			clear(nb)
		}
	}
}

// RowDot writes dst (B x N) with dst[r] = x[r] . q[sample of r] for x
// (R x h) and q (B x h): the attention scores of every node.
func RowDot[T Float](l *Layout, dst, x, q []T, h int) {
	for r := range l.Rows() {
		xs := x[r*h : (r+1)*h]
		dst[r] = dot(xs, q[(r/l.N)*h:(r/l.N+1)*h])
	}
}

// RowDotGradX writes dst (R x h) = g[r] * q[sample of r]: the gradient of
// RowDot with respect to x, given the output's gradient g (B x N).
func RowDotGradX[T Float](l *Layout, dst, g, q []T, h int) {
	for r := range l.Rows() {
		d := dst[r*h : (r+1)*h]
		qs := q[(r/l.N)*h : (r/l.N+1)*h]
		qs = qs[:len(d)]
		gr := g[r]
		for j := range d {
			d[j] = gr * qs[j]
		}
	}
}

// RowDotGradQ writes dst (B x h) = sum over the rows r of each sample of
// g[r] * x[r]: the gradient of RowDot with respect to q.
func RowDotGradQ[T Float](l *Layout, dst, g, x []T, h int) {
	clear(dst[:l.B*h])
	for r := range l.Rows() {
		gr := g[r]
		if gr == 0 {
			continue
		}
		axpy(gr, x[r*h:(r+1)*h], dst[(r/l.N)*h:(r/l.N+1)*h])
	}
}
