package model

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/kubesim/kubesim/model/internal/nn"
)

// LossConfig holds one PPO update's loss and optimiser settings.
type LossConfig struct {
	ClipCoef     float64 // ratio clip c: ratio is clamped to [1-c, 1+c]; > 0
	VFCoef       float64 // weight of the value loss; >= 0
	EntCoef      float64 // weight of the entropy bonus; >= 0
	ClipValue    bool    // clip the value loss with ClipCoef (CleanRL clip_vloss)
	MaxGradNorm  float64 // global gradient-norm clip; > 0 (math.Inf(1) disables)
	LearningRate float64 // Adam step size; >= 0
}

func (lc LossConfig) check() error {
	switch {
	case !(lc.ClipCoef > 0) || math.IsInf(lc.ClipCoef, 0):
		return fmt.Errorf("loss config: ClipCoef %v, want a finite value > 0", lc.ClipCoef)
	case !(lc.VFCoef >= 0) || math.IsInf(lc.VFCoef, 0):
		return fmt.Errorf("loss config: VFCoef %v, want a finite value >= 0", lc.VFCoef)
	case !(lc.EntCoef >= 0) || math.IsInf(lc.EntCoef, 0):
		return fmt.Errorf("loss config: EntCoef %v, want a finite value >= 0", lc.EntCoef)
	case !(lc.MaxGradNorm > 0):
		return fmt.Errorf("loss config: MaxGradNorm %v, want > 0", lc.MaxGradNorm)
	case !(lc.LearningRate >= 0) || math.IsInf(lc.LearningRate, 0):
		return fmt.Errorf("loss config: LearningRate %v, want a finite value >= 0", lc.LearningRate)
	}
	return nil
}

// TrainStats reports one TrainStep. The losses, entropy, ApproxKL and
// ClipFraction are of the forward pass before the update.
type TrainStats struct {
	Loss, PolicyLoss, ValueLoss, Entropy float64
	ApproxKL                             float64 // mean((ratio-1) - log ratio), CleanRL's approx_kl
	ClipFraction                         float64 // share of samples with |ratio-1| > ClipCoef
	GradNorm                             float64 // global gradient norm before clipping
}

// Adam's fixed hyper-parameters (PyTorch defaults, CleanRL's eps).
const (
	adamBeta1 = 0.9
	adamBeta2 = 0.999
	adamEps   = 1e-5
)

// TrainStep runs one PPO minibatch update: the forward pass on b, the loss
// (see buildLoss), backward through gorgonia, a global-norm clip of all
// gradients to lc.MaxGradNorm and one Adam step (eps 1e-5) at
// lc.LearningRate. actions[s] is sample s's action in [0, N] (N = Pending)
// and must be allowed by its mask; adv is already normalised. When the loss
// or the gradient is not finite, the weights are left unchanged and an error
// is returned.
func (p *Policy) TrainStep(b *Batch, actions []int, oldLogp, adv, returns, oldValues []float64, lc LossConfig) (TrainStats, error) {
	gr, st, err := p.lossAndGrad(b, actions, oldLogp, adv, returns, oldValues, lc)
	if err != nil {
		return st, err
	}
	defer gr.vm.Reset()

	scale := 1.0
	if c := lc.MaxGradNorm / (st.GradNorm + 1e-6); c < 1 {
		scale = c // torch.nn.utils.clip_grad_norm_
	}
	p.opt.step(p.params, gr.gradOf, gr.grads, scale, lc.LearningRate)
	return st, nil
}

