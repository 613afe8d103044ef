package model

import (
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/model/internal/nn"
)

// gateConfig is testConfig with a zero correction and a gate over k priors.
func gateConfig(f64 bool, k int) Config {
	cfg := testConfig(f64)
	cfg.Prior, cfg.ZeroInit, cfg.Gate = true, true, k
	return cfg
}

// checkLogP compares out's log-probabilities with want (-Inf: probability 0).
func checkLogP(t *testing.T, name string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", name, len(got), len(want))
	}
	for i, w := range want {
		if math.IsInf(w, -1) {
			if math.Exp(got[i]) != 0 {
				t.Errorf("%s: action %d: probability %v, want 0", name, i, math.Exp(got[i]))
			}
		} else if math.Abs(got[i]-w) > tol {
			t.Errorf("%s: action %d: log-prob %v, want %v", name, i, got[i], w)
		}
	}
}

// A fresh gate (zero weights) mixes its priors with equal weights, so a
// zero-correction policy acts as the priors' mean. By hand: N = 3, node 1
// masked; priors (-2, 7, 0, -10) and (0, NaN, -4, -10) have the mean
// (-1, -, -2, -10) over nodes 0, 2 and Pending.
func TestGateStartsAtTheMeanOfItsPriors(t *testing.T) {
	for _, f64 := range []bool{true, false} {
		p := mustNew(t, gateConfig(f64, 2))
		b := randomBatch(rand.New(rand.NewPCG(5, 5)), 1, 3, 5, 3, 2, true)
		b.Mask = []bool{true, false, true, true}
		b.Prior = []float64{-2, 7, 0, -10, 0, math.NaN(), -4, -10}
		want := logSoftmaxAllowed([]float64{-1, 0, -2, -10}, b.Mask)
		tol := 1e-12
		if !f64 {
			tol = 1e-6
		}
		var gr Output
		if err := p.graphForward(b, &gr); err != nil {
			t.Fatal(err)
		}
		out := mustForward(t, p, b)
		checkLogP(t, "host", out.LogP, want, tol)
		checkLogP(t, "graph", gr.LogP, want, tol)
		checkLogP(t, "gate weights", out.Gate, []float64{0.5, 0.5}, tol)
	}
}

// The gate's bias picks the prior: with bias (0, 20) the weights are
// (1/(1+e^20), e^20/(1+e^20)) and the policy follows the second prior, with
// (20, 0) the first. Greedy actions are each prior's argmax.
func TestGateBiasSelectsAPrior(t *testing.T) {
	cfg := gateConfig(true, 2)
	p := mustNew(t, cfg)
	b := randomBatch(rand.New(rand.NewPCG(6, 6)), 1, 3, 5, 3, 2, true)
	b.Mask = []bool{true, true, true, true}
	p0, p1 := []float64{-3, 0, -1, -10}, []float64{0, -5, -2, -10}
	b.Prior = append(slices.Clone(p0), p1...)
	bias := nn.Data[float64](p.dec.Gate.Value)[2*cfg.Hidden*2:] // the last row of (2H+1) x 2
	for _, tc := range []struct {
		bias []float64
		best int
	}{{[]float64{0, 20}, 0}, {[]float64{20, 0}, 1}} {
		copy(bias, tc.bias)
		e := math.Exp(tc.bias[1] - tc.bias[0])
		w0, w1 := 1/(1+e), e/(1+e)
		mix := make([]float64, 4)
		for i := range mix {
			mix[i] = w0*p0[i] + w1*p1[i]
		}
		checkLogP(t, "host", mustForward(t, p, b).LogP, logSoftmaxAllowed(mix, b.Mask), 1e-12)
		var act ActResult
		if err := p.Act(b, true, nil, &act); err != nil {
			t.Fatal(err)
		}
		checkLogP(t, "Act's gate weights", act.Gate, []float64{w0, w1}, 1e-12)
		if act.Actions[0] != tc.best {
			t.Errorf("bias %v: greedy action %d, want %d", tc.bias, act.Actions[0], tc.best)
		}
	}
}

// With trained-looking weights (perturbed), padding and masks, the host pass
// of a gated policy equals the gorgonia graph's.
func TestGateHostMatchesGraph(t *testing.T) {
	for _, f64 := range []bool{true, false} {
		cfg := gateConfig(f64, 3)
		cfg.ZeroInit = false
		p := mustNew(t, cfg)
		rng := rand.New(rand.NewPCG(8, 9))
		perturb(p, rng)
		b := randomBatch(rng, 5, 7, 5, 3, 3, false)
		addPriors(rng, b, 3)
		host := mustForward(t, p, b)
		var gr Output
		if err := p.graphForward(b, &gr); err != nil {
			t.Fatal(err)
		}
		tol := 1e-10
		if !f64 {
			tol = 2e-4
		}
		for i, v := range gr.LogP {
			if v < -1e8 {
				if host.LogP[i] > -1e8 {
					t.Errorf("float64=%v: action %d masked in the graph, log-prob %v on the host", f64, i, host.LogP[i])
				}
				continue
			}
			if math.Abs(host.LogP[i]-v) > tol {
				t.Errorf("float64=%v: action %d: host %v, graph %v", f64, i, host.LogP[i], v)
			}
		}
		for i, v := range gr.Values {
			if math.Abs(host.Values[i]-v) > tol {
				t.Errorf("float64=%v: value %d: host %v, graph %v", f64, i, host.Values[i], v)
			}
		}
	}
}

