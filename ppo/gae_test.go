package ppo

import (
	"math"
	"testing"
)

func TestGAE(t *testing.T) {
	// One environment, three steps, gamma = lambda = 0.5, rewards 1, 2, 3,
	// values 0.5, 1, 1.5, value after the rollout 2 (gamma*lambda = 0.25).
	rewards := []float64{1, 2, 3}
	values := []float64{0.5, 1, 1.5}
	boot := []float64{0, 4, 0}
	cases := []struct {
		name       string
		term, trun []bool
		want       []float64
	}{
		{
			// d2 = 3 + 0.5*2 - 1.5 = 2.5;   A2 = 2.5
			// d1 = 2 + 0.5*1.5 - 1 = 1.75;  A1 = 1.75 + 0.25*2.5 = 2.375
			// d0 = 1 + 0.5*1 - 0.5 = 1;     A0 = 1 + 0.25*2.375 = 1.59375
			name: "no episode end",
			term: []bool{false, false, false}, trun: []bool{false, false, false},
			want: []float64{1.59375, 2.375, 2.5},
		},
		{
			// Truncated at step 1: bootstrap from its final observation's value 4.
			// d1 = 2 + 0.5*4 - 1 = 3; A1 = 3 (nothing carried from the next episode)
			// A0 = 1 + 0.25*3 = 1.75; A2 = 2.5 as before.
			name: "truncated",
			term: []bool{false, false, false}, trun: []bool{false, true, false},
			want: []float64{1.75, 3, 2.5},
		},
		{
			// Terminated at step 1: no bootstrap. d1 = 2 - 1 = 1; A1 = 1; A0 = 1 + 0.25 = 1.25.
			name: "terminated",
			term: []bool{false, true, false}, trun: []bool{false, false, false},
			want: []float64{1.25, 1, 2.5},
		},
	}
	for _, tc := range cases {
		adv := make([]float64, 3)
		ret := make([]float64, 3)
		GAE(3, 1, rewards, values, tc.term, tc.trun, boot, []float64{2}, 0.5, 0.5, adv, ret)
		for i := range adv {
			if math.Abs(adv[i]-tc.want[i]) > 1e-12 || math.Abs(ret[i]-(tc.want[i]+values[i])) > 1e-12 {
				t.Errorf("%s: step %d: adv %v ret %v; want adv %v ret %v", tc.name, i, adv[i], ret[i], tc.want[i], tc.want[i]+values[i])
			}
		}
	}
}

// TestGAEEnvsIndependent: two environments interleaved time-major give the
// same advantages as each one alone.
func TestGAEEnvsIndependent(t *testing.T) {
	r := []float64{1, 5, 2, 6, 3, 7}
	v := []float64{0.5, 1, 1, 2, 1.5, 3}
	term := []bool{false, false, false, true, false, false}
	trun := make([]bool, 6)
	boot := make([]float64, 6)
	adv, ret := make([]float64, 6), make([]float64, 6)
	GAE(3, 2, r, v, term, trun, boot, []float64{2, 9}, 0.9, 0.8, adv, ret)
	for e := range 2 {
		ra, va := []float64{r[e], r[2+e], r[4+e]}, []float64{v[e], v[2+e], v[4+e]}
		ta := []bool{term[e], term[2+e], term[4+e]}
		a1, r1 := make([]float64, 3), make([]float64, 3)
		GAE(3, 1, ra, va, ta, make([]bool, 3), make([]float64, 3), []float64{[]float64{2, 9}[e]}, 0.9, 0.8, a1, r1)
		for s := range 3 {
			if adv[s*2+e] != a1[s] {
				t.Errorf("env %d step %d: %v interleaved, %v alone", e, s, adv[s*2+e], a1[s])
			}
		}
	}
}

func TestExplainedVariance(t *testing.T) {
	y := []float64{1, 2, 3, 4}
	cases := []struct {
		name string
		pred []float64
		want float64
	}{
		{"perfect", []float64{1, 2, 3, 4}, 1},
		// Constant prediction: Var(y - c) = Var(y), so 0.
		{"constant", []float64{7, 7, 7, 7}, 0},
		// Residuals 1, -1, 1, -1: variance 1; Var(y) = 1.25; 1 - 1/1.25 = 0.2.
		{"noisy", []float64{0, 3, 2, 5}, 0.2},
	}
	for _, tc := range cases {
		if got := ExplainedVariance(tc.pred, y); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: got %v; want %v", tc.name, got, tc.want)
		}
	}
	if !math.IsNaN(ExplainedVariance([]float64{1, 2}, []float64{3, 3})) {
		t.Error("zero-variance target: want NaN")
	}
}

func TestNormalize(t *testing.T) {
	// Mean 2.5; unbiased std sqrt(5/3).
	x := []float64{1, 2, 3, 4}
	Normalize(x)
	s := math.Sqrt(5.0 / 3)
	for i, want := range []float64{-1.5 / s, -0.5 / s, 0.5 / s, 1.5 / s} {
		if math.Abs(x[i]-want) > 1e-7 {
			t.Errorf("x[%d] = %v; want %v", i, x[i], want)
		}
	}
}