// lossAndGrad validates the inputs, runs b's training graph and returns it
// with the loss statistics and gradient norm; the gradients are the graph's
// gradient nodes' values. Unless it returns an error, the caller must
// Reset the graph's machine after reading them.
func (p *Policy) lossAndGrad(b *Batch, actions []int, oldLogp, adv, returns, oldValues []float64, lc LossConfig) (*graph, TrainStats, error) {
	if err := lc.check(); err != nil {
		return nil, TrainStats{}, fmt.Errorf("model train: %w", err)
	}
	if err := b.check(p.cfg.NodeFeatures, p.cfg.PodFeatures, p.cfg.priors()); err != nil {
		return nil, TrainStats{}, fmt.Errorf("model train: %w", err)
	}
	for _, in := range lossInputs(oldLogp, adv, returns, oldValues) {
		if len(in.v) != b.B {
			return nil, TrainStats{}, fmt.Errorf("model train: %d %s for B=%d", len(in.v), in.name, b.B)
		}
		for s, v := range in.v {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, TrainStats{}, fmt.Errorf("model train: sample %d: %s is %v", s, in.name, v)
			}
		}
	}
	if len(actions) != b.B {
		return nil, TrainStats{}, fmt.Errorf("model train: %d actions for B=%d", len(actions), b.B)
	}
	gr, err := p.graphFor(b, ppoLoss)
	if err != nil {
		return nil, TrainStats{}, err
	}
	if err := gr.setInputs(p, b); err != nil {
		return nil, TrainStats{}, fmt.Errorf("model train: %w", err)
	}
	if err := p.checkActions(b, actions, "action"); err != nil {
		return nil, TrainStats{}, fmt.Errorf("model train: %w", err)
	}
	if p.cfg.Float64 {
		err = setLossInputs[float64](gr, actions, oldLogp, adv, returns, oldValues, lc)
	} else {
		err = setLossInputs[float32](gr, actions, oldLogp, adv, returns, oldValues, lc)
	}
	if err != nil {
		return nil, TrainStats{}, fmt.Errorf("model train: %w", err)
	}
	if err := gr.vm.RunAll(); err != nil {
		gr.vm.Reset()
		return nil, TrainStats{}, fmt.Errorf("model train: running graph B=%d N=%d: %w", gr.b, gr.n, err)
	}

	st := TrainStats{
		Loss:       scalarOf(gr.out.loss),
		PolicyLoss: scalarOf(gr.out.policyLoss),
		ValueLoss:  scalarOf(gr.out.valueLoss),
		Entropy:    scalarOf(gr.out.entropy),
	}
	ratio := gr.out.ratio.Data()
	logpA := gr.out.logpA.Data()
	for s := range b.B {
		r, lr := at(ratio, s), at(logpA, s)-oldLogp[s]
		st.ApproxKL += (r - 1) - lr
		if math.Abs(r-1) > lc.ClipCoef {
			st.ClipFraction++
		}
	}
	st.ApproxKL /= float64(b.B)
	st.ClipFraction /= float64(b.B)

	st.GradNorm = gr.gradNorm()
	if math.IsNaN(st.Loss) || math.IsInf(st.Loss, 0) || math.IsNaN(st.GradNorm) || math.IsInf(st.GradNorm, 0) {
		gr.vm.Reset()
		return nil, st, fmt.Errorf("model train: loss %v, gradient norm %v: update skipped", st.Loss, st.GradNorm)
	}
	return gr, st, nil
}

func setLossInputs[T nn.Float](gr *graph, actions []int, oldLogp, adv, returns, oldValues []float64, lc LossConfig) error {
	oh := nn.Data[T](gr.onehot)
	clear(oh)
	k := gr.n + 1
	for s, a := range actions {
		oh[s*k+a] = 1
	}
	copyTo(nn.Data[T](gr.oldLogp), oldLogp, 1)
	copyTo(nn.Data[T](gr.negAdv), adv, -1)
	copyTo(nn.Data[T](gr.ret), returns, 1)
	copyTo(nn.Data[T](gr.oldV), oldValues, 1)
	fill(nn.Data[T](gr.ratioLo), T(1-lc.ClipCoef))
	fill(nn.Data[T](gr.ratioHi), T(1+lc.ClipCoef))
	fill(nn.Data[T](gr.valueLo), T(-lc.ClipCoef))
	fill(nn.Data[T](gr.valueHi), T(lc.ClipCoef))
	on := T(0)
	if lc.ClipValue {
		on = 1
	}
	for _, kv := range []struct {
		n *G.Node
		v T
	}{{gr.entCoef, T(lc.EntCoef)}, {gr.vfCoef, T(lc.VFCoef)}, {gr.valueClipOn, on}, {gr.valueClipOff, 1 - on}} {
		if err := G.Let(kv.n, kv.v); err != nil {
			return err
		}
	}
	return nil
}

type namedInput struct {
	name string
	v    []float64
}

