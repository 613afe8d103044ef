package model

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRowCacheBitIdentical runs two copies of a policy on the same stream of
// batches, one with the row cache (SetRowCache) and one without: successive
// batches change a few node rows, the pod, the mask, the failure domains,
// sometimes the node count and sometimes the weights (as training between
// calls does). Every log-probability and value must match bit for bit.
func TestRowCacheBitIdentical(t *testing.T) {
	for _, f64 := range []bool{false, true} {
		for _, bs := range []int{1, 2} {
			cfg := Config{NodeFeatures: 6, PodFeatures: 3, Hidden: 64, Rounds: 2, Float64: f64, Prior: true, Seed: 5}
			plain, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			cached, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			perturb(plain, rand.New(rand.NewPCG(1, 2)))
			perturb(cached, rand.New(rand.NewPCG(1, 2)))
			cached.SetRowCache(true)
			if !cached.rowCache {
				t.Skip("the row cache is off with this build's BLAS")
			}
			rng := rand.New(rand.NewPCG(3, 4))
			n := 300
			b := randomBatch(rng, bs, n, cfg.NodeFeatures, cfg.PodFeatures, 4, true)
			addPrior(rng, b)
			var hits int
			for call := range 60 {
				switch {
				case call == 30: // a different node count: everything again
					n = 280
					b = randomBatch(rng, bs, n, cfg.NodeFeatures, cfg.PodFeatures, 4, true)
					addPrior(rng, b)
				case call%10 == 9: // a training step between calls
					seed := rng.Uint64()
					perturb(plain, rand.New(rand.NewPCG(seed, 1)))
					perturb(cached, rand.New(rand.NewPCG(seed, 1)))
				case call > 0:
					for range 1 + rng.IntN(12) {
						r := rng.IntN(bs * n)
						b.Nodes[r*cfg.NodeFeatures+rng.IntN(cfg.NodeFeatures)] = rng.Float64()
					}
					for i := range b.Pod {
						b.Pod[i] = rng.Float64()
					}
					b.Mask[rng.IntN(n)] = false
					b.Domain[rng.IntN(bs*n)] = int32(rng.IntN(5)) - 1
				}
				var want, got Output
				if err := plain.Forward(b, &want); err != nil {
					t.Fatal(err)
				}
				if err := cached.Forward(b, &got); err != nil {
					t.Fatal(err)
				}
				for i := range want.LogP {
					if math.Float64bits(got.LogP[i]) != math.Float64bits(want.LogP[i]) {
						t.Fatalf("float64 %v, B=%d, call %d: logp[%d] = %v with the cache, %v without", f64, bs, call, i, got.LogP[i], want.LogP[i])
					}
				}
				if k := len(cached.workers[0].h32.enc.CachedRows()) + len(cached.workers[0].h64.enc.CachedRows()); k > 0 && k < bs*n/4 {
					hits++
				}
				for i := range want.Values {
					if math.Float64bits(got.Values[i]) != math.Float64bits(want.Values[i]) {
						t.Fatalf("float64 %v, B=%d, call %d: value[%d] = %v with the cache, %v without", f64, bs, call, i, got.Values[i], want.Values[i])
					}
				}
			}
			// the cache served most calls, recomputing a few rows of each
			if hits < 40 {
				t.Fatalf("float64 %v, B=%d: the cache kept most rows on %d calls of 60; want >= 40", f64, bs, hits)
			}
		}
	}
}
