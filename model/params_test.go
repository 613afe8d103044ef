package model

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLogitWeightsRoundTrip: the vector is shorter than all the weights
// (the value head is not in it), round-trips bit for bit, and writing a
// changed vector changes the logits (float32 and float64 policies); a
// wrong length is an error.
func TestLogitWeightsRoundTrip(t *testing.T) {
	for _, f64 := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(3, 4))
		p, err := New(testConfig(f64))
		if err != nil {
			t.Fatal(err)
		}
		perturb(p, rng)
		b := randomBatch(rng, 3, 6, 5, 3, 2, false)
		var o0, o1 Output
		if err := p.Forward(b, &o0); err != nil {
			t.Fatal(err)
		}
		lp0 := append([]float64(nil), o0.LogP...)
		w := p.LogitWeights(nil)
		if len(w) != p.NumLogitWeights() || len(w) == 0 || len(w) >= p.NumParams() {
			t.Fatalf("float64 %v: %d logit weights of %d (NumLogitWeights %d)", f64, len(w), p.NumParams(), p.NumLogitWeights())
		}
		if err := p.SetLogitWeights(w); err != nil {
			t.Fatal(err)
		}
		if err := p.Forward(b, &o1); err != nil {
			t.Fatal(err)
		}
		for i := range lp0 {
			if o1.LogP[i] != lp0[i] && !(math.IsInf(lp0[i], -1) && math.IsInf(o1.LogP[i], -1)) {
				t.Fatalf("float64 %v: round trip changed logit %d: %v -> %v", f64, i, lp0[i], o1.LogP[i])
			}
		}
		for i := range w {
			w[i] += 0.5 * rng.NormFloat64()
		}
		if err := p.SetLogitWeights(w); err != nil {
			t.Fatal(err)
		}
		if got := p.LogitWeights(nil); math.Abs(got[0]-w[0]) > 1e-6 || math.Abs(got[len(got)-1]-w[len(w)-1]) > 1e-6 {
			t.Fatalf("float64 %v: read back %v, %v; wrote %v, %v", f64, got[0], got[len(got)-1], w[0], w[len(w)-1])
		}
		if err := p.Forward(b, &o1); err != nil {
			t.Fatal(err)
		}
		changed := false
		for i := range lp0 {
			if !math.IsInf(lp0[i], -1) && math.Abs(o1.LogP[i]-lp0[i]) > 1e-9 {
				changed = true
			}
		}
		if !changed {
			t.Errorf("float64 %v: new logit weights, same logits", f64)
		}
		if err := p.SetLogitWeights(w[1:]); err == nil {
			t.Errorf("float64 %v: a short vector was accepted", f64)
		}
	}
}
