package nn

import (
	"fmt"
	"hash"
	"hash/fnv"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The gorgonia ops below wrap the Layout kernels. Gorgonia has no segment or
// scatter op whose gradient is right (ByIndices is wrong, see
// ../shared/notes/gorgonia.md), and BatchedMatMul loops over the batch with
// a tensor view per sample, so these three linear maps are ops of their own.
// Each one's SymDiff is its adjoint, built from the same ops, so gorgonia's
// reverse-mode differentiation composes them with its stock ops. Their
// gradients are checked against finite differences in ops_test.go.

// PoolRows returns the node (B, h) = per-sample sums of the rows of x (R, h)
// weighted by l.PoolW (weighted: the mean over valid nodes) or by 1.
func PoolRows(x *G.Node, l *Layout, weighted bool) (*G.Node, error) {
	return G.ApplyOp(poolOp{l: l, weighted: weighted}, x)
}

// SpreadRows returns the node (R, h) whose row r is x's row (B, h) of r's
// sample, times l.PoolW[r] (weighted) or 1: the adjoint of PoolRows.
func SpreadRows(x *G.Node, l *Layout, weighted bool) (*G.Node, error) {
	return G.ApplyOp(spreadOp{l: l, weighted: weighted}, x)
}

// AggregateRows returns the node (R, h) of Aggregate(a (R, 2h), c (B, h)).
func AggregateRows(a, c *G.Node, l *Layout) (*G.Node, error) {
	return G.ApplyOp(aggOp{l: l}, a, c)
}

func matType() G.TensorType { return G.TensorType{Dims: 2, Of: hm.TypeVariable('a')} }

func hashOf(op fmt.Stringer) uint32 {
	h := fnv.New32a()
	fmt.Fprint(h, op.String())
	return h.Sum32()
}

func denseArg(v G.Value, cols int, what string) (*tensor.Dense, error) {
	d, ok := v.(*tensor.Dense)
	if !ok {
		return nil, fmt.Errorf("%s: input is %T, want *tensor.Dense", what, v)
	}
	if s := d.Shape(); len(s) != 2 || (cols > 0 && s[1] != cols) {
		return nil, fmt.Errorf("%s: input shape %v", what, s)
	}
	return d, nil
}

func matShape(ds []G.DimSizer, i int, what string) (rows, cols int, err error) {
	s, ok := ds[i].(tensor.Shape)
	if !ok || len(s) != 2 {
		return 0, 0, fmt.Errorf("%s: input %d is %v, want a matrix", what, i, ds[i])
	}
	return s[0], s[1], nil
}

func newLike(d *tensor.Dense, shape ...int) *tensor.Dense {
	return tensor.New(tensor.Of(d.Dtype()), tensor.WithShape(shape...))
}

// opBase carries the methods every op here has in common.
type opBase struct{}

func (opBase) ReturnsPtr() bool     { return false }
func (opBase) CallsExtern() bool    { return false }
func (opBase) OverwritesInput() int { return -1 }

// poolOp: (R, h) -> (B, h).
type poolOp struct {
	opBase
	l        *Layout
	weighted bool
}

func (op poolOp) Arity() int            { return 1 }
func (op poolOp) Type() hm.Type         { return hm.NewFnType(matType(), matType()) }
func (op poolOp) String() string        { return fmt.Sprintf("PoolRows{%p,%t}", op.l, op.weighted) }
func (op poolOp) WriteHash(h hash.Hash) { fmt.Fprint(h, op.String()) }
func (op poolOp) Hashcode() uint32      { return hashOf(op) }
func (op poolOp) DiffWRT(n int) []bool  { return []bool{true} }
func (op poolOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	d, err := SpreadRows(grad, op.l, op.weighted)
	return G.Nodes{d}, err
}

func (op poolOp) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	rows, cols, err := matShape(ds, 0, op.String())
	if err != nil {
		return nil, err
	}
	if rows != op.l.Rows() {
		return nil, fmt.Errorf("%v: %d rows, layout has %d", op, rows, op.l.Rows())
	}
	return tensor.Shape{op.l.B, cols}, nil
}

func (op poolOp) Do(in ...G.Value) (G.Value, error) {
	x, err := denseArg(in[0], 0, op.String())
	if err != nil {
		return nil, err
	}
	return op.UsePreallocDo(newLike(x, op.l.B, x.Shape()[1]), in...)
}