// Output.Gate holds each sample's gate weights: rows that sum to 1, equal
// to the sample's own when it is forwarded alone, also when a batch large
// enough to be split over goroutines (parallelRows) is; a policy without a
// gate reports none.
func TestGateWeightsPerSample(t *testing.T) {
	const bs, n, d, pf, k = 60, 20, 5, 3, 3
	cfg := gateConfig(true, k)
	cfg.ZeroInit = false
	p := mustNew(t, cfg)
	rng := rand.New(rand.NewPCG(12, 13))
	perturb(p, rng)
	b := randomBatch(rng, bs, n, d, pf, 3, false)
	addPriors(rng, b, k)
	if bs*n < parallelRows {
		t.Fatalf("batch of %d rows is not split (parallelRows %d)", bs*n, parallelRows)
	}
	all := slices.Clone(mustForward(t, p, b).Gate)
	if len(all) != bs*k {
		t.Fatalf("%d gate weights, want %d", len(all), bs*k)
	}
	distinct := false
	for s := range bs {
		row := all[s*k : (s+1)*k]
		var sum float64
		for _, w := range row {
			sum += w
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("sample %d: weights %v sum to %v", s, row, sum)
		}
		one := &Batch{B: 1, N: n,
			Nodes: b.Nodes[s*n*d : (s+1)*n*d], NodeValid: b.NodeValid[s*n : (s+1)*n], Pod: b.Pod[s*pf : (s+1)*pf],
			Mask: b.Mask[s*(n+1) : (s+1)*(n+1)], Domain: b.Domain[s*n : (s+1)*n], Prior: b.Prior[s*k*(n+1) : (s+1)*k*(n+1)]}
		checkLogP(t, "sample alone", mustForward(t, p, one).Gate, row, 1e-12)
		distinct = distinct || math.Abs(row[0]-all[0]) > 1e-6
	}
	if !distinct {
		t.Error("every sample has the same weights: the gate does not depend on the state, the test says nothing")
	}
	plainCfg := cfg
	plainCfg.Gate = 0
	plain := mustNew(t, plainCfg)
	var first []float64 // each sample's first prior
	for s := range bs {
		first = append(first, b.Prior[s*k*(n+1):(s*k+1)*(n+1)]...)
	}
	b.Prior = first
	if g := mustForward(t, plain, b).Gate; len(g) != 0 {
		t.Errorf("a policy without a gate reports %d gate weights", len(g))
	}
}

// Gate is part of the architecture: a gated checkpoint round-trips and is
// refused by a policy without the gate, naming the field.
func TestCheckpointGate(t *testing.T) {
	p := mustNew(t, gateConfig(false, 3))
	perturb(p, rand.New(rand.NewPCG(1, 2)))
	path := filepath.Join(t.TempDir(), "gate.ckpt")
	if err := p.Save(path, nil); err != nil {
		t.Fatal(err)
	}
	q, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if q.Config().Gate != 3 {
		t.Fatalf("loaded gate %d, want 3", q.Config().Gate)
	}
	if !slices.Equal(nn.Data[float32](q.dec.Gate.Value), nn.Data[float32](p.dec.Gate.Value)) {
		t.Error("gate weights differ after the round trip")
	}
	plain := mustNew(t, gateConfig(false, 0))
	if err := plain.Restore(path); err == nil || !errors.Is(err, ErrCheckpoint) || !strings.Contains(err.Error(), "gate is 3 in the checkpoint, 0 in the policy") {
		t.Errorf("Restore of a gated checkpoint into a policy without a gate: error %v", err)
	}
}

// Bad gate configurations and prior lengths are errors.
func TestGateErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"one prior", gateConfig(false, 1), "Gate 1"},
		{"too many", gateConfig(false, 17), "Gate 17"},
		{"no prior", func() Config { c := gateConfig(false, 2); c.Prior = false; return c }(), "needs Prior"},
	} {
		if _, err := New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: New error %v, want one naming %q", tc.name, err, tc.want)
		}
	}
	p := mustNew(t, gateConfig(false, 2))
	b := randomBatch(rand.New(rand.NewPCG(2, 2)), 2, 3, 5, 3, 2, true)
	b.Prior = make([]float64, b.B*(b.N+1)) // one prior where the gate wants two
	var out Output
	if err := p.Forward(b, &out); err == nil || !strings.Contains(err.Error(), "gate's 2 priors") {
		t.Errorf("one prior for a gate of two: error %v", err)
	}
}
