package nn

import (
	"fmt"
	"hash"
	"hash/fnv"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The gorgonia ops of this file wrap the Layout kernels and two column
// shuffles. Gorgonia has no segment or scatter op whose gradient is right
// (ByIndices is wrong, see ../shared/notes/gorgonia.md); BatchedMatMul loops
// over the batch with a tensor view per sample; and Concat's gradient copies
// through a generic element iterator. So these linear maps are ops of their
// own. Each differentiable op's SymDiff returns its adjoint built from the
// ops here, and gorgonia's reverse-mode differentiation composes them with
// its stock ops (matmuls, ReLU, tanh, log-softmax, the loss). Every op's
// gradient is checked against finite differences in ops_test.go.

// PoolRows returns the node (B, h) = per-sample sums of the rows of x (R, h)
// weighted by l.PoolW (weighted: the mean over valid nodes) or by 1.
func PoolRows(x *G.Node, l *Layout, weighted bool) (*G.Node, error) {
	return G.ApplyOp(poolOp(l, weighted), x)
}

// SpreadRows returns the node (R, h) whose row r is x's row (B, h) of r's
// sample, times l.PoolW[r] (weighted) or 1: the adjoint of PoolRows.
func SpreadRows(x *G.Node, l *Layout, weighted bool) (*G.Node, error) {
	return G.ApplyOp(spreadOp(l, weighted), x)
}

// SegMeanRows returns the node (cap, h) of SegMeans(x (R, h)): one row per
// failure-domain segment, zero rows beyond l.Segments(). cap is fixed when
// the graph is built; every batch run through it must have at most cap
// segments.
func SegMeanRows(x *G.Node, l *Layout, cap int) (*G.Node, error) {
	return G.ApplyOp(segOp(l, cap, true), x)
}

// CombineRows returns the node (R, h) of Combine(self (R, h), nb (cap, h))
// without the ReLU.
func CombineRows(self, nb *G.Node, l *Layout) (*G.Node, error) {
	if len(nb.Shape()) != 2 {
		return nil, fmt.Errorf("combine: neighbour term has shape %v, want a matrix", nb.Shape())
	}
	return G.ApplyOp(combineOp(l, nb.Shape()[0]), self, nb)
}

// SegPoolRows returns the node (B, h) of SegPool(x (cap, h)).
func SegPoolRows(x *G.Node, l *Layout, weighted bool) (*G.Node, error) {
	if len(x.Shape()) != 2 {
		return nil, fmt.Errorf("segment pool: input has shape %v, want a matrix", x.Shape())
	}
	return G.ApplyOp(segPoolOp(l, x.Shape()[0], weighted), x)
}

// SegSpreadRows returns the node (cap, h) of SegSpread(x (B, h)).
func SegSpreadRows(x *G.Node, l *Layout, cap int, weighted bool) (*G.Node, error) {
	return G.ApplyOp(segSpreadOp(l, cap, weighted), x)
}

// RowDots returns the node (B, N) of RowDot(x (R, h), q (B, h)).
func RowDots(x, q *G.Node, l *Layout) (*G.Node, error) {
	return G.ApplyOp(rowDotOp(l), x, q)
}

// CatCols returns the node (B, w1+w2+...[+1]) with the columns of the
// matrices xs side by side, and a last column of ones when ones is set.
func CatCols(ones bool, xs ...*G.Node) (*G.Node, error) {
	widths := make([]int, len(xs))
	for i, x := range xs {
		s := x.Shape()
		if len(s) != 2 {
			return nil, fmt.Errorf("concat: input %d has shape %v, want a matrix", i, s)
		}
		widths[i] = s[1]
	}
	return G.ApplyOp(catOp(widths, ones), xs...)
}

// Rectify returns the node relu(x) for a matrix x. Gorgonia's Rectify
// differentiates through a comparison tensor and a product that allocate
// and clone; this op's gradient is one masked copy.
func Rectify(x *G.Node) (*G.Node, error) {
	return G.ApplyOp(reluOp(), x)
}

// kernelOp is a gorgonia op over float32 or float64 matrices whose work is
// a host kernel: every op of this file is one.
type kernelOp struct {
	name  string // unique per behaviour: kind, layout and parameters
	arity int
	shape func(in []tensor.Shape) (tensor.Shape, error)
	do32  func(dst []float32, in [][]float32)
	do64  func(dst []float64, in [][]float64)
	// diff returns the gradients of the inputs; nil for ops that only
	// appear in gradient graphs.
	diff func(in G.Nodes, out, grad *G.Node) (G.Nodes, error)

	// out is the tensor Do returned last time, written again by the next
	// run instead of allocating: the tape machine forgets every value on
	// Reset, and each run is over before the next begins.
	out *tensor.Dense
}

func (op *kernelOp) Arity() int { return op.arity }
func (op *kernelOp) Type() hm.Type {
	ts := make([]hm.Type, op.arity+1)
	for i := range ts {
		ts[i] = G.TensorType{Dims: 2, Of: hm.TypeVariable('a')}
	}
	return hm.NewFnType(ts...)
}
func (op *kernelOp) ReturnsPtr() bool      { return false }
func (op *kernelOp) CallsExtern() bool     { return false }
func (op *kernelOp) OverwritesInput() int  { return -1 }
func (op *kernelOp) String() string        { return op.name }
func (op *kernelOp) WriteHash(h hash.Hash) { fmt.Fprint(h, op.name) }
func (op *kernelOp) Hashcode() uint32 {
	h := fnv.New32a()
	fmt.Fprint(h, op.name)
	return h.Sum32()
}

func (op *kernelOp) DiffWRT(n int) []bool {
	w := make([]bool, n)
	for i := range w {
		w[i] = op.diff != nil
	}
	return w
}

func (op *kernelOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	if op.diff == nil {
		return nil, fmt.Errorf("%s is not differentiable", op.name)
	}
	return op.diff(in, out, grad)
}

func (op *kernelOp) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	if len(ds) != op.arity {
		return nil, fmt.Errorf("%s: %d inputs, want %d", op.name, len(ds), op.arity)
	}
	shapes := make([]tensor.Shape, len(ds))
	for i, d := range ds {
		s, ok := d.(tensor.Shape)
		if !ok || len(s) != 2 {
			return nil, fmt.Errorf("%s: input %d is %v, want a matrix", op.name, i, d)
		}
		shapes[i] = s
	}
	return op.shape(shapes)
}

