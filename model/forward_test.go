package model

import (
	"math"
	"math/rand/v2"
	"testing"
)

// maxAllowedDiff returns the largest |a-b| over allowed actions' log-probs
// and over values.
func maxAllowedDiff(b *Batch, x, y *Output) float64 {
	allow := make([]bool, len(b.Mask))
	allowed(allow, b)
	d := 0.0
	for i, ok := range allow {
		if ok {
			d = max(d, math.Abs(x.LogP[i]-y.LogP[i]))
		}
	}
	for i := range x.Values {
		d = max(d, math.Abs(x.Values[i]-y.Values[i]))
	}
	return d
}

// The host forward pass that Act uses computes what the gorgonia graph
// computes, over the same weights.
func TestHostForwardMatchesGraph(t *testing.T) {
	for _, tc := range []struct {
		name    string
		f64     bool
		b, n, k int
		tol     float64
		prior   bool
		pclip   float64 // Config.PendingClip
	}{
		{"float64 B=3 N=7", true, 3, 7, 2, 1e-9, false, 0},
		{"float64 B=5 N=20 many domains", true, 5, 20, 12, 1e-9, false, 0},
		// float32 checks rounding only (the float64 cases check the maths):
		// the centred node score is a difference of two float32 dot
		// products of similar size, which the graph and the host round in
		// different orders, so logits of size C = 10 agree to a few 1e-6.
		{"float32 B=4 N=9", false, 4, 9, 3, 3e-5, false, 0},
		{"float64 B=3 N=7 prior", true, 3, 7, 2, 1e-9, true, 0},
		{"float32 B=4 N=9 prior", false, 4, 9, 3, 3e-5, true, 0},
		{"float64 B=3 N=7 prior pending clip", true, 3, 7, 2, 1e-9, true, 25},
		{"float32 B=4 N=9 prior pending clip", false, 4, 9, 3, 3e-5, true, 25},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(tc.f64)
			cfg.Prior, cfg.PendingClip = tc.prior, tc.pclip
			p, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			perturb(p, rand.New(rand.NewPCG(9, 9)))
			rng := rand.New(rand.NewPCG(1, uint64(tc.n)))
			b := randomBatch(rng, tc.b, tc.n, 5, 3, tc.k, false)
			if tc.prior {
				addPrior(rng, b)
			}
			var host, gr Output
			if err := p.Forward(b, &host); err != nil {
				t.Fatal(err)
			}
			if err := p.graphForward(b, &gr); err != nil {
				t.Fatal(err)
			}
			if d := maxAllowedDiff(b, &host, &gr); d > tc.tol {
				t.Errorf("max |host - graph| = %g, want <= %g", d, tc.tol)
			}
		})
	}
}
