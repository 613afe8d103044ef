package model

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func mustNew(t *testing.T, cfg Config) *Policy {
	t.Helper()
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustForward(t *testing.T, p *Policy, b *Batch) *Output {
	t.Helper()
	var out Output
	if err := p.Forward(b, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

// Permuting the nodes of each sample (features, validity, mask and domain
// together) permutes the node log-probabilities the same way and leaves the
// Pending log-probability and the value unchanged.
func TestPermutationEquivariance(t *testing.T) {
	for _, tc := range []struct {
		name  string
		f64   bool
		tol   float64
		prior bool
	}{{"float64", true, 1e-12, false}, {"float32", false, 1e-5, false}, {"float64 prior", true, 1e-12, true}, {"float32 prior", false, 1e-5, true}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(tc.f64)
			cfg.Prior = tc.prior
			p := mustNew(t, cfg)
			rng := rand.New(rand.NewPCG(21, 22))
			perturb(p, rng)
			b := randomBatch(rng, 3, 8, 5, 3, 3, false)
			pb := &Batch{B: b.B, N: b.N, Pod: b.Pod,
				Nodes: make([]float64, len(b.Nodes)), NodeValid: make([]bool, len(b.NodeValid)),
				Mask: make([]bool, len(b.Mask)), Domain: make([]int32, len(b.Domain))}
			if tc.prior {
				addPrior(rng, b)
				pb.Prior = make([]float64, len(b.Prior))
			}
			n, d, k := b.N, 5, b.N+1
			perm := make([][]int, b.B) // new position i holds old node perm[s][i]
			for s := range b.B {
				perm[s] = rng.Perm(n)
				for i, o := range perm[s] {
					copy(pb.Nodes[(s*n+i)*d:(s*n+i+1)*d], b.Nodes[(s*n+o)*d:(s*n+o+1)*d])
					pb.NodeValid[s*n+i] = b.NodeValid[s*n+o]
					pb.Domain[s*n+i] = b.Domain[s*n+o]
					pb.Mask[s*k+i] = b.Mask[s*k+o]
					if tc.prior {
						pb.Prior[s*k+i] = b.Prior[s*k+o]
					}
				}
				pb.Mask[s*k+n] = true
				if tc.prior {
					pb.Prior[s*k+n] = b.Prior[s*k+n]
				}
			}
			x, y := mustForward(t, p, b), mustForward(t, p, pb)
			for s := range b.B {
				for i, o := range perm[s] {
					got, want := y.LogP[s*k+i], x.LogP[s*k+o]
					if want > -1e8 && math.Abs(got-want) > tc.tol {
						t.Errorf("sample %d: permuted node %d (was %d) log-prob %v, want %v", s, i, o, got, want)
					}
				}
				if got, want := y.LogP[s*k+n], x.LogP[s*k+n]; math.Abs(got-want) > tc.tol {
					t.Errorf("sample %d: Pending log-prob %v after permuting, want %v", s, got, want)
				}
				if got, want := y.Values[s], x.Values[s]; math.Abs(got-want) > tc.tol {
					t.Errorf("sample %d: value %v after permuting, want %v", s, got, want)
				}
			}
		})
	}
}

// single returns sample s of b alone, cut to its first n nodes.
func single(b *Batch, s, n, d, pf int) *Batch {
	k := b.N + 1
	one := &Batch{B: 1, N: n,
		Nodes:     append([]float64(nil), b.Nodes[s*b.N*d:(s*b.N+n)*d]...),
		NodeValid: append([]bool(nil), b.NodeValid[s*b.N:s*b.N+n]...),
		Pod:       append([]float64(nil), b.Pod[s*pf:(s+1)*pf]...),
		Mask:      append(append([]bool(nil), b.Mask[s*k:s*k+n]...), true),
		Domain:    append([]int32(nil), b.Domain[s*b.N:s*b.N+n]...),
	}
	if b.Prior != nil {
		one.Prior = append(append([]float64(nil), b.Prior[s*k:s*k+n]...), b.Prior[s*k+b.N])
	}
	return one
}

// Padding a batch with invalid nodes, whatever their features (NaN here),
// mask entries and domains, leaves every valid output unchanged: each
// sample's log-probabilities and value equal those of the sample alone,
// unpadded. Padding nodes get probability 0.
func TestPaddingInvariance(t *testing.T) {
	for _, tc := range []struct {
		name  string
		f64   bool
		tol   float64
		prior bool
	}{{"float64", true, 1e-12, false}, {"float32", false, 1e-5, false}, {"float64 prior", true, 1e-12, true}, {"float32 prior", false, 1e-5, true}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(tc.f64)
			cfg.Prior = tc.prior
			p := mustNew(t, cfg)
			rng := rand.New(rand.NewPCG(31, 32))
			perturb(p, rng)
			const n, d, pf = 12, 5, 3
			b := randomBatch(rng, 5, n, d, pf, 3, false)
			if tc.prior {
				addPrior(rng, b) // NaN on padding: ignored
			}
			valid := make([]int, b.B)
			for s := range b.B {
				for i := range n {
					if !b.NodeValid[s*n+i] {
						for j := range d {
							b.Nodes[(s*n+i)*d+j] = math.NaN()
						}
						b.Mask[s*(n+1)+i] = true
						b.Domain[s*n+i] = b.Domain[s*n] // same domain as a valid node
					} else {
						valid[s]++
					}
				}
			}
			padded := mustForward(t, p, b)
			for s := range b.B {
				alone := mustForward(t, p, single(b, s, valid[s], d, pf))
				for i := range n + 1 {
					got := padded.LogP[s*(n+1)+i]
					switch {
					case i < valid[s]:
						if want := alone.LogP[i]; want > -1e8 && math.Abs(got-want) > tc.tol {
							t.Errorf("sample %d node %d: padded log-prob %v, alone %v", s, i, got, want)
						}
					case i < n:
						if math.Exp(got) != 0 {
							t.Errorf("sample %d padding node %d: probability %v, want 0", s, i, math.Exp(got))
						}
					default:
						if want := alone.LogP[valid[s]]; math.Abs(got-want) > tc.tol {
							t.Errorf("sample %d: padded Pending log-prob %v, alone %v", s, got, want)
						}
					}
				}
				if got, want := padded.Values[s], alone.Values[0]; math.Abs(got-want) > tc.tol {
					t.Errorf("sample %d: padded value %v, alone %v", s, got, want)
				}
			}
		})
	}
}