func (op *kernelOp) inputs(vs []G.Value) ([]*tensor.Dense, tensor.Shape, error) {
	if len(vs) != op.arity {
		return nil, nil, fmt.Errorf("%s: %d inputs, want %d", op.name, len(vs), op.arity)
	}
	ds := make([]*tensor.Dense, len(vs))
	shapes := make([]tensor.Shape, len(vs))
	for i, v := range vs {
		d, ok := v.(*tensor.Dense)
		if !ok || len(d.Shape()) != 2 || !d.IsNativelyAccessible() {
			return nil, nil, fmt.Errorf("%s: input %d is %T %v", op.name, i, v, v.Shape())
		}
		if d.Dtype() != ds0Dtype(ds, d) {
			return nil, nil, fmt.Errorf("%s: mixed dtypes", op.name)
		}
		ds[i], shapes[i] = d, d.Shape()
	}
	s, err := op.shape(shapes)
	return ds, s, err
}

func ds0Dtype(ds []*tensor.Dense, d *tensor.Dense) tensor.Dtype {
	if ds[0] != nil {
		return ds[0].Dtype()
	}
	return d.Dtype()
}

func (op *kernelOp) Do(vs ...G.Value) (G.Value, error) {
	ds, s, err := op.inputs(vs)
	if err != nil {
		return nil, err
	}
	if op.out == nil || !op.out.Shape().Eq(s) || op.out.Dtype() != ds[0].Dtype() {
		op.out = tensor.New(tensor.Of(ds[0].Dtype()), tensor.WithShape(s...))
	}
	return op.run(op.out, ds)
}

