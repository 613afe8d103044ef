package nn

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Two samples of 4 rows. Sample 0: domains 5,5,-1,7 with row 3 padding:
// segments {0,1} (domain 5) and {2} (no domain); padding none; 3 valid rows
// so pooling weights 1/3. Sample 1: domains 5,5,5,5 all valid: one segment
// of 4 (domain 5 of sample 1 is not sample 0's), weights 1/4.
func TestLayoutSet(t *testing.T) {
	var l Layout
	valid := []bool{true, true, true, false, true, true, true, true}
	dom := []int32{5, 5, -1, 7, 5, 5, 5, 5}
	if err := l.Set(2, 4, valid, dom); err != nil {
		t.Fatal(err)
	}
	if want := []int32{0, 0, 1, -1, 2, 2, 2, 2}; !slices.Equal(l.Seg, want) {
		t.Errorf("Seg = %v, want %v", l.Seg, want)
	}
	if want := []float64{0.5, 1, 0.25}; !slices.Equal(l.SegInv, want) {
		t.Errorf("SegInv = %v, want %v", l.SegInv, want)
	}
	if want := []float64{1. / 3, 1. / 3, 1. / 3, 0, 0.25, 0.25, 0.25, 0.25}; !slices.Equal(l.PoolW, want) {
		t.Errorf("PoolW = %v, want %v", l.PoolW, want)
	}
	if err := l.Set(2, 4, valid[:7], dom); err == nil {
		t.Error("Set with 7 valid flags for 8 rows: no error")
	}
}

// Hand-computed kernels on the layout above with h = 1:
// x = 1..8 (row r holds r+1).
func TestKernelsKnownAnswers(t *testing.T) {
	var l Layout
	if err := l.Set(2, 4, []bool{true, true, true, false, true, true, true, true}, []int32{5, 5, -1, 7, 5, 5, 5, 5}); err != nil {
		t.Fatal(err)
	}
	x := []float64{1, 2, 3, 4, 5, 6, 7, 8}
	pool := make([]float64, 2)
	// weighted: (1+2+3)/3 = 2, (5+6+7+8)/4 = 6.5; unweighted sums: 10, 26.
	Pool(&l, pool, x, 1, true)
	if want := []float64{2, 6.5}; !slices.Equal(pool, want) {
		t.Errorf("weighted Pool = %v, want %v", pool, want)
	}
	Pool(&l, pool, x, 1, false)
	if want := []float64{10, 26}; !slices.Equal(pool, want) {
		t.Errorf("Pool = %v, want %v", pool, want)
	}
	// Segment means (cap 4, one spare row): (1+2)/2 = 1.5, 3, (5+6+7+8)/4
	// = 6.5, 0; sums 3, 3, 26, 0.
	seg := make([]float64, 4)
	SegMeans(&l, seg, x, 1)
	if want := []float64{1.5, 3, 6.5, 0}; !slices.Equal(seg, want) {
		t.Errorf("SegMeans = %v, want %v", seg, want)
	}
	SegSums(&l, seg, x, 1)
	if want := []float64{3, 3, 26, 0}; !slices.Equal(seg, want) {
		t.Errorf("SegSums = %v, want %v", seg, want)
	}
	// Gather back (10, 20, 30, 40): rows 0,1 segment 0, row 2 segment 1,
	// row 3 padding, rows 4-7 segment 2; scaled by 1/2, 1, 1/4.
	gath := make([]float64, 8)
	SegGather(&l, gath, []float64{10, 20, 30, 40}, 1, false)
	if want := []float64{10, 10, 20, 0, 30, 30, 30, 30}; !slices.Equal(gath, want) {
		t.Errorf("SegGather = %v, want %v", gath, want)
	}
	SegGather(&l, gath, []float64{10, 20, 30, 40}, 1, true)
	if want := []float64{5, 5, 20, 0, 7.5, 7.5, 7.5, 7.5}; !slices.Equal(gath, want) {
		t.Errorf("scaled SegGather = %v, want %v", gath, want)
	}
	// Combine self = x, nb = (100, -200, -300, -) with and without ReLU:
	// row 3 (padding) gets no nb term.
	comb := make([]float64, 8)
	Combine(&l, comb, x, []float64{100, -200, -300, 0}, 1, false)
	if want := []float64{101, 102, -197, 4, -295, -294, -293, -292}; !slices.Equal(comb, want) {
		t.Errorf("Combine = %v, want %v", comb, want)
	}
	Combine(&l, comb, x, []float64{100, -200, -300, 0}, 1, true)
	if want := []float64{101, 102, 0, 4, 0, 0, 0, 0}; !slices.Equal(comb, want) {
		t.Errorf("Combine with ReLU = %v, want %v", comb, want)
	}
	// Segments 0, 1 belong to sample 0 (sizes 2, 1 of 3 valid rows: weights
	// 2/3, 1/3), segment 2 to sample 1 (4 of 4: weight 1). Pooling the
	// segment means (1.5, 3, 6.5) gives the valid means 2 and 6.5 again.
	if want := []int32{0, 0, 1}; !slices.Equal(l.SegSample, want) {
		t.Errorf("SegSample = %v, want %v", l.SegSample, want)
	}
	if want := []float64{2. / 3, 1. / 3, 1}; !slices.Equal(l.SegPoolW, want) {
		t.Errorf("SegPoolW = %v, want %v", l.SegPoolW, want)
	}
	SegPool(&l, pool, []float64{1.5, 3, 6.5, 99}, 1, true)
	if want := []float64{2, 6.5}; math.Abs(pool[0]-2) > 1e-15 || pool[1] != 6.5 {
		t.Errorf("weighted SegPool = %v, want %v", pool, want)
	}
	SegPool(&l, pool, []float64{1, 2, 3, 99}, 1, false)
	if want := []float64{3, 3}; !slices.Equal(pool, want) {
		t.Errorf("SegPool = %v, want %v", pool, want)
	}
	spread := make([]float64, 4)
	SegSpread(&l, spread, []float64{6, 9}, 1, true)
	if want := []float64{4, 2, 9, 0}; !slices.Equal(spread, want) {
		t.Errorf("weighted SegSpread = %v, want %v", spread, want)
	}
	// RowDot with q = (2, -1): 2x for sample 0, -x for sample 1.
	dots := make([]float64, 8)
	RowDot(&l, dots, x, []float64{2, -1}, 1)
	if want := []float64{2, 4, 6, 8, -5, -6, -7, -8}; !slices.Equal(dots, want) {
		t.Errorf("RowDot = %v, want %v", dots, want)
	}
}