// Padding does not change the loss or any gradient either: the training
// graph of a batch padded from N=6 to N=11 gives the loss and gradients of
// the unpadded batch.
func TestPaddingInvarianceOfGradients(t *testing.T) {
	p := mustNew(t, testConfig(true))
	rng := rand.New(rand.NewPCG(41, 42))
	perturb(p, rng)
	const n, pn, d, pf = 6, 11, 5, 3
	b := randomBatch(rng, 3, n, d, pf, 2, true)
	pad := &Batch{B: b.B, N: pn, Pod: b.Pod, Nodes: make([]float64, b.B*pn*d), NodeValid: make([]bool, b.B*pn),
		Mask: make([]bool, b.B*(pn+1)), Domain: make([]int32, b.B*pn)}
	for s := range b.B {
		copy(pad.Nodes[s*pn*d:], b.Nodes[s*n*d:(s+1)*n*d])
		copy(pad.NodeValid[s*pn:], b.NodeValid[s*n:(s+1)*n])
		copy(pad.Domain[s*pn:], b.Domain[s*n:(s+1)*n])
		copy(pad.Mask[s*(pn+1):], b.Mask[s*(n+1):s*(n+1)+n])
		pad.Mask[s*(pn+1)+pn] = true
		for i := n; i < pn; i++ {
			pad.Nodes[(s*pn+i)*d] = 1e6 // padding features never matter
		}
	}
	actions := []int{n, n, n} // Pending: index n unpadded, pn padded
	padActions := []int{pn, pn, pn}
	for s := range b.B {
		for i := range n {
			if b.Mask[s*(n+1)+i] {
				actions[s], padActions[s] = i, i
				break
			}
		}
	}
	oldLogp, adv, ret, oldV := []float64{-1, -2, -0.5}, []float64{1, -1, 0.5}, []float64{0.2, 0.4, -0.3}, []float64{0, 0.1, -0.1}
	lc := LossConfig{ClipCoef: 0.2, VFCoef: 0.5, EntCoef: 0.01, ClipValue: true, MaxGradNorm: 0.5, LearningRate: 1e-3}
	grads := func(b *Batch, acts []int) (float64, [][]float64) {
		gr, st, err := p.lossAndGrad(b, acts, oldLogp, adv, ret, oldV, lc)
		if err != nil {
			t.Fatal(err)
		}
		defer gr.vm.Reset()
		var gs [][]float64
		for _, g := range gr.grads {
			gs = append(gs, append([]float64(nil), g.Value().Data().([]float64)...))
		}
		return st.Loss, gs
	}
	l1, g1 := grads(b, actions)
	l2, g2 := grads(pad, padActions)
	if math.Abs(l1-l2) > 1e-12 {
		t.Errorf("loss %v padded, %v unpadded", l2, l1)
	}
	for i := range g1 {
		for j := range g1[i] {
			if math.Abs(g1[i][j]-g2[i][j]) > 1e-12 {
				t.Errorf("%s[%d]: gradient %v padded, %v unpadded", p.params[i].Name, j, g2[i][j], g1[i][j])
			}
		}
	}
}

