package pointer

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kubesim/kubesim/model/internal/nn"
)

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"valid", Config{Hidden: 4, LogitClip: 10}, true},
		{"no hidden", Config{LogitClip: 10}, false},
		{"zero clip", Config{Hidden: 4}, false},
		{"infinite clip", Config{Hidden: 4, LogitClip: math.Inf(1)}, false},
		{"pending clip", Config{Hidden: 4, LogitClip: 3, PendingClip: 15}, true},
		{"negative pending clip", Config{Hidden: 4, LogitClip: 3, PendingClip: -1}, false},
		{"NaN pending clip", Config{Hidden: 4, LogitClip: 3, PendingClip: math.NaN()}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.cfg.Validate(); (err == nil) != tc.ok {
				t.Errorf("Validate() = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

// Hand-set weights, H = 1, one cluster of two nodes with states h = (1, 2)
// and pod embedding 0: ctx = [mean h, pod, 1] = [1.5, 0, 1].
// Query Q = (2, 0, 0)^T gives q = 3, scaled q/sqrt(1) = 3; key K = 0.5:
// raw node scores 3*0.5*h = 1.5, 3, centred on the score of the mean
// embedding 3*0.5*1.5 = 2.25: -0.75, 0.75; Pending key 0.1: 0.3. Logits
// with C = 2: 2 tanh(-0.75), 2 tanh(0.75), 2 tanh(0.3); node 0 masked. Value head: V1 =
// (1, 0, -1) -> relu(1.5 - 1) = 0.5, V2 = (4, 1) -> 4*0.5 + 1 = 3.
func TestForwardKnownAnswer(t *testing.T) {
	d, l := handSet(t, 0)
	logp, value := make([]float64, 3), make([]float64, 1)
	var ws Workspace[float64]
	Forward(d, &ws, l, []float64{1, 2}, []float64{0}, []bool{false, true, true}, nil, logp, value)
	a, b := 2*math.Tanh(0.75), 2*math.Tanh(0.3)
	lse := math.Log(math.Exp(a) + math.Exp(b))
	for i, want := range []float64{math.Inf(-1), a - lse, b - lse} {
		if got := logp[i]; (i == 0 && got > -1e8) || (i > 0 && math.Abs(got-want) > 1e-12) {
			t.Errorf("logp[%d] = %v, want %v", i, got, want)
		}
	}
	if math.Abs(value[0]-3) > 1e-12 {
		t.Errorf("value = %v, want 3", value[0])
	}
}

// The prior adds to the clipped logits of allowed actions only: the known
// answer above with prior (NaN, 0.5, -1), node 0 masked.
func TestForwardPrior(t *testing.T) {
	d, l := handSet(t, 0)
	logp, value := make([]float64, 3), make([]float64, 1)
	var ws Workspace[float64]
	Forward(d, &ws, l, []float64{1, 2}, []float64{0}, []bool{false, true, true}, []float64{math.NaN(), 0.5, -1}, logp, value)
	a, b := 2*math.Tanh(0.75)+0.5, 2*math.Tanh(0.3)-1
	lse := math.Log(math.Exp(a) + math.Exp(b))
	if math.Exp(logp[0]) != 0 {
		t.Errorf("masked node: probability %v, want 0", math.Exp(logp[0]))
	}
	for i, want := range []float64{a - lse, b - lse} {
		if got := logp[i+1]; math.Abs(got-want) > 1e-12 {
			t.Errorf("logp[%d] = %v, want %v", i+1, got, want)
		}
	}
}

// PendingClip scales Pending's logit alone: the known answer above with C =
// 2 for the nodes and 20 for Pending, prior (NaN, 0, -10) as a heuristic's
// prior that puts Pending 10 logits below the best node. Pending's logit is
// 20 tanh(0.3) - 10 = -4.17, node 1's 2 tanh(0.75) = 1.27; with Pending at
// C = 2 it could not get above -10 + 2 = -8.
func TestForwardPendingClip(t *testing.T) {
	d, l := handSet(t, 20)
	logp, value := make([]float64, 3), make([]float64, 1)
	var ws Workspace[float64]
	Forward(d, &ws, l, []float64{1, 2}, []float64{0}, []bool{false, true, true}, []float64{math.NaN(), 0, -10}, logp, value)
	a, b := 2*math.Tanh(0.75), 20*math.Tanh(0.3)-10
	lse := math.Log(math.Exp(a) + math.Exp(b))
	for i, want := range []float64{a - lse, b - lse} {
		if got := logp[i+1]; math.Abs(got-want) > 1e-12 {
			t.Errorf("logp[%d] = %v, want %v", i+1, got, want)
		}
	}
}

// handSet returns the decoder of the known answer above (H = 1, C = 2,
// Pending's C pendingClip, 0 for C) with its hand-set weights, and the
// layout of its one cluster of two nodes.
func handSet(t *testing.T, pendingClip float64) (*Decoder, *nn.Layout) {
	t.Helper()
	d, err := New(Config{Hidden: 1, LogitClip: 2, PendingClip: pendingClip, Float64: true}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	copy(nn.Data[float64](d.Query.Value), []float64{2, 0, 0})
	copy(nn.Data[float64](d.Key.Value), []float64{0.5})
	copy(nn.Data[float64](d.Pending.Value), []float64{0.1})
	copy(nn.Data[float64](d.Value1.Value), []float64{1, 0, -1})
	copy(nn.Data[float64](d.Value2.Value), []float64{4, 1})
	var l nn.Layout
	if err := l.Set(1, 2, []bool{true, true}, []int32{-1, -1}); err != nil {
		t.Fatal(err)
	}
	return d, &l
}
