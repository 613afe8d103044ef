package model

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/kubesim/kubesim/model/gnn"
	"github.com/kubesim/kubesim/model/internal/nn"
	"github.com/kubesim/kubesim/model/pointer"
)

// graphKind says what a graph computes beyond the forward pass.
type graphKind uint8

const (
	forwardOnly graphKind = iota // log-probabilities and values
	ppoLoss                      // PPO's loss and its gradients (TrainStep)
	cloneLoss                    // behaviour cloning's cross-entropy and its gradients (CloneStep)
)

// graph is one (B, N) shape's gorgonia graph: the policy's forward pass and,
// when built for training, a loss (PPO's or behaviour cloning's) and its
// gradients. Its input tensors are allocated once and refilled in place
// before every run; its weight nodes are bound to the policy's weight
// tensors.
type graph struct {
	b, n    int
	segs    int // failure-domain rows: batches with at most this many segments
	kind    graphKind
	lastUse uint64

	g   *G.ExprGraph
	vm  G.VM
	lay *nn.Layout

	// inputs, refilled per run
	nodes, pod, mask                           *tensor.Dense
	priors                                     *tensor.Dense // (B, K, N+1) with a gate, else nil
	onehot, oldLogp, negAdv, ret, oldV         *tensor.Dense
	ratioLo, ratioHi, valueLo, valueHi         *tensor.Dense
	entCoef, vfCoef, valueClipOn, valueClipOff *G.Node

	// outputs
	logp, value                 *G.Node
	logpA, ratio                *G.Node
	loss, policyLoss, valueLoss *G.Node
	entropy                     *G.Node
	params, grads               []*G.Node
	// gradOf[i] is the index in params (and in Policy.params) of grads[i]:
	// every parameter for PPO, those the logits depend on for cloning.
	gradOf []int

	// Copies of output values taken by read instructions as soon as they are
	// computed: the tape machine reuses an intermediate node's memory once
	// its last reader has run, so node.Value() after the run may already
	// hold another node's data. (Gradients of inputs stay live to the end.)
	out graphValues
}

type graphValues struct {
	logp, value, logpA, ratio, loss, policyLoss, valueLoss, entropy G.Value
}

func (p *Policy) newGraph(b, n, segs int, kind graphKind) (*graph, error) {
	cfg := p.cfg
	dt := nn.Dtype(cfg.Float64)
	gr := &graph{b: b, n: n, segs: segs, kind: kind, g: G.NewGraph(), lay: &nn.Layout{B: b, N: n}}
	g := gr.g
	input := func(name string, shape ...int) (*tensor.Dense, *G.Node) {
		d := tensor.New(tensor.Of(dt), tensor.WithShape(shape...))
		return d, G.NewTensor(g, dt, len(shape), G.WithShape(shape...), G.WithName(name), G.WithValue(d))
	}
	var nodesN, podN, maskN *G.Node
	gr.nodes, nodesN = input("nodes", b*n, cfg.NodeFeatures+1)
	gr.pod, podN = input("pod", b, cfg.PodFeatures+1)
	gr.mask, maskN = input("mask", b, n+1)
	var priorsN *G.Node
	if cfg.Gate > 0 {
		gr.priors, priorsN = input("priors", b, cfg.Gate, n+1)
	}
	enc, err := p.enc.Build(g, gnn.Inputs{Nodes: nodesN, Pod: podN, Layout: gr.lay, Segments: segs})
	if err != nil {
		return nil, err
	}
	dec, err := p.dec.Build(g, pointer.Inputs{H: enc.H, Pod: enc.Pod, Mask: maskN, Priors: priorsN, Layout: gr.lay})
	if err != nil {
		return nil, err
	}
	gr.logp, gr.value = dec.LogP, dec.Value
	gr.params = append(enc.Params, dec.Params...)
	switch kind {
	case ppoLoss:
		if err := gr.buildLoss(dt); err != nil {
			return nil, fmt.Errorf("model: building loss for B=%d N=%d: %w", b, n, err)
		}
		for i := range gr.params {
			gr.gradOf = append(gr.gradOf, i)
		}
		G.Read(gr.logpA, &gr.out.logpA)
		G.Read(gr.ratio, &gr.out.ratio)
		G.Read(gr.loss, &gr.out.loss)
		G.Read(gr.policyLoss, &gr.out.policyLoss)
		G.Read(gr.valueLoss, &gr.out.valueLoss)
		G.Read(gr.entropy, &gr.out.entropy)
	case cloneLoss:
		if err := gr.buildCloneLoss(dt); err != nil {
			return nil, fmt.Errorf("model: building cloning loss for B=%d N=%d: %w", b, n, err)
		}
		// The value head does not reach the logits, and gorgonia refuses
		// to differentiate with respect to unreachable nodes.
		gr.gradOf = p.logitParams
		G.Read(gr.loss, &gr.out.loss)
		G.Read(gr.logp, &gr.out.logp)
	default:
		G.Read(gr.logp, &gr.out.logp)
		G.Read(gr.value, &gr.out.value)
	}
	if kind != forwardOnly {
		wrt := make([]*G.Node, len(gr.gradOf))
		for i, j := range gr.gradOf {
			wrt[i] = gr.params[j]
		}
		if gr.grads, err = G.Grad(gr.loss, wrt...); err != nil {
			return nil, fmt.Errorf("model: differentiating loss for B=%d N=%d: %w", b, n, err)
		}
	}
	gr.vm = G.NewTapeMachine(g)
	return gr, nil
}

