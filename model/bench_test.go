package model

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// The benchmark sizes: D=8 node features, P=4 pod features, H=64,
// L=2 rounds. Every node is valid and allowed, as in the PyTorch peer
// (../shared/bench/torch_ref.py); the nodes of each cluster are spread over
// 3 failure domains (zones), which the peer does not model.
func benchPolicy(b *testing.B) *Policy { return benchPolicyGate(b, 0) }

// benchPolicyGate is benchPolicy with a prior and a gate over gate priors
// (0: neither).
func benchPolicyGate(b *testing.B, gate int) *Policy {
	p, err := New(Config{NodeFeatures: 8, PodFeatures: 4, Hidden: 64, Rounds: 2, Seed: 1, Prior: gate > 0, Gate: gate})
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func benchBatch(bs, n int) *Batch {
	rng := rand.New(rand.NewPCG(3, 4))
	bt := randomBatch(rng, bs, n, 8, 4, 3, true)
	for i := range bt.Mask {
		bt.Mask[i] = true
	}
	for i := range bt.Domain {
		bt.Domain[i] = int32(i % 3)
	}
	return bt
}

// benchPrior gives bt k priors in [-3, 0] on every action.
func benchPrior(bt *Batch, k int) {
	rng := rand.New(rand.NewPCG(9, 10))
	bt.Prior = make([]float64, bt.B*k*(bt.N+1))
	for i := range bt.Prior {
		bt.Prior[i] = -3 * rng.Float64()
	}
}

func BenchmarkAct(b *testing.B) {
	for _, c := range []struct {
		b, n  int
		prior bool
		gate  int
	}{{16, 10, false, 0}, {16, 200, false, 0}, {16, 10, true, 0}, {16, 200, true, 0}, {16, 10, true, 3}, {16, 200, true, 3}} {
		name := fmt.Sprintf("B=%d/N=%d", c.b, c.n)
		if c.gate > 0 {
			name += fmt.Sprintf("/gate=%d", c.gate)
		} else if c.prior {
			name += "/prior"
		}
		b.Run(name, func(b *testing.B) {
			p := benchPolicyGate(b, c.gate)
			bt := benchBatch(c.b, c.n)
			if c.prior {
				p.cfg.Prior = true
				benchPrior(bt, max(1, c.gate))
			}
			rng := rand.New(rand.NewPCG(5, 6))
			var out ActResult
			b.ReportAllocs()
			for b.Loop() {
				if err := p.Act(bt, false, rng, &out); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(c.b)*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
		})
	}
}

func BenchmarkTrainStep(b *testing.B) {
	for _, c := range []struct{ b, n int }{{64, 10}, {64, 50}, {256, 10}} {
		b.Run(fmt.Sprintf("B=%d/N=%d", c.b, c.n), func(b *testing.B) {
			p := benchPolicy(b)
			bt := benchBatch(c.b, c.n)
			rng := rand.New(rand.NewPCG(7, 8))
			var act ActResult
			if err := p.Act(bt, false, rng, &act); err != nil {
				b.Fatal(err)
			}
			adv := make([]float64, c.b)
			ret := make([]float64, c.b)
			for i := range adv {
				adv[i] = rng.NormFloat64()
				ret[i] = rng.NormFloat64()
			}
			lc := LossConfig{ClipCoef: 0.2, VFCoef: 0.5, EntCoef: 0.01, MaxGradNorm: 0.5, LearningRate: 3e-4}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.TrainStep(bt, act.Actions, act.LogP, adv, ret, act.Values, lc); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(c.b)*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
		})
	}
}

func BenchmarkCloneStep(b *testing.B) {
	p := benchPolicy(b)
	bt := benchBatch(64, 10)
	var act ActResult
	if err := p.Act(bt, true, nil, &act); err != nil {
		b.Fatal(err)
	}
	cc := CloneConfig{LearningRate: 3e-4, MaxGradNorm: 0.5}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.CloneStep(bt, act.Actions, cc); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(64*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
}