func TestRelu(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	x := []float32{-1, 2, negZero, 0.5, -3, float32(math.Inf(-1)), 7} // odd length: tail path
	Relu(x)
	if want := []float32{0, 2, 0, 0.5, 0, 0, 7}; !slices.Equal(x, want) || math.Signbit(float64(x[2])) {
		t.Errorf("Relu = %v, want %v (and +0)", x, want)
	}
	y := []float64{-1, 2, -0.0, 0.5}
	Relu(y)
	if want := []float64{0, 2, 0, 0.5}; !slices.Equal(y, want) {
		t.Errorf("Relu = %v, want %v", y, want)
	}
	g := make([]float32, 7)
	ReluGrad(g, x, []float32{1, 2, 3, 4, 5, 6, 7})
	if want := []float32{0, 2, 0, 4, 0, 0, 7}; !slices.Equal(g, want) {
		t.Errorf("ReluGrad = %v, want %v", g, want)
	}
}

// Orthogonal blocks: Q^T Q = gain^2 I for a tall block, Q Q^T for a wide
// one, and the elements outside the block are untouched.
func TestInitOrthogonal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name       string
		rows, cols int
		gain       float64
	}{{"tall", 9, 4, math.Sqrt2}, {"wide", 3, 7, 0.01}, {"square", 5, 5, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewParam("w", tensor.Float64, tc.rows+1, tc.cols)
			d := Data[float64](p.Value)
			for j := range tc.cols {
				d[tc.rows*tc.cols+j] = 42 // bias row
			}
			p.InitOrthogonal(rng, tc.gain, 0, 0, tc.rows, tc.cols)
			tall := tc.rows >= tc.cols
			k, inner := tc.cols, tc.rows
			if !tall {
				k, inner = tc.rows, tc.cols
			}
			at := func(i, l int) float64 { // column i (tall) or row i (wide), element l
				if tall {
					return d[l*tc.cols+i]
				}
				return d[i*tc.cols+l]
			}
			for i := range k {
				for j := range k {
					s := 0.0
					for l := range inner {
						s += at(i, l) * at(j, l)
					}
					want := 0.0
					if i == j {
						want = tc.gain * tc.gain
					}
					if math.Abs(s-want) > 1e-12 {
						t.Errorf("Gram[%d][%d] = %v, want %v", i, j, s, want)
					}
				}
			}
			for j := range tc.cols {
				if d[tc.rows*tc.cols+j] != 42 {
					t.Errorf("element outside the block changed to %v", d[tc.rows*tc.cols+j])
				}
			}
		})
	}
}