// buildLoss adds CleanRL's PPO loss:
//
//	logp_a  = sum(logp * onehot(a), 1)
//	ratio   = exp(logp_a - old_logp)
//	L_pi    = mean(max(-adv*ratio, -adv*clamp(ratio, 1-c, 1+c)))
//	L_v     = 0.5 * mean((v - ret)^2)                          (ClipValue off)
//	        = 0.5 * mean(max((v-ret)^2, (old_v + clamp(v-old_v, -c, c) - ret)^2))  (on)
//	H       = mean(-sum(exp(logp) * logp, 1))
//	loss    = L_pi - ent_coef*H + vf_coef*L_v
//
// The coefficients and clip bounds are inputs, so one graph serves any
// LossConfig; ClipValue selects between the two value losses by weights
// 1 and 0.
func (gr *graph) buildLoss(dt tensor.Dtype) error {
	g, b := gr.g, gr.b
	var err error
	must := func(n *G.Node, e error) *G.Node {
		if err == nil && e != nil {
			err = e
		}
		return n
	}
	vec := func(name string) (*tensor.Dense, *G.Node) {
		d := tensor.New(tensor.Of(dt), tensor.WithShape(b))
		return d, G.NewVector(g, dt, G.WithShape(b), G.WithName(name), G.WithValue(d))
	}
	scalar := func(name string) *G.Node { return G.NewScalar(g, dt, G.WithName(name)) }
	var onehotN, oldLogpN, negAdvN, retN, oldVN, rlo, rhi, vlo, vhi *G.Node
	gr.onehot = tensor.New(tensor.Of(dt), tensor.WithShape(b, gr.n+1))
	onehotN = G.NewMatrix(g, dt, G.WithShape(b, gr.n+1), G.WithName("onehot"), G.WithValue(gr.onehot))
	gr.oldLogp, oldLogpN = vec("old_logp")
	gr.negAdv, negAdvN = vec("neg_adv")
	gr.ret, retN = vec("returns")
	gr.oldV, oldVN = vec("old_values")
	gr.ratioLo, rlo = vec("ratio_lo")
	gr.ratioHi, rhi = vec("ratio_hi")
	gr.valueLo, vlo = vec("value_lo")
	gr.valueHi, vhi = vec("value_hi")
	gr.entCoef, gr.vfCoef = scalar("ent_coef"), scalar("vf_coef")
	gr.valueClipOn, gr.valueClipOff = scalar("value_clip_on"), scalar("value_clip_off")
	half := G.NewConstant(0.5)
	if dt == tensor.Float32 {
		half = G.NewConstant(float32(0.5))
	}

	gr.logpA = must(G.Sum(must(G.HadamardProd(gr.logp, onehotN)), 1))
	gr.ratio = must(G.Exp(must(G.Sub(gr.logpA, oldLogpN))))
	clipped := must(G.MinBetween(must(G.MaxBetween(gr.ratio, rlo)), rhi))
	pg1 := must(G.HadamardProd(gr.ratio, negAdvN))
	pg2 := must(G.HadamardProd(clipped, negAdvN))
	gr.policyLoss = must(G.Mean(must(G.MaxBetween(pg1, pg2))))

	plogp := must(G.HadamardProd(must(G.Exp(gr.logp)), gr.logp))
	gr.entropy = must(G.Neg(must(G.Mean(must(G.Sum(plogp, 1))))))

	vUnc := must(G.Square(must(G.Sub(gr.value, retN))))
	dv := must(G.MinBetween(must(G.MaxBetween(must(G.Sub(gr.value, oldVN)), vlo)), vhi))
	vClip := must(G.Square(must(G.Sub(must(G.Add(oldVN, dv)), retN))))
	vMax := must(G.MaxBetween(vUnc, vClip))
	vSel := must(G.Add(must(G.HadamardProd(vMax, gr.valueClipOn)), must(G.HadamardProd(vUnc, gr.valueClipOff))))
	gr.valueLoss = must(G.HadamardProd(half, must(G.Mean(vSel))))

	gr.loss = must(G.Add(must(G.Sub(gr.policyLoss, must(G.HadamardProd(gr.entCoef, gr.entropy)))),
		must(G.HadamardProd(gr.vfCoef, gr.valueLoss))))
	return err
}

