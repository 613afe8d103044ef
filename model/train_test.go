package model

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kubesim/kubesim/model/internal/nn"
)

// fdCase builds a small float64 policy with perturbed weights, a padded batch
// with masks and failure domains, and PPO inputs chosen so that every branch
// of the loss is active: ratios inside and outside the clip range on both
// sides, value predictions inside and outside the value clip range.
func fdCase(t *testing.T) (*Policy, *Batch, []int, []float64, []float64, []float64, []float64) {
	return fdCaseGate(t, 0)
}

// fdCaseGate is fdCase for a policy whose gate mixes k priors (0: no prior).
func fdCaseGate(t *testing.T, gate int) (*Policy, *Batch, []int, []float64, []float64, []float64, []float64) {
	t.Helper()
	p, err := New(Config{NodeFeatures: 3, PodFeatures: 2, Hidden: 4, Rounds: 2, Float64: true, Seed: 3, Prior: gate > 0, Gate: gate})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(11, 12))
	perturb(p, rng)
	b := randomBatch(rng, 4, 5, 3, 2, 2, false)
	if gate > 0 {
		addPriors(rng, b, gate)
	}
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
	t.Run("plain", func(t *testing.T) { checkLossGradient(t, 0) })
	// the gate over 3 priors: its softmax and the batched mixture too
	t.Run("gate", func(t *testing.T) { checkLossGradient(t, 3) })
}

