package pointer

import (
	"fmt"
	"math"
	"math/rand/v2"

	G "gorgonia.org/gorgonia"

	"github.com/kubesim/kubesim/model/internal/nn"
)

// MaskedLogit is added to the logit of a masked action.
const MaskedLogit = -1e9

// Config is the decoder's architecture.
type Config struct {
	Hidden    int     // H, width of the node and pod embeddings
	LogitClip float64 // C in C*tanh(score/sqrt(H)); > 0
	// PendingClip is Pending's own C (0: LogitClip). With a prior it is how
	// far the learned correction can move Pending's logit, so that a policy
	// can learn to defer a pod that fits while its node corrections stay
	// bounded by LogitClip.
	PendingClip float64
	Float64     bool // float64 weights (else float32)
	// Gate is the number K of priors that a learned gate mixes (0: none).
	// With K >= 2 the decoder has a gate layer, (2H+1) x K and zero at
	// start, whose softmax over the context [graph, pod, 1] weighs the K
	// priors of a sample: logit_i = sum_k w_k prior_k,i + C*tanh(score_i).
	// At zero the mixture is the priors' plain mean.
	Gate int
}

// PendingC returns Pending's C: PendingClip, or LogitClip when it is 0.
func (c Config) PendingC() float64 {
	if c.PendingClip == 0 {
		return c.LogitClip
	}
	return c.PendingClip
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	switch {
	case c.Hidden < 1:
		return fmt.Errorf("pointer: Hidden %d, want >= 1", c.Hidden)
	case !(c.LogitClip > 0) || math.IsInf(c.LogitClip, 0):
		return fmt.Errorf("pointer: LogitClip %v, want a finite value > 0", c.LogitClip)
	case c.Gate == 1 || c.Gate < 0 || c.Gate > MaxGate:
		return fmt.Errorf("pointer: Gate %d, want 0 (no gate) or 2..%d priors", c.Gate, MaxGate)
	case !(c.PendingClip >= 0) || math.IsInf(c.PendingClip, 0):
		return fmt.Errorf("pointer: PendingClip %v, want 0 (LogitClip) or a finite value > 0", c.PendingClip)
	}
	return nil
}

// Decoder holds the decoder's weights; biases are the last rows.
type Decoder struct {
	cfg     Config
	Query   *nn.Param // (2H+1) x H, gain 0.01: the policy's output layer
	Key     *nn.Param // H x H
	Pending *nn.Param // H x 1 learned Pending key (starts at zero)
	Value1  *nn.Param // (2H+1) x H
	Value2  *nn.Param // (H+1) x 1, gain 1
	Gate    *nn.Param // (2H+1) x K gate over K priors, zero at start; nil without Config.Gate
}

// MaxGate bounds Config.Gate.
const MaxGate = 16

// New returns a decoder with orthogonal weights drawn from rng.
func New(cfg Config, rng *rand.Rand) (*Decoder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	dt := nn.Dtype(cfg.Float64)
	h := cfg.Hidden
	d := &Decoder{
		cfg:     cfg,
		Query:   nn.NewParam("pointer.query", dt, 2*h+1, h),
		Key:     nn.NewParam("pointer.key", dt, h, h),
		Pending: nn.NewParam("pointer.pending", dt, h, 1),
		Value1:  nn.NewParam("pointer.value1", dt, 2*h+1, h),
		Value2:  nn.NewParam("pointer.value2", dt, h+1, 1),
	}
	d.Query.InitOrthogonal(rng, nn.GainPolicy, 0, 0, 2*h, h)
	d.Key.InitOrthogonal(rng, nn.GainHidden, 0, 0, h, h)
	d.Value1.InitOrthogonal(rng, nn.GainHidden, 0, 0, 2*h, h)
	d.Value2.InitOrthogonal(rng, nn.GainValue, 0, 0, h, 1)
	if cfg.Gate > 0 {
		d.Gate = nn.NewParam("pointer.gate", dt, 2*h+1, cfg.Gate)
	}
	return d, nil
}

// Config returns the decoder's architecture.
func (d *Decoder) Config() Config { return d.cfg }

// Params lists the weights in a fixed order.
func (d *Decoder) Params() []*nn.Param {
	ps := []*nn.Param{d.Query, d.Key, d.Pending, d.Value1, d.Value2}
	if d.Gate != nil {
		ps = append(ps, d.Gate)
	}
	return ps
}

// Inputs are the graph nodes the decoder reads.
type Inputs struct {
	H   *G.Node // (B*N, H) node embeddings
	Pod *G.Node // (B, H) pod embedding
	// Mask is the (B, N+1) additive mask: 0 (or an additive log-prior
	// term) for allowed actions, MaskedLogit for masked ones. It is added
	// to the clipped logits before the log-softmax.
	Mask *G.Node
	// Priors is, with Config.Gate = K, the (B, K, N+1) priors that the gate
	// mixes (0 at masked actions); the Mask then carries no prior. Nil
	// without a gate.
	Priors *G.Node
	// Layout describes the rows of H.
	Layout *nn.Layout
}