func (op *kernelOp) UsePreallocDo(pre G.Value, vs ...G.Value) (G.Value, error) {
	ds, s, err := op.inputs(vs)
	if err != nil {
		return nil, err
	}
	dst, ok := pre.(*tensor.Dense)
	if !ok || !dst.Shape().Eq(s) || dst.Dtype() != ds[0].Dtype() {
		return nil, fmt.Errorf("%s: cannot write %v %v into %v", op.name, ds[0].Dtype(), s, pre.Shape())
	}
	return op.run(dst, ds)
}

func (op *kernelOp) run(dst *tensor.Dense, ds []*tensor.Dense) (G.Value, error) {
	switch dst.Dtype() {
	case tensor.Float32:
		in := make([][]float32, len(ds))
		for i, d := range ds {
			in[i] = Data[float32](d)
		}
		op.do32(Data[float32](dst), in)
	case tensor.Float64:
		in := make([][]float64, len(ds))
		for i, d := range ds {
			in[i] = Data[float64](d)
		}
		op.do64(Data[float64](dst), in)
	default:
		return nil, fmt.Errorf("%s: dtype %v", op.name, dst.Dtype())
	}
	return dst, nil
}

func wantRows(name string, s tensor.Shape, rows int) error {
	if s[0] != rows {
		return fmt.Errorf("%s: input shape %v, want %d rows", name, s, rows)
	}
	return nil
}

func poolOp(l *Layout, weighted bool) *kernelOp {
	op := &kernelOp{name: fmt.Sprintf("PoolRows{%p,%t}", l, weighted), arity: 1}
	op.shape = func(in []tensor.Shape) (tensor.Shape, error) {
		return tensor.Shape{l.B, in[0][1]}, wantRows(op.name, in[0], l.Rows())
	}
	op.do32 = func(dst []float32, in [][]float32) { Pool(l, dst, in[0], len(in[0])/l.Rows(), weighted) }
	op.do64 = func(dst []float64, in [][]float64) { Pool(l, dst, in[0], len(in[0])/l.Rows(), weighted) }
	op.diff = func(_ G.Nodes, _, grad *G.Node) (G.Nodes, error) {
		d, err := SpreadRows(grad, l, weighted)
		return G.Nodes{d}, err
	}
	return op
}

func spreadOp(l *Layout, weighted bool) *kernelOp {
	op := &kernelOp{name: fmt.Sprintf("SpreadRows{%p,%t}", l, weighted), arity: 1}
	op.shape = func(in []tensor.Shape) (tensor.Shape, error) {
		return tensor.Shape{l.Rows(), in[0][1]}, wantRows(op.name, in[0], l.B)
	}
	op.do32 = func(dst []float32, in [][]float32) { Spread(l, dst, in[0], len(in[0])/l.B, weighted) }
	op.do64 = func(dst []float64, in [][]float64) { Spread(l, dst, in[0], len(in[0])/l.B, weighted) }
	op.diff = func(_ G.Nodes, _, grad *G.Node) (G.Nodes, error) {
		d, err := PoolRows(grad, l, weighted)
		return G.Nodes{d}, err
	}
	return op
}

// segOp: (R, h) -> (cap, h), per-segment means (mean) or sums; the
// adjoint of segGatherOp with the same scaling.
func segOp(l *Layout, cap int, mean bool) *kernelOp {
	op := &kernelOp{name: fmt.Sprintf("SegRows{%p,%d,%t}", l, cap, mean), arity: 1}
	op.shape = func(in []tensor.Shape) (tensor.Shape, error) {
		if l.Segments() > cap {
			return nil, fmt.Errorf("%s: %d segments", op.name, l.Segments())
		}
		return tensor.Shape{cap, in[0][1]}, wantRows(op.name, in[0], l.Rows())
	}
	op.do32 = func(dst []float32, in [][]float32) { segKernel(l, dst, in[0], len(dst)/cap, mean) }
	op.do64 = func(dst []float64, in [][]float64) { segKernel(l, dst, in[0], len(dst)/cap, mean) }
	op.diff = func(_ G.Nodes, _, grad *G.Node) (G.Nodes, error) {
		d, err := G.ApplyOp(segGatherOp(l, cap, mean), grad)
		return G.Nodes{d}, err
	}
	return op
}