func checkLossGradient(t *testing.T, gate int) {
	p, b, actions, oldLogp, adv, returns, oldV := fdCaseGate(t, gate)
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

// On the first update (old log-probs = the current ones) every statistic
// has a closed form: ratio = 1, so L_pi = -mean(adv), ApproxKL = 0,
// ClipFraction = 0; with old values = current values the clipped value loss
// equals 0.5*mean((v-ret)^2); the entropy is -sum p log p averaged.
func TestFirstStepStatistics(t *testing.T) {
	p := mustNew(t, testConfig(true))
	rng := rand.New(rand.NewPCG(81, 82))
	perturb(p, rng)
	b := randomBatch(rng, 3, 4, 5, 3, 2, false)
	out := mustForward(t, p, b)
	actions, oldLogp := []int{4, 4, 4}, make([]float64, 3)
	for s := range 3 {
		oldLogp[s] = out.LogP[s*5+4]
	}
	adv, ret := []float64{1, -0.5, 2}, []float64{0.5, -1, 3}
	lc := LossConfig{ClipCoef: 0.2, VFCoef: 0.5, EntCoef: 0.01, ClipValue: true, MaxGradNorm: 0.5, LearningRate: 0}
	st, err := p.TrainStep(b, actions, oldLogp, adv, ret, out.Values, lc)
	if err != nil {
		t.Fatal(err)
	}
	wantPG := -(1 - 0.5 + 2) / 3.0
	wantV, wantH := 0.0, 0.0
	for s := range 3 {
		wantV += 0.5 * (out.Values[s] - ret[s]) * (out.Values[s] - ret[s]) / 3
		for _, lp := range out.LogP[s*5 : s*5+5] {
			if pr := math.Exp(lp); pr > 0 {
				wantH -= pr * lp / 3
			}
		}
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"PolicyLoss", st.PolicyLoss, wantPG},
		{"ValueLoss", st.ValueLoss, wantV},
		{"Entropy", st.Entropy, wantH},
		{"Loss", st.Loss, wantPG - 0.01*wantH + 0.5*wantV},
		{"ApproxKL", st.ApproxKL, 0},
		{"ClipFraction", st.ClipFraction, 0},
	} {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// Ratios of 1.5 and 0.9 with clip 0.2 and advantages 1:
// ClipFraction = 1/2; ApproxKL = mean(r-1-ln r) = ((0.5-ln 1.5) + (-0.1-ln 0.9))/2
// = (0.0945349 + 0.0053605)/2 = 0.0499477; L_pi = mean(max(-r, -clip(r)))
// = (max(-1.5, -1.2) + max(-0.9, -0.9))/2 = -1.05.
func TestClippedStatistics(t *testing.T) {
	p := mustNew(t, testConfig(true))
	b := randomBatch(rand.New(rand.NewPCG(83, 84)), 2, 3, 5, 3, 1, true)
	out := mustForward(t, p, b)
	oldLogp := []float64{out.LogP[3] - math.Log(1.5), out.LogP[7] - math.Log(0.9)}
	one := []float64{1, 1}
	lc := LossConfig{ClipCoef: 0.2, VFCoef: 0.5, MaxGradNorm: 0.5, LearningRate: 0}
	st, err := p.TrainStep(b, []int{3, 3}, oldLogp, one, one, one, lc)
	if err != nil {
		t.Fatal(err)
	}
	wantKL := ((0.5 - math.Log(1.5)) + (-0.1 - math.Log(0.9))) / 2
	if math.Abs(st.ApproxKL-wantKL) > 1e-9 || st.ClipFraction != 0.5 || math.Abs(st.PolicyLoss+1.05) > 1e-9 {
		t.Errorf("ApproxKL %v ClipFraction %v PolicyLoss %v, want %v 0.5 -1.05", st.ApproxKL, st.ClipFraction, st.PolicyLoss, wantKL)
	}
}

// Gradients do not accumulate across runs of a cached graph, and GradNorm
// is their global norm.
func TestGradientsDoNotAccumulate(t *testing.T) {
	p, b, actions, oldLogp, adv, returns, oldV := fdCase(t)
	lc := LossConfig{ClipCoef: 0.2, VFCoef: 0.5, EntCoef: 0.05, MaxGradNorm: 1}
	var first []float64
	for run := range 3 {
		gr, st, err := p.lossAndGrad(b, actions, oldLogp, adv, returns, oldV, lc)
		if err != nil {
			t.Fatal(err)
		}
		var flat []float64
		sq := 0.0
		for _, g := range gr.grads {
			for _, v := range g.Value().Data().([]float64) {
				flat = append(flat, v)
				sq += v * v
			}
		}
		gr.vm.Reset()
		if math.Abs(st.GradNorm-math.Sqrt(sq)) > 1e-12 {
			t.Errorf("run %d: GradNorm %v, norm of the gradients %v", run, st.GradNorm, math.Sqrt(sq))
		}
		if run == 0 {
			first = flat
		} else if !slices.Equal(first, flat) {
			t.Errorf("run %d: gradients differ from the first run's", run)
		}
	}
}

// Adam's update, PyTorch's rule with eps 1e-5, by hand for w=1, g=2,
// lr=0.1 (bias corrections 1-0.9^t and 1-0.999^t):
//
//	t=1: m=0.2, v=0.004, m^=2, sqrt(v^)=2: w = 1 - 0.1*2/(2+1e-5) = 0.9000005
//	t=2: m=0.38, v=0.007996, m^=2, sqrt(v^)=2: w -= 0.0999995 -> 0.800001
//
// and with the gradient scaled by 0.25 (a global-norm clip), t=1:
// m^=0.5, sqrt(v^)=0.5: w = 1 - 0.1*0.5/(0.5+1e-5) = 0.900001999960...
func TestAdamKnownAnswers(t *testing.T) {
	for _, tc := range []struct {
		name  string
		scale float64
		steps int
		want  float64
	}{
		{"one step", 1, 1, 1 - 0.1*2/(2+1e-5)},
		{"two steps", 1, 2, 1 - 2*0.1*2/(2+1e-5)},
		{"clipped gradient", 0.25, 1, 1 - 0.1*0.5/(0.5+1e-5)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, g, m, v := []float64{1}, []float64{2}, []float64{0}, []float64{0}
			for step := 1; step <= tc.steps; step++ {
				bc1, bc2 := 1-math.Pow(adamBeta1, float64(step)), 1-math.Pow(adamBeta2, float64(step))
				adamUpdate(w, g, m, v, tc.scale, 0.1, bc1, bc2)
			}
			if math.Abs(w[0]-tc.want) > 1e-12 {
				t.Errorf("w = %.12f, want %.12f", w[0], tc.want)
			}
		})
	}
}

// Training on a positive advantage raises the probability of the action
// taken; a negative one lowers it.
func TestTrainingFollowsAdvantage(t *testing.T) {
	for _, tc := range []struct {
		name string
		adv  float64
	}{{"positive advantage", 1}, {"negative advantage", -1}} {
		t.Run(tc.name, func(t *testing.T) {
			p := mustNew(t, testConfig(false))
			b := randomBatch(rand.New(rand.NewPCG(91, 92)), 4, 5, 5, 3, 2, true)
			for i := range b.Mask {
				b.Mask[i] = true
			}
			actions := []int{1, 1, 1, 1}
			adv := []float64{tc.adv, tc.adv, tc.adv, tc.adv}
			before := mustForward(t, p, b).LogP[1]
			lc := LossConfig{ClipCoef: 0.2, VFCoef: 0.5, MaxGradNorm: 0.5, LearningRate: 3e-3}
			for range 20 {
				out := mustForward(t, p, b)
				old := []float64{out.LogP[1], out.LogP[7], out.LogP[13], out.LogP[19]}
				if _, err := p.TrainStep(b, actions, old, adv, adv, out.Values, lc); err != nil {
					t.Fatal(err)
				}
			}
			after := mustForward(t, p, b).LogP[1]
			if (after-before)*tc.adv <= 0.05 {
				t.Errorf("log-prob of the taken action went from %v to %v with advantage %v", before, after, tc.adv)
			}
		})
	}
}

// The graph cache keeps at most MaxGraphs graphs, and a graph rebuilt after
// eviction gives the same loss.
func TestGraphCacheBound(t *testing.T) {
	cfg := testConfig(true)
	cfg.MaxGraphs = 2
	p := mustNew(t, cfg)
	lc := LossConfig{ClipCoef: 0.2, VFCoef: 0.5, MaxGradNorm: 0.5}
	losses := map[int]float64{}
	for round := range 2 {
		for _, n := range []int{3, 4, 5, 6} {
			b := randomBatch(rand.New(rand.NewPCG(uint64(n), 1)), 2, n, 5, 3, 2, true)
			zero := []float64{0, 0}
			st, err := p.TrainStep(b, []int{n, n}, []float64{-1, -1}, zero, zero, zero, lc)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.graphs) > 2 {
				t.Fatalf("%d graphs cached, MaxGraphs 2", len(p.graphs))
			}
			if round == 1 && st.Loss != losses[n] {
				t.Errorf("N=%d: loss %v from a rebuilt graph, %v before", n, st.Loss, losses[n])
			}
			losses[n] = st.Loss
		}
	}
}