// One set of weights serves clusters of 1, 3, 10 and 500 nodes, acting and
// training: log-probabilities are finite for allowed actions and sum to 1.
func TestOneWeightsManySizes(t *testing.T) {
	p := mustNew(t, Config{NodeFeatures: 5, PodFeatures: 3, Seed: 5})
	rng := rand.New(rand.NewPCG(51, 52))
	lc := LossConfig{ClipCoef: 0.2, VFCoef: 0.5, EntCoef: 0.01, MaxGradNorm: 0.5, LearningRate: 1e-3}
	for _, n := range []int{1, 3, 10, 500} {
		b := randomBatch(rng, 4, n, 5, 3, 4, true)
		out := mustForward(t, p, b)
		for s := range b.B {
			sum := 0.0
			for i := range n + 1 {
				lp := out.LogP[s*(n+1)+i]
				if b.Mask[s*(n+1)+i] && (math.IsNaN(lp) || math.IsInf(lp, 0)) {
					t.Fatalf("N=%d sample %d action %d: log-prob %v", n, s, i, lp)
				}
				sum += math.Exp(lp)
			}
			if math.Abs(sum-1) > 1e-5 {
				t.Errorf("N=%d sample %d: probabilities sum to %v, want 1", n, s, sum)
			}
		}
		var act ActResult
		if err := p.Act(b, false, rng, &act); err != nil {
			t.Fatal(err)
		}
		st, err := p.TrainStep(b, act.Actions, act.LogP, []float64{1, -1, 0.5, 0}, []float64{0, 1, 2, 3}, act.Values, lc)
		if err != nil {
			t.Fatalf("N=%d: %v", n, err)
		}
		// The log-probs come from the host pass and the ratio from the
		// graph: on the first update they agree, so the KL estimate is ~0.
		if st.ApproxKL > 1e-6 || st.ClipFraction != 0 {
			t.Errorf("N=%d: first update ApproxKL %v, ClipFraction %v, want ~0 and 0", n, st.ApproxKL, st.ClipFraction)
		}
	}
}

// Masked actions are never chosen, sampled or greedy, and sampling follows
// the policy's probabilities.
func TestMaskedActionsNeverSampled(t *testing.T) {
	p := mustNew(t, testConfig(false))
	rng := rand.New(rand.NewPCG(61, 62))
	perturb(p, rng)
	const n = 6
	b := randomBatch(rng, 8, n, 5, 3, 2, false)
	for s := range b.B { // sample 0 allows Pending only
		b.Mask[s*(n+1)+s%n] = s%2 == 0
		if s == 0 {
			for i := range n {
				b.Mask[i] = false
			}
		}
	}
	allow := make([]bool, len(b.Mask))
	allowed(allow, b)
	out := mustForward(t, p, b)
	counts := make([]int, len(b.Mask))
	var act ActResult
	const draws = 4000
	for range draws {
		if err := p.Act(b, false, rng, &act); err != nil {
			t.Fatal(err)
		}
		for s, a := range act.Actions {
			if !allow[s*(n+1)+a] {
				t.Fatalf("sample %d: masked action %d sampled", s, a)
			}
			counts[s*(n+1)+a]++
		}
	}
	if counts[n] != draws {
		t.Errorf("sample 0 (only Pending allowed): Pending chosen %d of %d times", counts[n], draws)
	}
	for i, c := range counts {
		// 4000 draws: the standard error of a frequency is at most 0.008.
		if want := math.Exp(out.LogP[i]); math.Abs(float64(c)/draws-want) > 0.04 {
			t.Errorf("action %d of sample %d: frequency %v, probability %v", i%(n+1), i/(n+1), float64(c)/draws, want)
		}
	}
	if err := p.Act(b, true, nil, &act); err != nil {
		t.Fatal(err)
	}
	for s, a := range act.Actions {
		best := -1
		for i := range n + 1 {
			if allow[s*(n+1)+i] && (best < 0 || out.LogP[s*(n+1)+i] > out.LogP[s*(n+1)+best]) {
				best = i
			}
		}
		if a != best {
			t.Errorf("sample %d: greedy action %d, want the most probable allowed %d", s, a, best)
		}
	}
}