// Outputs are the decoder's graph nodes.
type Outputs struct {
	LogP   *G.Node   // (B, N+1) log-probabilities, Pending last
	Value  *G.Node   // (B) state values
	Params []*G.Node // one node per Params() entry, bound to its value
}

// Build adds the decoder to g.
func (d *Decoder) Build(g *G.ExprGraph, in Inputs) (Outputs, error) {
	var out Outputs
	for _, p := range d.Params() {
		out.Params = append(out.Params, G.NewMatrix(g, p.Value.Dtype(), G.WithShape(p.Value.Shape()...), G.WithName(p.Name), G.WithValue(p.Value)))
	}
	query, key, pending, v1, v2 := out.Params[0], out.Params[1], out.Params[2], out.Params[3], out.Params[4]
	var err error
	must := func(n *G.Node, e error) *G.Node {
		if err == nil && e != nil {
			err = e
		}
		return n
	}
	l := in.Layout
	h := d.cfg.Hidden
	scale, clip, pclip := G.NewConstant(1/math.Sqrt(float64(h))), G.NewConstant(d.cfg.LogitClip), G.NewConstant(d.cfg.PendingC())
	if !d.cfg.Float64 {
		scale, clip, pclip = G.NewConstant(float32(1/math.Sqrt(float64(h)))), G.NewConstant(float32(d.cfg.LogitClip)), G.NewConstant(float32(d.cfg.PendingC()))
	}

	gm := must(nn.PoolRows(in.H, l, true))
	ctx := must(nn.CatCols(true, gm, in.Pod))
	q := must(G.HadamardProd(must(G.Mul(ctx, query)), scale)) // q / sqrt(H)
	qk := must(G.Mul(q, key))
	// Centre the node scores on the score of the graph mean: s_i =
	// (qK).(h_i - mean h). A shared component of the node embeddings then
	// cannot push every node logit into tanh's flat region (see Forward).
	centre := must(G.Reshape(must(G.Sum(must(G.HadamardProd(qk, gm)), 1)), []int{l.B, 1}))
	nodeScore := must(G.BroadcastSub(must(nn.RowDots(in.H, qk, l)), centre, nil, []byte{1}))
	pendScore := must(G.Mul(q, pending))
	logit := must(nn.CatCols(false, must(G.HadamardProd(must(G.Tanh(nodeScore)), clip)), must(G.HadamardProd(must(G.Tanh(pendScore)), pclip))))
	if d.Gate != nil {
		// w = softmax(ctx Gate) as (B, 1, K); w x priors is (B, 1, N+1)
		if in.Priors == nil {
			return Outputs{}, fmt.Errorf("pointer: a decoder with a gate over %d priors needs Inputs.Priors", d.cfg.Gate)
		}
		w := must(G.SoftMax(must(G.Mul(ctx, out.Params[5])), 1))
		w3 := must(G.Reshape(w, []int{l.B, 1, d.cfg.Gate}))
		mix := must(G.Reshape(must(G.BatchedMatMul(w3, in.Priors)), []int{l.B, l.N + 1}))
		logit = must(G.Add(logit, mix))
	}
	out.LogP = must(G.LogSoftMax(must(G.Add(logit, in.Mask)), 1))

	hv := must(nn.Rectify(must(G.Mul(ctx, v1))))
	v := must(G.Mul(must(nn.CatCols(true, hv)), v2))
	out.Value = must(G.Reshape(v, []int{l.B}))
	if err != nil {
		return Outputs{}, fmt.Errorf("pointer: building graph: %w", err)
	}
	return out, nil
}

// Workspace holds the host forward pass's buffers; reuse one across calls.
type Workspace[T nn.Float] struct {
	gm, ctx, q, qk, ns, hv, hv1 []T
	gate                        []T // B x K gate logits, then weights
}

// GateWeights returns the gate's B x K weights (each row sums to 1) of the
// last Forward with Config.Gate = K, nil without a gate. The slice is the
// workspace's own: the next Forward overwrites it.
func (ws *Workspace[T]) GateWeights() []T { return ws.gate }

