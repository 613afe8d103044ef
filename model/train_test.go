package model

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kubesim/kubesim/model/internal/nn"
)

// fdCase builds a small float64 policy with perturbed weights, a padded batch
// with masks and failure domains, and PPO inputs chosen so that every branch
// of the loss is active: ratios inside and outside the clip range on both
// sides, value predictions inside and outside the value clip range.
func fdCase(t *testing.T) (*Policy, *Batch, []int, []float64, []float64, []float64, []float64) {
	t.Helper()
	p, err := New(Config{NodeFeatures: 3, PodFeatures: 2, Hidden: 4, Rounds: 2, Float64: true, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(11, 12))
	perturb(p, rng)
	b := randomBatch(rng, 4, 5, 3, 2, 2, false)
	var out Output
	if err := p.Forward(b, &out); err != nil {
		t.Fatal(err)
	}
	allow := make([]bool, len(b.Mask))
	allowed(allow, b)
	// ratio = exp(logp_a - old_logp): 0.6 and 1.5 are clipped (c = 0.2),
	// 0.9 and 1.1 are not; the advantage signs make both min branches win.
	ratios := []float64{0.6, 1.1, 1.5, 0.9}
	adv := []float64{1.0, -0.7, -1.2, 0.4}
	// v - old_v = 0.5, -0.1, -0.6, 0.05: two outside the clip range 0.2.
	dv := []float64{0.5, -0.1, -0.6, 0.05}
	returns := []float64{0.3, -1.0, 2.0, 0.1}
	actions := make([]int, b.B)
	oldLogp := make([]float64, b.B)
	oldV := make([]float64, b.B)
	k := b.N + 1
	for s := range b.B {
		a := b.N // Pending unless a node is allowed
		for i := range b.N {
			if allow[s*k+i] {
				a = i
				if rng.IntN(2) == 0 {
					break
				}
			}
		}
		actions[s] = a
		oldLogp[s] = out.LogP[s*k+a] - math.Log(ratios[s])
		oldV[s] = out.Values[s] - dv[s]
	}
	return p, b, actions, oldLogp, adv, returns, oldV
}

// The gradient gorgonia computes for the full PPO loss (policy, clipped
// value and entropy terms, through the decoder, the encoder and the custom
// pooling/aggregation ops) matches central finite differences for every
// weight.
func TestLossGradientMatchesFiniteDifferences(t *testing.T) {
	p, b, actions, oldLogp, adv, returns, oldV := fdCase(t)
	lc := LossConfig{ClipCoef: 0.2, VFCoef: 0.5, EntCoef: 0.05, ClipValue: true, MaxGradNorm: 1, LearningRate: 0}
	for _, clipValue := range []bool{true, false} {
		lc.ClipValue = clipValue
		gr, _, err := p.lossAndGrad(b, actions, oldLogp, adv, returns, oldV, lc)
		if err != nil {
			t.Fatal(err)
		}
		grads := make([][]float64, len(gr.grads))
		for i, g := range gr.grads {
			grads[i] = append([]float64(nil), g.Value().Data().([]float64)...)
		}
		gr.vm.Reset()
		loss := func() float64 {
			gr, st, err := p.lossAndGrad(b, actions, oldLogp, adv, returns, oldV, lc)
			if err != nil {
				t.Fatal(err)
			}
			gr.vm.Reset()
			return st.Loss
		}
		const eps = 1e-6
		worst := 0.0
		for pi, w := range p.params {
			d := nn.Data[float64](w.Value)
			for j := range d {
				orig := d[j]
				d[j] = orig + eps
				lp := loss()
				d[j] = orig - eps
				lm := loss()
				d[j] = orig
				fd := (lp - lm) / (2 * eps)
				an := grads[pi][j]
				err := math.Abs(fd-an) / max(1, math.Abs(fd))
				worst = max(worst, err)
				if err > 1e-6 {
					t.Errorf("clipValue=%v %s[%d]: gradient %g, finite difference %g", clipValue, w.Name, j, an, fd)
				}
			}
		}
		t.Logf("clipValue=%v: %d weights, worst relative error %.2g", clipValue, p.NumParams(), worst)
	}
}