// Every differentiable op's gradient matches central finite differences
// of loss = sum(op(inputs) * R) for a random R, in float64, on a layout
// with padding, shared domains and singletons.
func TestOpGradients(t *testing.T) {
	var l Layout
	if err := l.Set(2, 4, []bool{true, true, true, false, true, true, false, true}, []int32{1, 1, -1, 1, 2, 3, 2, 2}); err != nil {
		t.Fatal(err)
	}
	const h = 3
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		name   string
		shapes [][]int
		build  func(in []*G.Node) (*G.Node, error)
	}{
		{"PoolRows weighted", [][]int{{8, h}}, func(in []*G.Node) (*G.Node, error) { return PoolRows(in[0], &l, true) }},
		{"PoolRows", [][]int{{8, h}}, func(in []*G.Node) (*G.Node, error) { return PoolRows(in[0], &l, false) }},
		{"SpreadRows weighted", [][]int{{2, h}}, func(in []*G.Node) (*G.Node, error) { return SpreadRows(in[0], &l, true) }},
		{"SpreadRows", [][]int{{2, h}}, func(in []*G.Node) (*G.Node, error) { return SpreadRows(in[0], &l, false) }},
		{"SegMeanRows", [][]int{{8, h}}, func(in []*G.Node) (*G.Node, error) { return SegMeanRows(in[0], &l, 6) }},
		{"CombineRows", [][]int{{8, h}, {6, h}}, func(in []*G.Node) (*G.Node, error) { return CombineRows(in[0], in[1], &l) }},
		{"SegPoolRows weighted", [][]int{{6, h}}, func(in []*G.Node) (*G.Node, error) { return SegPoolRows(in[0], &l, true) }},
		{"SegPoolRows", [][]int{{6, h}}, func(in []*G.Node) (*G.Node, error) { return SegPoolRows(in[0], &l, false) }},
		{"SegSpreadRows weighted", [][]int{{2, h}}, func(in []*G.Node) (*G.Node, error) { return SegSpreadRows(in[0], &l, 6, true) }},
		{"RowDots", [][]int{{8, h}, {2, h}}, func(in []*G.Node) (*G.Node, error) { return RowDots(in[0], in[1], &l) }},
		{"CatCols with ones", [][]int{{2, h}, {2, 2}}, func(in []*G.Node) (*G.Node, error) { return CatCols(true, in[0], in[1]) }},
		{"CatCols", [][]int{{2, 1}, {2, h}}, func(in []*G.Node) (*G.Node, error) { return CatCols(false, in[0], in[1]) }},
		{"Rectify", [][]int{{8, h}}, func(in []*G.Node) (*G.Node, error) { return Rectify(in[0]) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := G.NewGraph()
			var ins []*G.Node
			var vals [][]float64
			for i, s := range tc.shapes {
				d := tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(s...))
				v := Data[float64](d)
				for j := range v {
					v[j] = rng.NormFloat64()
				}
				vals = append(vals, v)
				ins = append(ins, G.NewMatrix(g, tensor.Float64, G.WithShape(s...), G.WithName(string(rune('a'+i))), G.WithValue(d)))
			}
			out, err := tc.build(ins)
			if err != nil {
				t.Fatal(err)
			}
			rd := tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(out.Shape()...))
			for j := range Data[float64](rd) {
				Data[float64](rd)[j] = rng.NormFloat64()
			}
			rn := G.NewMatrix(g, tensor.Float64, G.WithShape(out.Shape()...), G.WithName("r"), G.WithValue(rd))
			loss := G.Must(G.Sum(G.Must(G.HadamardProd(out, rn))))
			grads, err := G.Grad(loss, ins...)
			if err != nil {
				t.Fatal(err)
			}
			var lossV G.Value
			G.Read(loss, &lossV)
			vm := G.NewTapeMachine(g)
			defer vm.Close()
			eval := func() float64 {
				if err := vm.RunAll(); err != nil {
					t.Fatal(err)
				}
				vm.Reset()
				return lossV.Data().(float64)
			}
			eval()
			an := make([][]float64, len(ins))
			for i, gn := range grads {
				an[i] = slices.Clone(gn.Value().Data().([]float64))
			}
			const eps = 1e-6
			for i, v := range vals {
				for j := range v {
					o := v[j]
					v[j] = o + eps
					lp := eval()
					v[j] = o - eps
					lm := eval()
					v[j] = o
					if fd := (lp - lm) / (2 * eps); math.Abs(fd-an[i][j]) > 1e-7 {
						t.Errorf("input %d element %d: gradient %v, finite difference %v", i, j, an[i][j], fd)
					}
				}
			}
		})
	}
}