func (op poolOp) UsePreallocDo(pre G.Value, in ...G.Value) (G.Value, error) {
	x, err := denseArg(in[0], 0, op.String())
	if err != nil {
		return nil, err
	}
	h := x.Shape()[1]
	dst, err := denseArg(pre, h, op.String())
	if err != nil {
		return nil, err
	}
	if x.Shape()[0] != op.l.Rows() || dst.Shape()[0] != op.l.B {
		return nil, fmt.Errorf("%v: shapes %v -> %v, layout %dx%d", op, x.Shape(), dst.Shape(), op.l.B, op.l.N)
	}
	switch x.Dtype() {
	case tensor.Float32:
		Pool(op.l, Data[float32](dst), Data[float32](x), h, op.weighted)
	case tensor.Float64:
		Pool(op.l, Data[float64](dst), Data[float64](x), h, op.weighted)
	default:
		return nil, fmt.Errorf("%v: dtype %v", op, x.Dtype())
	}
	return dst, nil
}

// spreadOp: (B, h) -> (R, h).
type spreadOp struct {
	opBase
	l        *Layout
	weighted bool
}

func (op spreadOp) Arity() int            { return 1 }
func (op spreadOp) Type() hm.Type         { return hm.NewFnType(matType(), matType()) }
func (op spreadOp) String() string        { return fmt.Sprintf("SpreadRows{%p,%t}", op.l, op.weighted) }
func (op spreadOp) WriteHash(h hash.Hash) { fmt.Fprint(h, op.String()) }
func (op spreadOp) Hashcode() uint32      { return hashOf(op) }
func (op spreadOp) DiffWRT(n int) []bool  { return []bool{true} }
func (op spreadOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	d, err := PoolRows(grad, op.l, op.weighted)
	return G.Nodes{d}, err
}

func (op spreadOp) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	rows, cols, err := matShape(ds, 0, op.String())
	if err != nil {
		return nil, err
	}
	if rows != op.l.B {
		return nil, fmt.Errorf("%v: %d rows, layout has %d samples", op, rows, op.l.B)
	}
	return tensor.Shape{op.l.Rows(), cols}, nil
}

func (op spreadOp) Do(in ...G.Value) (G.Value, error) {
	x, err := denseArg(in[0], 0, op.String())
	if err != nil {
		return nil, err
	}
	return op.UsePreallocDo(newLike(x, op.l.Rows(), x.Shape()[1]), in...)
}

func (op spreadOp) UsePreallocDo(pre G.Value, in ...G.Value) (G.Value, error) {
	x, err := denseArg(in[0], 0, op.String())
	if err != nil {
		return nil, err
	}
	h := x.Shape()[1]
	dst, err := denseArg(pre, h, op.String())
	if err != nil {
		return nil, err
	}
	if x.Shape()[0] != op.l.B || dst.Shape()[0] != op.l.Rows() {
		return nil, fmt.Errorf("%v: shapes %v -> %v, layout %dx%d", op, x.Shape(), dst.Shape(), op.l.B, op.l.N)
	}
	switch x.Dtype() {
	case tensor.Float32:
		Spread(op.l, Data[float32](dst), Data[float32](x), h, op.weighted)
	case tensor.Float64:
		Spread(op.l, Data[float64](dst), Data[float64](x), h, op.weighted)
	default:
		return nil, fmt.Errorf("%v: dtype %v", op, x.Dtype())
	}
	return dst, nil
}

// aggOp: (R, 2h), (B, h) -> (R, h).
type aggOp struct {
	opBase
	l *Layout
}

func (op aggOp) Arity() int            { return 2 }
func (op aggOp) Type() hm.Type         { return hm.NewFnType(matType(), matType(), matType()) }
func (op aggOp) String() string        { return fmt.Sprintf("AggregateRows{%p}", op.l) }
func (op aggOp) WriteHash(h hash.Hash) { fmt.Fprint(h, op.String()) }
func (op aggOp) Hashcode() uint32      { return hashOf(op) }
func (op aggOp) DiffWRT(n int) []bool  { return []bool{true, true} }
func (op aggOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	da, err := G.ApplyOp(aggGradOp{l: op.l}, grad)
	if err != nil {
		return nil, err
	}
	dc, err := PoolRows(grad, op.l, false)
	return G.Nodes{da, dc}, err
}