func lossInputs(oldLogp, adv, returns, oldValues []float64) [4]namedInput {
	return [4]namedInput{{"old log-probs", oldLogp}, {"advantages", adv}, {"returns", returns}, {"old values", oldValues}}
}

func copyTo[T nn.Float](dst []T, src []float64, sign float64) {
	for i, v := range src {
		dst[i] = T(sign * v)
	}
}

func fill[T nn.Float](dst []T, v T) {
	for i := range dst {
		dst[i] = v
	}
}

func scalarOf(v G.Value) float64 {
	switch v := v.Data().(type) {
	case float32:
		return float64(v)
	case float64:
		return v
	}
	return math.NaN()
}

func at(data any, i int) float64 {
	switch s := data.(type) {
	case []float32:
		return float64(s[i])
	case []float64:
		return s[i]
	}
	return math.NaN()
}

func sumSquares[T nn.Float](s []T) float64 {
	sq := 0.0
	for _, v := range s {
		sq += float64(v) * float64(v)
	}
	return sq
}

// adam is Adam with PyTorch's update rule (eps added to the bias-corrected
// root of the second moment). Its moments live beside the weights and are
// saved in checkpoints, so a resumed run continues exactly.
type adam struct {
	t    int
	m, v []*tensor.Dense
}

func (a *adam) init(params []*nn.Param) {
	a.t = 0
	a.m, a.v = a.m[:0], a.v[:0]
	for _, p := range params {
		a.m = append(a.m, tensor.New(tensor.Of(p.Value.Dtype()), tensor.WithShape(p.Value.Shape()...)))
		a.v = append(a.v, tensor.New(tensor.Of(p.Value.Dtype()), tensor.WithShape(p.Value.Shape()...)))
	}
}

// step applies one update with gradients grads[i] (of params[of[i]]) times
// scale; parameters without a gradient keep their weights and moments.
func (a *adam) step(params []*nn.Param, of []int, grads []*G.Node, scale, lr float64) {
	a.t++
	bc1 := 1 - math.Pow(adamBeta1, float64(a.t))
	bc2 := 1 - math.Pow(adamBeta2, float64(a.t))
	for k, i := range of {
		p := params[i]
		g := grads[k].Value().(*tensor.Dense)
		if p.Value.Dtype() == tensor.Float64 {
			adamUpdate(nn.Data[float64](p.Value), nn.Data[float64](g), nn.Data[float64](a.m[i]), nn.Data[float64](a.v[i]), scale, lr, bc1, bc2)
		} else {
			adamUpdate(nn.Data[float32](p.Value), nn.Data[float32](g), nn.Data[float32](a.m[i]), nn.Data[float32](a.v[i]), scale, lr, bc1, bc2)
		}
	}
}

func adamUpdate[T nn.Float](w, g, m, v []T, scale, lr, bc1, bc2 float64) {
	b1, b2 := T(adamBeta1), T(adamBeta2)
	sc := T(scale)
	stepSize := lr / bc1
	rbc2 := 1 / math.Sqrt(bc2)
	for j := range w {
		gj := g[j] * sc
		m[j] = b1*m[j] + (1-b1)*gj
		v[j] = b2*v[j] + (1-b2)*gj*gj
		denom := math.Sqrt(float64(v[j]))*rbc2 + adamEps
		w[j] -= T(stepSize * float64(m[j]) / denom)
	}
}

// gradNorm is the global L2 norm of the graph's gradients, as last run.
func (gr *graph) gradNorm() float64 {
	sq := 0.0
	for _, gn := range gr.grads {
		switch g := gn.Value().Data().(type) {
		case []float32:
			sq += sumSquares(g)
		case []float64:
			sq += sumSquares(g)
		}
	}
	return math.Sqrt(sq)
}

// checkActions reports the first action (named what in the error) outside
// [0, N] or not allowed by the effective mask that setInputs left in
// p.allow.
func (p *Policy) checkActions(b *Batch, actions []int, what string) error {
	for s, a := range actions {
		if a < 0 || a > b.N {
			return fmt.Errorf("sample %d: %s %d outside [0, %d]", s, what, a, b.N)
		}
		if !p.allow[s*(b.N+1)+a] {
			return fmt.Errorf("sample %d: %s %d is masked", s, what, a)
		}
	}
	return nil
}
