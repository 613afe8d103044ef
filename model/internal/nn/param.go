package nn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/tensor"
)

// Gains of the orthogonal initialisation (CleanRL's layer_init): hidden
// layers followed by a ReLU, the policy's output layer (small, so the first
// policy is near uniform) and the value output.
var (
	GainHidden = math.Sqrt2
	GainPolicy = 0.01
	GainValue  = 1.0
)

// Param is one weight tensor. Graphs of every shape and the host forward pass
// read the same Value, so an optimiser step is seen by all of them at once.
type Param struct {
	Name  string
	Value *tensor.Dense
}

// NewParam returns a zero parameter of the given shape and dtype.
func NewParam(name string, dt tensor.Dtype, shape ...int) *Param {
	return &Param{Name: name, Value: tensor.New(tensor.Of(dt), tensor.WithShape(shape...))}
}

// Size is the number of elements of p.
func (p *Param) Size() int { return p.Value.Shape().TotalSize() }

// InitOrthogonal fills rows [r0, r0+rows) and columns [c0, c0+cols) of the
// matrix parameter p with a random orthogonal block scaled by gain: the Q
// factor of a Gaussian matrix's QR decomposition, its columns' signs fixed by
// the signs of diag(R) so the distribution is uniform (Haar). When rows < cols
// the block's rows are orthonormal instead of its columns. Elements outside
// the block are left as they are.
func (p *Param) InitOrthogonal(rng *rand.Rand, gain float64, r0, c0, rows, cols int) {
	q := orthogonal(rng, rows, cols)
	shape := p.Value.Shape()
	stride := shape[1]
	switch d := p.Value.Data().(type) {
	case []float64:
		for i := range rows {
			for j := range cols {
				d[(r0+i)*stride+c0+j] = gain * q.At(i, j)
			}
		}
	case []float32:
		for i := range rows {
			for j := range cols {
				d[(r0+i)*stride+c0+j] = float32(gain * q.At(i, j))
			}
		}
	default:
		panic(fmt.Sprintf("nn: parameter %s holds %T", p.Name, d))
	}
}

// orthogonal returns a rows x cols matrix with orthonormal columns (rows >=
// cols) or orthonormal rows (rows < cols).
func orthogonal(rng *rand.Rand, rows, cols int) *mat.Dense {
	tall := rows >= cols
	m, n := rows, cols
	if !tall {
		m, n = cols, rows
	}
	g := mat.NewDense(m, n, nil)
	for i := range m {
		for j := range n {
			g.Set(i, j, rng.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(g)
	var q, r mat.Dense
	qr.QTo(&q)
	qr.RTo(&r)
	out := mat.NewDense(m, n, nil)
	for j := range n {
		s := 1.0
		if r.At(j, j) < 0 {
			s = -1
		}
		for i := range m {
			out.Set(i, j, s*q.At(i, j))
		}
	}
	if tall {
		return out
	}
	t := mat.DenseCopyOf(out.T())
	return t
}