func segKernel[T Float](l *Layout, dst, src []T, h int, mean bool) {
	if mean {
		SegMeans(l, dst, src, h)
	} else {
		SegSums(l, dst, src, h)
	}
}

// segGatherOp: (cap, h) -> (R, h), row r = row seg(r), scaled by
// 1/|seg(r)| or not; the adjoint of segOp.
func segGatherOp(l *Layout, cap int, scaled bool) *kernelOp {
	op := &kernelOp{name: fmt.Sprintf("SegGather{%p,%d,%t}", l, cap, scaled), arity: 1}
	op.shape = func(in []tensor.Shape) (tensor.Shape, error) {
		return tensor.Shape{l.Rows(), in[0][1]}, wantRows(op.name, in[0], cap)
	}
	op.do32 = func(dst []float32, in [][]float32) { SegGather(l, dst, in[0], len(in[0])/cap, scaled) }
	op.do64 = func(dst []float64, in [][]float64) { SegGather(l, dst, in[0], len(in[0])/cap, scaled) }
	op.diff = func(_ G.Nodes, _, grad *G.Node) (G.Nodes, error) {
		d, err := G.ApplyOp(segOp(l, cap, scaled), grad)
		return G.Nodes{d}, err
	}
	return op
}

// combineOp: self (R, h), nb (cap, h) -> (R, h), see Combine.
func combineOp(l *Layout, cap int) *kernelOp {
	op := &kernelOp{name: fmt.Sprintf("CombineRows{%p,%d}", l, cap), arity: 2}
	op.shape = func(in []tensor.Shape) (tensor.Shape, error) {
		if in[0][0] != l.Rows() || in[1][0] != cap || in[1][1] != in[0][1] {
			return nil, fmt.Errorf("%s: shapes %v, %v with layout %dx%d", op.name, in[0], in[1], l.B, l.N)
		}
		return tensor.Shape{l.Rows(), in[0][1]}, nil
	}
	op.do32 = func(dst []float32, in [][]float32) { Combine(l, dst, in[0], in[1], len(in[1])/cap, false) }
	op.do64 = func(dst []float64, in [][]float64) { Combine(l, dst, in[0], in[1], len(in[1])/cap, false) }
	op.diff = func(_ G.Nodes, _, grad *G.Node) (G.Nodes, error) {
		dnb, err := G.ApplyOp(segOp(l, cap, false), grad)
		return G.Nodes{grad, dnb}, err
	}
	return op
}

// segPoolOp: (cap, h) -> (B, h), see SegPool; the adjoint of segSpreadOp.
func segPoolOp(l *Layout, cap int, weighted bool) *kernelOp {
	op := &kernelOp{name: fmt.Sprintf("SegPool{%p,%d,%t}", l, cap, weighted), arity: 1}
	op.shape = func(in []tensor.Shape) (tensor.Shape, error) {
		return tensor.Shape{l.B, in[0][1]}, wantRows(op.name, in[0], cap)
	}
	op.do32 = func(dst []float32, in [][]float32) { SegPool(l, dst, in[0], len(in[0])/cap, weighted) }
	op.do64 = func(dst []float64, in [][]float64) { SegPool(l, dst, in[0], len(in[0])/cap, weighted) }
	op.diff = func(_ G.Nodes, _, grad *G.Node) (G.Nodes, error) {
		d, err := G.ApplyOp(segSpreadOp(l, cap, weighted), grad)
		return G.Nodes{d}, err
	}
	return op
}