func (op aggOp) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	ra, ca, err := matShape(ds, 0, op.String())
	if err != nil {
		return nil, err
	}
	rc, cc, err := matShape(ds, 1, op.String())
	if err != nil {
		return nil, err
	}
	if ra != op.l.Rows() || rc != op.l.B || ca != 2*cc {
		return nil, fmt.Errorf("%v: shapes (%d,%d), (%d,%d) with layout %dx%d", op, ra, ca, rc, cc, op.l.B, op.l.N)
	}
	return tensor.Shape{ra, cc}, nil
}

func (op aggOp) Do(in ...G.Value) (G.Value, error) {
	c, err := denseArg(in[1], 0, op.String())
	if err != nil {
		return nil, err
	}
	return op.UsePreallocDo(newLike(c, op.l.Rows(), c.Shape()[1]), in...)
}

func (op aggOp) UsePreallocDo(pre G.Value, in ...G.Value) (G.Value, error) {
	if len(in) != 2 {
		return nil, fmt.Errorf("%v: %d inputs", op, len(in))
	}
	c, err := denseArg(in[1], 0, op.String())
	if err != nil {
		return nil, err
	}
	h := c.Shape()[1]
	a, err := denseArg(in[0], 2*h, op.String())
	if err != nil {
		return nil, err
	}
	dst, err := denseArg(pre, h, op.String())
	if err != nil {
		return nil, err
	}
	if a.Shape()[0] != op.l.Rows() || c.Shape()[0] != op.l.B || dst.Shape()[0] != op.l.Rows() {
		return nil, fmt.Errorf("%v: shapes %v, %v -> %v", op, a.Shape(), c.Shape(), dst.Shape())
	}
	switch a.Dtype() {
	case tensor.Float32:
		Aggregate(op.l, Data[float32](dst), Data[float32](a), Data[float32](c), h)
	case tensor.Float64:
		Aggregate(op.l, Data[float64](dst), Data[float64](a), Data[float64](c), h)
	default:
		return nil, fmt.Errorf("%v: dtype %v", op, a.Dtype())
	}
	return dst, nil
}

// aggGradOp: (R, h) -> (R, 2h), the adjoint of aggOp with respect to a. It
// only appears in gradient graphs, which are never differentiated again.
type aggGradOp struct {
	opBase
	l *Layout
}

func (op aggGradOp) Arity() int            { return 1 }
func (op aggGradOp) Type() hm.Type         { return hm.NewFnType(matType(), matType()) }
func (op aggGradOp) String() string        { return fmt.Sprintf("AggregateRowsGrad{%p}", op.l) }
func (op aggGradOp) WriteHash(h hash.Hash) { fmt.Fprint(h, op.String()) }
func (op aggGradOp) Hashcode() uint32      { return hashOf(op) }

func (op aggGradOp) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	rows, cols, err := matShape(ds, 0, op.String())
	if err != nil {
		return nil, err
	}
	if rows != op.l.Rows() {
		return nil, fmt.Errorf("%v: %d rows, layout has %d", op, rows, op.l.Rows())
	}
	return tensor.Shape{rows, 2 * cols}, nil
}

func (op aggGradOp) Do(in ...G.Value) (G.Value, error) {
	g, err := denseArg(in[0], 0, op.String())
	if err != nil {
		return nil, err
	}
	return op.UsePreallocDo(newLike(g, op.l.Rows(), 2*g.Shape()[1]), in...)
}

func (op aggGradOp) UsePreallocDo(pre G.Value, in ...G.Value) (G.Value, error) {
	g, err := denseArg(in[0], 0, op.String())
	if err != nil {
		return nil, err
	}
	h := g.Shape()[1]
	dst, err := denseArg(pre, 2*h, op.String())
	if err != nil {
		return nil, err
	}
	if g.Shape()[0] != op.l.Rows() || dst.Shape()[0] != op.l.Rows() {
		return nil, fmt.Errorf("%v: shapes %v -> %v", op, g.Shape(), dst.Shape())
	}
	switch g.Dtype() {
	case tensor.Float32:
		AggregateGrad(op.l, Data[float32](dst), Data[float32](g), h)
	case tensor.Float64:
		AggregateGrad(op.l, Data[float64](dst), Data[float64](g), h)
	default:
		return nil, fmt.Errorf("%v: dtype %v", op, g.Dtype())
	}
	return dst, nil
}