// Forward runs the decoder on the host. h is the (B*N) x H node embedding,
// p the B x H pod embedding, mask the B x (N+1) allowed actions (Pending
// last) and prior, when not empty, B x (N+1) log-prior terms added to the
// logits of allowed actions (the graph's additive mask carries them); with
// Config.Gate = K, prior is B x K x (N+1) (sample s's prior k at
// (s*K+k)*(N+1)) and the gate's mixture of the K is added instead. It
// writes the B x (N+1) log-probabilities to logp and the B values to value.
func Forward[T nn.Float](d *Decoder, ws *Workspace[T], l *nn.Layout, h, p []T, mask []bool, prior, logp, value []float64) {
	hd := d.cfg.Hidden
	b, n := l.B, l.N
	ws.gm = nn.Grow(ws.gm, b*hd)
	ws.ctx = nn.Grow(ws.ctx, b*(2*hd+1))
	ws.q = nn.Grow(ws.q, b*hd)
	ws.qk = nn.Grow(ws.qk, b*hd)
	ws.ns = nn.Grow(ws.ns, b*n)
	ws.hv = nn.Grow(ws.hv, b*hd)
	ws.hv1 = nn.Grow(ws.hv1, b*(hd+1))

	nn.Pool(l, ws.gm, h, hd, true)
	nn.ConcatCols(ws.ctx, b, [][]T{ws.gm, p, nil}, []int{hd, hd, 1})
	nn.Gemm(b, hd, 2*hd+1, ws.ctx, nn.Data[T](d.Query.Value), ws.q, false)
	scale := T(1 / math.Sqrt(float64(hd)))
	for i := range ws.q {
		ws.q[i] *= scale
	}
	nn.Gemm(b, hd, hd, ws.q, nn.Data[T](d.Key.Value), ws.qk, false)
	nn.RowDot(l, ws.ns, h, ws.qk, hd)
	ws.gate = ws.gate[:0]
	if d.Gate != nil {
		k := d.cfg.Gate
		ws.gate = nn.Grow(ws.gate, b*k)
		nn.Gemm(b, k, 2*hd+1, ws.ctx, nn.Data[T](d.Gate.Value), ws.gate, false)
		softmaxRows(ws.gate, b, k)
	}
	pend := nn.Data[T](d.Pending.Value)
	c, pc := d.cfg.LogitClip, d.cfg.PendingC()
	for s := range b {
		q := ws.q[s*hd : (s+1)*hd]
		var ps T
		for j, v := range q {
			ps += v * pend[j]
		}
		// Node scores are centred on the score of the mean node embedding,
		// (qK).gm: without it, training found it easiest to make Pending
		// unlikely by raising a component shared by every node, which drove
		// all node scores into tanh's saturation, where they tie and their
		// gradients vanish (approx_kl fell to 1e-9 with entropy still high).
		var centre float64
		for j, v := range ws.qk[s*hd : (s+1)*hd] {
			centre += float64(v) * float64(ws.gm[s*hd+j])
		}
		row := logp[s*(n+1) : (s+1)*(n+1)]
		for i := range n {
			row[i] = c * math.Tanh(float64(ws.ns[s*n+i])-centre)
		}
		row[n] = pc * math.Tanh(float64(ps))
		for i, ok := range mask[s*(n+1) : (s+1)*(n+1)] {
			if !ok {
				row[i] += MaskedLogit
			}
		}
		switch {
		case len(prior) == 0:
		case d.Gate != nil:
			k := d.cfg.Gate
			w := ws.gate[s*k : (s+1)*k]
			for j, wj := range w {
				pj := prior[(s*k+j)*(n+1) : (s*k+j+1)*(n+1)]
				for i, v := range pj {
					if mask[s*(n+1)+i] {
						row[i] += float64(wj) * v
					}
				}
			}
		default:
			for i, v := range prior[s*(n+1) : (s+1)*(n+1)] {
				if mask[s*(n+1)+i] {
					row[i] += v
				}
			}
		}
	}
	nn.LogSoftmax(logp[:b*(n+1)], b, n+1)

	nn.Gemm(b, hd, 2*hd+1, ws.ctx, nn.Data[T](d.Value1.Value), ws.hv, false)
	nn.Relu(ws.hv)
	nn.ConcatCols(ws.hv1, b, [][]T{ws.hv, nil}, []int{hd, 1})
	w2 := nn.Data[T](d.Value2.Value)
	for s := range b {
		var v T
		for j, x := range ws.hv1[s*(hd+1) : (s+1)*(hd+1)] {
			v += x * w2[j]
		}
		value[s] = float64(v)
	}
}

// softmaxRows replaces each row of x (rows x k) by its softmax.
func softmaxRows[T nn.Float](x []T, rows, k int) {
	for r := range rows {
		row := x[r*k : (r+1)*k]
		m := row[0]
		for _, v := range row[1:] {
			m = max(m, v)
		}
		var z float64
		for i, v := range row {
			e := math.Exp(float64(v - m))
			row[i] = T(e)
			z += e
		}
		for i := range row {
			row[i] = T(float64(row[i]) / z)
		}
	}
}