// segSpreadOp: (B, h) -> (cap, h), see SegSpread; the adjoint of segPoolOp.
func segSpreadOp(l *Layout, cap int, weighted bool) *kernelOp {
	op := &kernelOp{name: fmt.Sprintf("SegSpread{%p,%d,%t}", l, cap, weighted), arity: 1}
	op.shape = func(in []tensor.Shape) (tensor.Shape, error) {
		return tensor.Shape{cap, in[0][1]}, wantRows(op.name, in[0], l.B)
	}
	op.do32 = func(dst []float32, in [][]float32) { SegSpread(l, dst, in[0], len(in[0])/l.B, weighted) }
	op.do64 = func(dst []float64, in [][]float64) { SegSpread(l, dst, in[0], len(in[0])/l.B, weighted) }
	op.diff = func(_ G.Nodes, _, grad *G.Node) (G.Nodes, error) {
		d, err := G.ApplyOp(segPoolOp(l, cap, weighted), grad)
		return G.Nodes{d}, err
	}
	return op
}

func rowDotOp(l *Layout) *kernelOp {
	op := &kernelOp{name: fmt.Sprintf("RowDots{%p}", l), arity: 2}
	op.shape = func(in []tensor.Shape) (tensor.Shape, error) {
		if in[0][0] != l.Rows() || in[1][0] != l.B || in[0][1] != in[1][1] {
			return nil, fmt.Errorf("%s: shapes %v, %v with layout %dx%d", op.name, in[0], in[1], l.B, l.N)
		}
		return tensor.Shape{l.B, l.N}, nil
	}
	op.do32 = func(dst []float32, in [][]float32) { RowDot(l, dst, in[0], in[1], len(in[1])/l.B) }
	op.do64 = func(dst []float64, in [][]float64) { RowDot(l, dst, in[0], in[1], len(in[1])/l.B) }
	op.diff = func(in G.Nodes, _, grad *G.Node) (G.Nodes, error) {
		dx, err := G.ApplyOp(rowDotGradXOp(l), grad, in[1])
		if err != nil {
			return nil, err
		}
		dq, err := G.ApplyOp(rowDotGradQOp(l), grad, in[0])
		return G.Nodes{dx, dq}, err
	}
	return op
}

// rowDotGradXOp: (g (B, N), q (B, h)) -> (R, h).
func rowDotGradXOp(l *Layout) *kernelOp {
	op := &kernelOp{name: fmt.Sprintf("RowDotsGradX{%p}", l), arity: 2}
	op.shape = func(in []tensor.Shape) (tensor.Shape, error) {
		if in[0][0] != l.B || in[0][1] != l.N || in[1][0] != l.B {
			return nil, fmt.Errorf("%s: shapes %v, %v with layout %dx%d", op.name, in[0], in[1], l.B, l.N)
		}
		return tensor.Shape{l.Rows(), in[1][1]}, nil
	}
	op.do32 = func(dst []float32, in [][]float32) { RowDotGradX(l, dst, in[0], in[1], len(in[1])/l.B) }
	op.do64 = func(dst []float64, in [][]float64) { RowDotGradX(l, dst, in[0], in[1], len(in[1])/l.B) }
	return op
}

// rowDotGradQOp: (g (B, N), x (R, h)) -> (B, h).
func rowDotGradQOp(l *Layout) *kernelOp {
	op := &kernelOp{name: fmt.Sprintf("RowDotsGradQ{%p}", l), arity: 2}
	op.shape = func(in []tensor.Shape) (tensor.Shape, error) {
		if in[0][0] != l.B || in[0][1] != l.N || in[1][0] != l.Rows() {
			return nil, fmt.Errorf("%s: shapes %v, %v with layout %dx%d", op.name, in[0], in[1], l.B, l.N)
		}
		return tensor.Shape{l.B, in[1][1]}, nil
	}
	op.do32 = func(dst []float32, in [][]float32) { RowDotGradQ(l, dst, in[0], in[1], len(in[1])/l.Rows()) }
	op.do64 = func(dst []float64, in [][]float64) { RowDotGradQ(l, dst, in[0], in[1], len(in[1])/l.Rows()) }
	return op
}

