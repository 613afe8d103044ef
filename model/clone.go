package model

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/kubesim/kubesim/model/internal/nn"
)

// CloneConfig holds one behaviour-cloning step's optimiser settings.
type CloneConfig struct {
	LearningRate float64 // Adam step size; >= 0
	MaxGradNorm  float64 // global gradient-norm clip; > 0 (math.Inf(1) disables)
}

func (cc CloneConfig) check() error {
	switch {
	case !(cc.LearningRate >= 0) || math.IsInf(cc.LearningRate, 0):
		return fmt.Errorf("clone config: LearningRate %v, want a finite value >= 0", cc.LearningRate)
	case !(cc.MaxGradNorm > 0):
		return fmt.Errorf("clone config: MaxGradNorm %v, want > 0", cc.MaxGradNorm)
	}
	return nil
}

// CloneStats reports one CloneStep, measured by the forward pass before the
// update.
type CloneStats struct {
	Loss      float64 // mean cross-entropy -log p(teacher action)
	Agreement float64 // share of samples whose most probable allowed action is the teacher's
	GradNorm  float64 // global gradient norm before clipping
}

// CloneStep runs one supervised behaviour-cloning update on b: the mean
// cross-entropy -log p(teacher[s]) of the teacher's actions (in [0, N], N =
// Pending, each allowed by its mask), backward through gorgonia, a
// global-norm clip to cc.MaxGradNorm and one Adam step of the parameters
// the logits depend on (the value head is left alone). Cloning has its own
// Adam state, apart from TrainStep's and not saved in checkpoints, so a PPO
// run after cloning starts with fresh moments. When the loss or the
// gradient is not finite, the weights are left unchanged and an error is
// returned.
func (p *Policy) CloneStep(b *Batch, teacher []int, cc CloneConfig) (CloneStats, error) {
	if err := cc.check(); err != nil {
		return CloneStats{}, fmt.Errorf("model clone: %w", err)
	}
	if err := b.check(p.cfg.NodeFeatures, p.cfg.PodFeatures, p.cfg.priors()); err != nil {
		return CloneStats{}, fmt.Errorf("model clone: %w", err)
	}
	if len(teacher) != b.B {
		return CloneStats{}, fmt.Errorf("model clone: %d teacher actions for B=%d", len(teacher), b.B)
	}
	gr, err := p.graphFor(b, cloneLoss)
	if err != nil {
		return CloneStats{}, err
	}
	if err := gr.setInputs(p, b); err != nil {
		return CloneStats{}, fmt.Errorf("model clone: %w", err)
	}
	if err := p.checkActions(b, teacher, "teacher action"); err != nil {
		return CloneStats{}, fmt.Errorf("model clone: %w", err)
	}
	if p.cfg.Float64 {
		setOneHot[float64](gr, teacher)
	} else {
		setOneHot[float32](gr, teacher)
	}
	defer gr.vm.Reset()
	if err := gr.vm.RunAll(); err != nil {
		return CloneStats{}, fmt.Errorf("model clone: running graph B=%d N=%d: %w", gr.b, gr.n, err)
	}
	st := CloneStats{Loss: scalarOf(gr.out.loss)}
	// agreement: the greedy choice, as Act makes it, against the teacher
	k := b.N + 1
	lp := toFloat64(nil, gr.out.logp)
	for s, a := range teacher {
		if pick(lp[s*k:(s+1)*k], p.allow[s*k:(s+1)*k], true, nil) == a {
			st.Agreement++
		}
	}
	st.Agreement /= float64(b.B)
	st.GradNorm = gr.gradNorm()
	if math.IsNaN(st.Loss) || math.IsInf(st.Loss, 0) || math.IsNaN(st.GradNorm) || math.IsInf(st.GradNorm, 0) {
		return st, fmt.Errorf("model clone: loss %v, gradient norm %v: update skipped", st.Loss, st.GradNorm)
	}
	if p.cloneOpt.m == nil {
		p.cloneOpt.init(p.params)
	}
	scale := 1.0
	if c := cc.MaxGradNorm / (st.GradNorm + 1e-6); c < 1 {
		scale = c
	}
	p.cloneOpt.step(p.params, gr.gradOf, gr.grads, scale, cc.LearningRate)
	return st, nil
}

// buildCloneLoss adds behaviour cloning's loss, the mean cross-entropy of
// the teacher's actions:
//
//	loss = -mean(sum(logp * onehot(teacher), 1))
func (gr *graph) buildCloneLoss(dt tensor.Dtype) error {
	g := gr.g
	gr.onehot = tensor.New(tensor.Of(dt), tensor.WithShape(gr.b, gr.n+1))
	onehot := G.NewMatrix(g, dt, G.WithShape(gr.b, gr.n+1), G.WithName("teacher_onehot"), G.WithValue(gr.onehot))
	prod, err := G.HadamardProd(gr.logp, onehot)
	if err != nil {
		return err
	}
	logpA, err := G.Sum(prod, 1)
	if err != nil {
		return err
	}
	mean, err := G.Mean(logpA)
	if err != nil {
		return err
	}
	gr.loss, err = G.Neg(mean)
	return err
}

func setOneHot[T nn.Float](gr *graph, actions []int) {
	oh := nn.Data[T](gr.onehot)
	clear(oh)
	k := gr.n + 1
	for s, a := range actions {
		oh[s*k+a] = 1
	}
}
