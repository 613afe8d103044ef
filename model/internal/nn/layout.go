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
	// SegSample[s] is the sample segment s belongs to.
	SegSample []int32
	// SegPoolW[s] is |segment s| / n_b for its sample b: the per-sample mean
	// over valid rows is the SegPoolW-weighted sum of the segment means.
	SegPoolW []float64

	ids map[int32]int32 // domain id -> segment, one sample at a time
	cnt []int32         // rows per segment
	nv  []int32         // valid rows per sample
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
	l.SegSample = l.SegSample[:0]
	l.SegPoolW = l.SegPoolW[:0]
	l.cnt = l.cnt[:0]
	l.nv = l.nv[:0]
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
				l.SegSample = append(l.SegSample, int32(s))
				if d >= 0 {
					l.ids[d] = seg
				}
			}
			l.Seg[i] = seg
			l.cnt[seg]++
		}
		l.nv = append(l.nv, int32(nv))
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
	for seg, c := range l.cnt {
		l.SegInv = append(l.SegInv, 1/float64(c))
		l.SegPoolW = append(l.SegPoolW, float64(c)/float64(l.nv[l.SegSample[seg]]))
	}
	return nil
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

// SegMeans writes dst (cap x h): row s < Segments() is the mean of the rows
// of src (R x h) in segment s, and rows from Segments() to cap are zero.
// cap >= Segments() lets a graph of fixed shape take batches with fewer
// segments.
func SegMeans[T Float](l *Layout, dst, src []T, h int) {
	SegSums(l, dst, src, h)
	for seg, inv := range l.SegInv {
		d := dst[seg*h : (seg+1)*h]
		w := T(inv)
		for j := range d {
			d[j] *= w
		}
	}
}

// SegSums is SegMeans without the division by the segment sizes: the
// adjoint of SegGather.
func SegSums[T Float](l *Layout, dst, src []T, h int) {
	clear(dst)
	for r := range l.Rows() {
		if seg := l.Seg[r]; seg >= 0 {
			axpy(1, src[r*h:(r+1)*h], dst[int(seg)*h:int(seg+1)*h])
		}
	}
}

// SegGather writes dst (R x h): row r is row seg(r) of src (cap x h), times
// 1/|seg(r)| when scaled (the adjoint of SegMeans), or zero for padding.
func SegGather[T Float](l *Layout, dst, src []T, h int, scaled bool) {
	for r := range l.Rows() {
		d := dst[r*h : (r+1)*h]
		seg := l.Seg[r]
		if seg < 0 {
			clear(d)
			continue
		}
		copy(d, src[int(seg)*h:int(seg+1)*h])
		if scaled {
			w := T(l.SegInv[seg])
			for j := range d {
				d[j] *= w
			}
		}
	}
}

// Combine writes dst (R x h): dst[r] = self[r] + nb[seg(r)], or self[r]
// for a padding row, with self R x h and nb cap x h (one row per
// failure-domain segment: the neighbour and context terms of a message-
// passing round). With relu set, dst is its ReLU (the host pass fuses them).
func Combine[T Float](l *Layout, dst, self, nb []T, h int, relu bool) {
	for r := range l.Rows() {
		d := dst[r*h : (r+1)*h]
		sf := self[r*h : (r+1)*h]
		sf = sf[:len(d)]
		copy(d, sf)
		if s := l.Seg[r]; s >= 0 {
			// d += 1*nb: the product by 1 is exact, so d is sf + nb as a
			// plain loop gives it, through BLAS's vector kernel
			axpy(1, nb[int(s)*h : int(s+1)*h][:len(d)], d)
		}
		if relu {
			Relu(d)
		}
	}
}

// SegPool writes dst (B x h): row b is the sum over b's segments s of rows
// src[s] (src is cap x h), weighted by SegPoolW (weighted: the mean over the
// sample's valid rows when src holds segment means) or by 1.
func SegPool[T Float](l *Layout, dst, src []T, h int, weighted bool) {
	clear(dst[:l.B*h])
	for s, b := range l.SegSample {
		w := T(1)
		if weighted {
			w = T(l.SegPoolW[s])
		}
		axpy(w, src[s*h:(s+1)*h], dst[int(b)*h:int(b+1)*h])
	}
}

// SegSpread writes dst (cap x h): row s < Segments() is row sample(s) of
// src (B x h), times SegPoolW[s] (weighted) or 1; later rows are zero. It is
// the adjoint of SegPool.
func SegSpread[T Float](l *Layout, dst, src []T, h int, weighted bool) {
	clear(dst)
	for s, b := range l.SegSample {
		w := T(1)
		if weighted {
			w = T(l.SegPoolW[s])
		}
		axpy(w, src[int(b)*h:int(b+1)*h], dst[s*h:(s+1)*h])
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