func catOp(widths []int, ones bool) *kernelOp {
	total := 0
	for _, w := range widths {
		total += w
	}
	if ones {
		total++
	}
	op := &kernelOp{name: fmt.Sprintf("ConcatCols{%v,%t}", widths, ones), arity: len(widths)}
	op.shape = func(in []tensor.Shape) (tensor.Shape, error) {
		for i, s := range in {
			if s[0] != in[0][0] || s[1] != widths[i] {
				return nil, fmt.Errorf("%s: input %d has shape %v", op.name, i, s)
			}
		}
		return tensor.Shape{in[0][0], total}, nil
	}
	op.do32 = func(dst []float32, in [][]float32) { concat(dst, in, widths, total, ones) }
	op.do64 = func(dst []float64, in [][]float64) { concat(dst, in, widths, total, ones) }
	op.diff = func(in G.Nodes, _, grad *G.Node) (G.Nodes, error) {
		out := make(G.Nodes, len(in))
		off := 0
		for i, w := range widths {
			var err error
			if out[i], err = G.ApplyOp(colsOp(off, w, total), grad); err != nil {
				return nil, err
			}
			off += w
		}
		return out, nil
	}
	return op
}

func concat[T Float](dst []T, in [][]T, widths []int, total int, ones bool) {
	for r := range len(dst) / total {
		off := r * total
		for i, w := range widths {
			copy(dst[off:off+w], in[i][r*w:(r+1)*w])
			off += w
		}
		if ones {
			dst[off] = 1
		}
	}
}

// colsOp: (rows, total) -> (rows, w), columns [off, off+w).
func colsOp(off, w, total int) *kernelOp {
	op := &kernelOp{name: fmt.Sprintf("Cols{%d,%d,%d}", off, w, total), arity: 1}
	op.shape = func(in []tensor.Shape) (tensor.Shape, error) {
		if in[0][1] != total {
			return nil, fmt.Errorf("%s: input shape %v", op.name, in[0])
		}
		return tensor.Shape{in[0][0], w}, nil
	}
	op.do32 = func(dst []float32, in [][]float32) { cols(dst, in[0], off, w, total) }
	op.do64 = func(dst []float64, in [][]float64) { cols(dst, in[0], off, w, total) }
	return op
}

func cols[T Float](dst, src []T, off, w, total int) {
	for r := range len(dst) / w {
		copy(dst[r*w:(r+1)*w], src[r*total+off:r*total+off+w])
	}
}

func reluOp() *kernelOp {
	op := &kernelOp{name: "Rectify", arity: 1}
	op.shape = func(in []tensor.Shape) (tensor.Shape, error) { return in[0].Clone(), nil }
	op.do32 = func(dst []float32, in [][]float32) { copy(dst, in[0]); Relu(dst) }
	op.do64 = func(dst []float64, in [][]float64) { copy(dst, in[0]); Relu(dst) }
	op.diff = func(_ G.Nodes, out, grad *G.Node) (G.Nodes, error) {
		d, err := G.ApplyOp(reluGradOp(), out, grad)
		return G.Nodes{d}, err
	}
	return op
}

// reluGradOp: (relu output, its gradient) -> the input's gradient.
func reluGradOp() *kernelOp {
	op := &kernelOp{name: "RectifyGrad", arity: 2}
	op.shape = func(in []tensor.Shape) (tensor.Shape, error) {
		if !in[0].Eq(in[1]) {
			return nil, fmt.Errorf("%s: shapes %v, %v", op.name, in[0], in[1])
		}
		return in[0].Clone(), nil
	}
	op.do32 = func(dst []float32, in [][]float32) { ReluGrad(dst, in[0], in[1]) }
	op.do64 = func(dst []float64, in [][]float64) { ReluGrad(dst, in[0], in[1]) }
	return op
}