// Graphs are keyed by the next power of two of the segment count, capped
// by the row count (a graph never needs more segment rows than rows).
func TestSegmentCap(t *testing.T) {
	for _, tc := range []struct {
		name             string
		segs, rows, want int
	}{
		{"no segments", 0, 10, 1},
		{"one", 1, 10, 1},
		{"three", 3, 10, 4},
		{"power of two", 8, 100, 8},
		{"capped by rows", 9, 10, 10},
		{"all singletons", 10, 10, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := segmentCap(tc.segs, tc.rows); got != tc.want {
				t.Errorf("segmentCap(%d, %d) = %d, want %d", tc.segs, tc.rows, got, tc.want)
			}
		})
	}
}

// A graph built for more segments than a batch has gives the loss that a
// graph of the batch's own capacity gives.
func TestSpareSegmentRows(t *testing.T) {
	p := mustNew(t, testConfig(true))
	perturb(p, rand.New(rand.NewPCG(5, 5)))
	few := randomBatch(rand.New(rand.NewPCG(6, 6)), 2, 6, 5, 3, 1, true) // <= 2 domains + singletons
	many := randomBatch(rand.New(rand.NewPCG(7, 7)), 2, 6, 5, 3, 12, true)
	lc := LossConfig{ClipCoef: 0.2, VFCoef: 0.5, EntCoef: 0.01, MaxGradNorm: 0.5}
	zero := []float64{0, 0}
	loss := func(b *Batch) float64 {
		st, err := p.TrainStep(b, []int{6, 6}, []float64{-1, -1}, []float64{1, -1}, zero, zero, lc)
		if err != nil {
			t.Fatal(err)
		}
		return st.Loss
	}
	want := loss(few)
	for _, gr := range p.graphs {
		gr.vm.Close()
	}
	p.graphs = nil
	p.scratch.Set(many.B, many.N, many.NodeValid, many.Domain)
	big := segmentCap(p.scratch.Segments(), 12)
	p.scratch.Set(few.B, few.N, few.NodeValid, few.Domain)
	if small := segmentCap(p.scratch.Segments(), 12); small >= big {
		t.Fatalf("test batches have capacities %d and %d, want the first smaller", small, big)
	}
	gr, err := p.newGraph(2, 6, big, ppoLoss)
	if err != nil {
		t.Fatal(err)
	}
	gr.segs = segmentCap(p.scratch.Segments(), 12) // make graphFor pick it for few
	p.graphs = []*graph{gr}
	if got := loss(few); math.Abs(got-want) > 1e-12 {
		t.Errorf("loss %v through a graph with %d segment rows, %v through its own", got, big, want)
	}
}