// segmentCap is the number of failure-domain rows of the graph that runs a
// batch of rows rows and segs segments: the next power of two, at most rows,
// so that a trainer's fixed-size minibatches reuse a few graphs.
func segmentCap(segs, rows int) int {
	c := 1
	for c < segs {
		c *= 2
	}
	return max(min(c, rows), segs)
}

// graphFor returns the cached training graph of the kind for b's shape (B,
// N and the segment capacity of its failure domains), building it (and
// evicting the least recently used graph beyond MaxGraphs) when needed.
func (p *Policy) graphFor(b *Batch, kind graphKind) (*graph, error) {
	if err := p.scratch.Set(b.B, b.N, b.NodeValid, b.Domain); err != nil {
		return nil, err
	}
	segs := segmentCap(p.scratch.Segments(), b.B*b.N)
	p.clock++
	for _, gr := range p.graphs {
		if gr.b == b.B && gr.n == b.N && gr.segs == segs && gr.kind == kind {
			gr.lastUse = p.clock
			return gr, nil
		}
	}
	gr, err := p.newGraph(b.B, b.N, segs, kind)
	if err != nil {
		return nil, err
	}
	gr.lastUse = p.clock
	if len(p.graphs) >= p.cfg.MaxGraphs {
		old := 0
		for i, o := range p.graphs {
			if o.lastUse < p.graphs[old].lastUse {
				old = i
			}
		}
		p.graphs[old].vm.Close()
		p.graphs = append(p.graphs[:old], p.graphs[old+1:]...)
	}
	p.graphs = append(p.graphs, gr)
	return gr, nil
}

// setInputs copies b into the graph's input tensors and layout.
func (gr *graph) setInputs(p *Policy, b *Batch) error {
	if err := gr.lay.Set(b.B, b.N, b.NodeValid, b.Domain); err != nil {
		return err
	}
	p.allow = nn.Grow(p.allow, b.B*(b.N+1))
	allowed(p.allow, b)
	if p.cfg.Float64 {
		setInputs[float64](gr, p, b)
	} else {
		setInputs[float32](gr, p, b)
	}
	return nil
}

// setInputs fills the graph's inputs. The additive mask carries the prior:
// prior_i (0 without one) for an allowed action, MaskedLogit otherwise.
// With a gate the mask is 0 or MaskedLogit and the priors go to their own
// input, 0 at masked actions (and all 0 when b has none).
func setInputs[T nn.Float](gr *graph, p *Policy, b *Batch) {
	fillNodes(nn.Data[T](gr.nodes), b, p.cfg.NodeFeatures)
	fillPod(nn.Data[T](gr.pod), b, p.cfg.PodFeatures)
	m := nn.Data[T](gr.mask)
	prior := b.Prior
	if !p.cfg.Prior || len(prior) == 0 {
		prior = nil
	}
	if gr.priors != nil {
		k, w := p.cfg.Gate, b.N+1
		dst := nn.Data[T](gr.priors)
		clear(dst)
		if prior != nil {
			for i, v := range prior {
				if s, a := i/(k*w), i%w; p.allow[s*w+a] {
					dst[i] = T(v)
				}
			}
		}
		prior = nil
	}
	for i, ok := range p.allow {
		switch {
		case !ok:
			m[i] = pointer.MaskedLogit
		case prior != nil:
			m[i] = T(prior[i])
		default:
			m[i] = 0
		}
	}
}

// run executes the graph once and resets its machine for the next run.
func (gr *graph) run() error {
	defer gr.vm.Reset()
	if err := gr.vm.RunAll(); err != nil {
		return fmt.Errorf("model: running graph B=%d N=%d: %w", gr.b, gr.n, err)
	}
	return nil
}

// graphForward runs a forward-only graph of b's shape (built afresh, not
// cached) and returns the log-probabilities and values: the reference the
// host forward pass is tested against.
func (p *Policy) graphForward(b *Batch, out *Output) error {
	if err := b.check(p.cfg.NodeFeatures, p.cfg.PodFeatures, p.cfg.priors()); err != nil {
		return err
	}
	if err := p.scratch.Set(b.B, b.N, b.NodeValid, b.Domain); err != nil {
		return err
	}
	gr, err := p.newGraph(b.B, b.N, segmentCap(p.scratch.Segments(), b.B*b.N), forwardOnly)
	if err != nil {
		return err
	}
	defer gr.vm.Close()
	if err := gr.setInputs(p, b); err != nil {
		return err
	}
	if err := gr.vm.RunAll(); err != nil {
		return err
	}
	out.LogP = toFloat64(out.LogP[:0], gr.out.logp)
	out.Values = toFloat64(out.Values[:0], gr.out.value)
	return nil
}

// toFloat64 appends the elements of a float tensor value to dst.
func toFloat64(dst []float64, v G.Value) []float64 {
	switch s := v.Data().(type) {
	case []float32:
		for _, x := range s {
			dst = append(dst, float64(x))
		}
	case []float64:
		dst = append(dst, s...)
	case float32:
		dst = append(dst, float64(s))
	case float64:
		dst = append(dst, s)
	}
	return dst
}
