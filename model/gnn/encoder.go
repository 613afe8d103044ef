package gnn

import (
	"fmt"
	"math/rand/v2"

	G "gorgonia.org/gorgonia"

	"github.com/kubesim/kubesim/model/internal/nn"
)

// Config is the encoder's architecture.
type Config struct {
	NodeFeatures int  // D, features per node
	PodFeatures  int  // P, features of the pod to place
	Hidden       int  // H, width of every embedding
	Rounds       int  // L, message-passing rounds (at least 1)
	Float64      bool // float64 weights (else float32)
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	switch {
	case c.NodeFeatures < 1:
		return fmt.Errorf("gnn: NodeFeatures %d, want >= 1", c.NodeFeatures)
	case c.PodFeatures < 1:
		return fmt.Errorf("gnn: PodFeatures %d, want >= 1", c.PodFeatures)
	case c.Hidden < 1:
		return fmt.Errorf("gnn: Hidden %d, want >= 1", c.Hidden)
	case c.Rounds < 1:
		return fmt.Errorf("gnn: Rounds %d, want >= 1", c.Rounds)
	}
	return nil
}

// Round holds one message-passing round's weights.
type Round struct {
	Self *nn.Param // H x H, applied to each node's state
	Nbr  *nn.Param // H x H, applied to each failure domain's mean state
	Ctx  *nn.Param // (2H+1) x H: [global mean; pod; bias] weights
}

// Encoder holds the encoder's weights. Biases are the last row of their
// weight matrix, multiplied by a column of ones.
type Encoder struct {
	cfg   Config
	Embed *nn.Param // (D+1) x H node embedding
	Pod   *nn.Param // (P+1) x H pod embedding
	Round []Round
}

// New returns an encoder with orthogonal weights (gain sqrt 2) drawn from rng
// and zero biases.
func New(cfg Config, rng *rand.Rand) (*Encoder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	dt := nn.Dtype(cfg.Float64)
	h := cfg.Hidden
	e := &Encoder{
		cfg:   cfg,
		Embed: nn.NewParam("gnn.embed", dt, cfg.NodeFeatures+1, h),
		Pod:   nn.NewParam("gnn.pod", dt, cfg.PodFeatures+1, h),
	}
	e.Embed.InitOrthogonal(rng, nn.GainHidden, 0, 0, cfg.NodeFeatures, h)
	e.Pod.InitOrthogonal(rng, nn.GainHidden, 0, 0, cfg.PodFeatures, h)
	for l := range cfg.Rounds {
		r := Round{
			Self: nn.NewParam(fmt.Sprintf("gnn.round%d.self", l), dt, h, h),
			Nbr:  nn.NewParam(fmt.Sprintf("gnn.round%d.nbr", l), dt, h, h),
			Ctx:  nn.NewParam(fmt.Sprintf("gnn.round%d.ctx", l), dt, 2*h+1, h),
		}
		r.Self.InitOrthogonal(rng, nn.GainHidden, 0, 0, h, h)
		r.Nbr.InitOrthogonal(rng, nn.GainHidden, 0, 0, h, h)
		r.Ctx.InitOrthogonal(rng, nn.GainHidden, 0, 0, 2*h, h)
		e.Round = append(e.Round, r)
	}
	return e, nil
}

// Config returns the encoder's architecture.
func (e *Encoder) Config() Config { return e.cfg }

// Params lists the weights in a fixed order.
func (e *Encoder) Params() []*nn.Param {
	ps := []*nn.Param{e.Embed, e.Pod}
	for _, r := range e.Round {
		ps = append(ps, r.Self, r.Nbr, r.Ctx)
	}
	return ps
}

// Inputs are the graph nodes the encoder reads. Nodes is the (B*N, D+1)
// node matrix with a last column of ones, Pod the (B, P+1) pod matrix with a
// last column of ones; Layout describes the rows and is refilled before
// every run. Segments is the graph's fixed number of failure-domain rows:
// every batch run through it must have at most that many segments.
type Inputs struct {
	Nodes, Pod *G.Node
	Layout     *nn.Layout
	Segments   int
}

// Outputs are the encoder's graph nodes.
type Outputs struct {
	H      *G.Node   // (B*N, H) node embeddings after the last round
	Pod    *G.Node   // (B, H) pod embedding
	Params []*G.Node // one node per Params() entry, bound to its value
}