// Bad input gives an error that names the problem, never a panic.
func TestInputErrors(t *testing.T) {
	p := mustNew(t, testConfig(false))
	good := func() *Batch { return randomBatch(rand.New(rand.NewPCG(1, 1)), 2, 4, 5, 3, 2, true) }
	for _, tc := range []struct {
		name  string
		edit  func(b *Batch)
		wantS string
	}{
		{"short nodes", func(b *Batch) { b.Nodes = b.Nodes[1:] }, "node features"},
		{"short pod", func(b *Batch) { b.Pod = b.Pod[1:] }, "pod features"},
		{"short mask", func(b *Batch) { b.Mask = b.Mask[1:] }, "mask entries"},
		{"short domains", func(b *Batch) { b.Domain = b.Domain[1:] }, "domain ids"},
		{"short valid", func(b *Batch) { b.NodeValid = b.NodeValid[1:] }, "node-valid"},
		{"zero N", func(b *Batch) { b.N = 0 }, "N=0"},
		{"pending masked", func(b *Batch) { b.Mask[2*5-1] = false }, "masks Pending"},
		{"NaN feature", func(b *Batch) { b.Nodes[7] = math.NaN() }, "node 1 feature 2 is NaN"},
		{"Inf pod", func(b *Batch) { b.Pod[4] = math.Inf(1) }, "sample 1 pod feature 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := good()
			tc.edit(b)
			var out Output
			err := p.Forward(b, &out)
			if err == nil || !strings.Contains(err.Error(), tc.wantS) {
				t.Errorf("Forward error %v, want one containing %q", err, tc.wantS)
			}
		})
	}
	b := good()
	ok := []float64{0, 0}
	lc := LossConfig{ClipCoef: 0.2, VFCoef: 0.5, MaxGradNorm: 0.5, LearningRate: 1e-3}
	b.Mask[1] = false
	for _, tc := range []struct {
		name    string
		actions []int
		lc      LossConfig
		adv     []float64
		wantS   string
	}{
		{"masked action", []int{1, 0}, lc, ok, "action 1 is masked"},
		{"action out of range", []int{5, 0}, lc, ok, "outside [0, 4]"},
		{"few actions", []int{0}, lc, ok, "1 actions"},
		{"few advantages", []int{0, 0}, lc, []float64{1}, "1 advantages"},
		{"NaN advantage", []int{0, 0}, lc, []float64{0, math.NaN()}, "sample 1: advantages is NaN"},
		{"no clip", []int{0, 0}, LossConfig{VFCoef: 0.5, MaxGradNorm: 0.5}, ok, "ClipCoef"},
		{"no grad norm", []int{0, 0}, LossConfig{ClipCoef: 0.2}, ok, "MaxGradNorm"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := p.TrainStep(b, tc.actions, ok, tc.adv, ok, ok, tc.lc)
			if err == nil || !strings.Contains(err.Error(), tc.wantS) {
				t.Errorf("TrainStep error %v, want one containing %q", err, tc.wantS)
			}
		})
	}
	if err := p.Act(b, false, nil, &ActResult{}); err == nil {
		t.Error("Act sampling without a rand.Rand: no error")
	}
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"no node features", Config{PodFeatures: 1}},
		{"no pod features", Config{NodeFeatures: 1}},
		{"negative hidden", Config{NodeFeatures: 1, PodFeatures: 1, Hidden: -1}},
		{"huge hidden", Config{NodeFeatures: 1, PodFeatures: 1, Hidden: 1 << 20}},
		{"negative clip", Config{NodeFeatures: 1, PodFeatures: 1, LogitClip: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(tc.cfg); err == nil {
				t.Errorf("New(%+v): no error", tc.cfg)
			}
		})
	}
}

// Acting on a small batch (the serial host pass) allocates nothing once
// its buffers have grown.
func TestActAllocatesNothing(t *testing.T) {
	p := mustNew(t, testConfig(false))
	b := randomBatch(rand.New(rand.NewPCG(1, 2)), 16, 10, 5, 3, 3, false)
	rng := rand.New(rand.NewPCG(3, 4))
	var out ActResult
	if err := p.Act(b, false, rng, &out); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(20, func() { _ = p.Act(b, false, rng, &out) }); n != 0 {
		t.Errorf("Act allocates %v times per call, want 0", n)
	}
}
