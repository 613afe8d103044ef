package model

import (
	"math"
	"math/rand/v2"
)

// randomBatch returns B samples padded to N nodes with D node and P pod
// features drawn from rng. Sample s has between 1 and N valid nodes (all N
// when full), nodes spread over up to k failure domains (some with no domain,
// -1), and a random mask that always allows Pending.
func randomBatch(rng *rand.Rand, b, n, d, p, k int, full bool) *Batch {
	bt := &Batch{
		B: b, N: n,
		Nodes:     make([]float64, b*n*d),
		NodeValid: make([]bool, b*n),
		Pod:       make([]float64, b*p),
		Mask:      make([]bool, b*(n+1)),
		Domain:    make([]int32, b*n),
	}
	for i := range bt.Nodes {
		bt.Nodes[i] = rng.Float64()
	}
	for i := range bt.Pod {
		bt.Pod[i] = rng.Float64()
	}
	for s := range b {
		valid := n
		if !full {
			valid = 1 + rng.IntN(n)
		}
		for i := range n {
			r := s*n + i
			bt.NodeValid[r] = i < valid
			bt.Domain[r] = int32(rng.IntN(k+1)) - 1
			bt.Mask[s*(n+1)+i] = rng.Float64() < 0.8
		}
		bt.Mask[s*(n+1)+n] = true
	}
	return bt
}

func testConfig(float64s bool) Config {
	return Config{NodeFeatures: 5, PodFeatures: 3, Hidden: 8, Rounds: 2, Float64: float64s, Seed: 7}
}

// perturb adds noise of scale 0.3 to every weight, so that tests do not run
// on the near-uniform policy and zero biases of a fresh initialisation.
func perturb(p *Policy, rng *rand.Rand) {
	for _, w := range p.params {
		switch d := w.Value.Data().(type) {
		case []float64:
			for i := range d {
				d[i] += 0.3 * rng.NormFloat64()
			}
		case []float32:
			for i := range d {
				d[i] += float32(0.3 * rng.NormFloat64())
			}
		}
	}
}

// addPrior gives b a prior: values in [-4, 0] for valid, allowed actions,
// NaN for padding nodes and masked actions (which must be ignored).
func addPrior(rng *rand.Rand, b *Batch) {
	k := b.N + 1
	b.Prior = make([]float64, b.B*k)
	for i := range b.Prior {
		s, a := i/k, i%k
		if !b.Mask[i] || (a < b.N && !b.NodeValid[s*b.N+a]) {
			b.Prior[i] = math.NaN()
			continue
		}
		b.Prior[i] = -4 * rng.Float64()
	}
}

// addPriors gives b k priors per sample (Config.Gate's layout), each as
// addPrior's: in [-4, 0] where allowed, NaN where ignored.
func addPriors(rng *rand.Rand, b *Batch, k int) {
	w := b.N + 1
	b.Prior = make([]float64, b.B*k*w)
	for i := range b.Prior {
		s, a := i/(k*w), i%w
		if !b.Mask[s*w+a] || (a < b.N && !b.NodeValid[s*b.N+a]) {
			b.Prior[i] = math.NaN()
			continue
		}
		b.Prior[i] = -4 * rng.Float64()
	}
}
