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
func benchPolicy(b *testing.B) *Policy {
	p, err := New(Config{NodeFeatures: 8, PodFeatures: 4, Hidden: 64, Rounds: 2, Seed: 1})
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

// benchPrior gives bt a prior in [-3, 0] on every action.
func benchPrior(bt *Batch) {
	rng := rand.New(rand.NewPCG(9, 10))
	bt.Prior = make([]float64, bt.B*(bt.N+1))
	for i := range bt.Prior {
		bt.Prior[i] = -3 * rng.Float64()
	}
}

func BenchmarkAct(b *testing.B) {
	for _, c := range []struct {
		b, n  int
		prior bool
	}{{16, 10, false}, {16, 200, false}, {16, 10, true}, {16, 200, true}} {
		name := fmt.Sprintf("B=%d/N=%d", c.b, c.n)
		if c.prior {
			name += "/prior"
		}
		b.Run(name, func(b *testing.B) {
			p := benchPolicy(b)
			bt := benchBatch(c.b, c.n)
			if c.prior {
				p.cfg.Prior = true
				benchPrior(bt)
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