// Build adds the encoder to g.
func (e *Encoder) Build(g *G.ExprGraph, in Inputs) (Outputs, error) {
	var out Outputs
	for _, p := range e.Params() {
		out.Params = append(out.Params, G.NewMatrix(g, p.Value.Dtype(), G.WithShape(p.Value.Shape()...), G.WithName(p.Name), G.WithValue(p.Value)))
	}
	embed, pod := out.Params[0], out.Params[1]
	var err error
	must := func(n *G.Node, e error) *G.Node {
		if err == nil && e != nil {
			err = e
		}
		return n
	}
	h := must(nn.Rectify(must(G.Mul(in.Nodes, embed))))
	p := must(nn.Rectify(must(G.Mul(in.Pod, pod))))
	for l := range e.Round {
		self, nbr, ctx := out.Params[2+3*l], out.Params[3+3*l], out.Params[4+3*l]
		if err != nil {
			break
		}
		// The neighbour and context weights multiply one row per failure
		// domain and one per cluster, after the means; the cluster mean is
		// taken from the domain means. Only Self multiplies every node.
		seg := must(nn.SegMeanRows(h, in.Layout, in.Segments))
		gm := must(nn.SegPoolRows(seg, in.Layout, true))
		c := must(G.Mul(must(nn.CatCols(true, gm, p)), ctx))
		nb := must(G.Add(must(G.Mul(seg, nbr)), must(nn.SegSpreadRows(c, in.Layout, in.Segments, false))))
		h = must(nn.Rectify(must(nn.CombineRows(must(G.Mul(h, self)), nb, in.Layout))))
	}
	if err != nil {
		return Outputs{}, fmt.Errorf("gnn: building graph: %w", err)
	}
	out.H, out.Pod = h, p
	return out, nil
}

// Workspace holds the host forward pass's buffers; reuse one across calls
// to avoid allocation. A Workspace serves one goroutine at a time.
type Workspace[T nn.Float] struct {
	h, self, seg, nb, next, gm, cc, c, p []T
	cache                                rowCache[T]
}

// Forward runs the encoder on the host: nodes is the (B*N) x (D+1) matrix
// with a last column of ones, pod the B x (P+1) one, l the filled layout.
// It returns the node embeddings (B*N x H) and the pod embedding (B x H),
// both slices of ws, valid until ws is used again.
func Forward[T nn.Float](e *Encoder, ws *Workspace[T], l *nn.Layout, nodes, pod []T) (h, p []T) {
	cfg := e.cfg
	hd := cfg.Hidden
	rows, b := l.Rows(), l.B
	ws.h = nn.Grow(ws.h, rows*hd)
	ws.self = nn.Grow(ws.self, rows*hd)
	ws.next = nn.Grow(ws.next, rows*hd)
	ns := l.Segments()
	ws.seg = nn.Grow(ws.seg, ns*hd)
	ws.nb = nn.Grow(ws.nb, ns*hd)
	ws.gm = nn.Grow(ws.gm, b*hd)
	ws.cc = nn.Grow(ws.cc, b*(2*hd+1))
	ws.c = nn.Grow(ws.c, b*hd)
	ws.p = nn.Grow(ws.p, b*hd)

	// in is each round's input, self its Self product; the rounds write
	// ws.next, ws.h, ws.next, ... (the cache holds the first input itself)
	in, self := ws.h, ws.self
	if ws.cache.on {
		ws.cache.update(e, rows, nodes)
		in, self = ws.cache.h0, ws.cache.self0
	} else {
		nn.Gemm(rows, hd, cfg.NodeFeatures+1, nodes, nn.Data[T](e.Embed.Value), ws.h, false)
		nn.Relu(ws.h)
	}
	nn.Gemm(b, hd, cfg.PodFeatures+1, pod, nn.Data[T](e.Pod.Value), ws.p, false)
	nn.Relu(ws.p)
	widths := []int{hd, hd, 1}
	for k, r := range e.Round {
		if k > 0 || !ws.cache.on {
			nn.Gemm(rows, hd, hd, in, nn.Data[T](r.Self.Value), ws.self, false)
			self = ws.self
		}
		nn.SegMeans(l, ws.seg, in, hd)
		nn.SegPool(l, ws.gm, ws.seg, hd, true)
		nn.ConcatCols(ws.cc, b, [][]T{ws.gm, ws.p, nil}, widths)
		nn.Gemm(b, hd, 2*hd+1, ws.cc, nn.Data[T](r.Ctx.Value), ws.c, false)
		nn.SegSpread(l, ws.nb, ws.c, hd, false)
		nn.Gemm(ns, hd, hd, ws.seg, nn.Data[T](r.Nbr.Value), ws.nb, true)
		out := ws.next
		if k%2 == 1 {
			out = ws.h
		}
		nn.Combine(l, out, self, ws.nb, hd, true)
		in = out
	}
	return in, ws.p
}
