package gnn

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
		{"valid", Config{NodeFeatures: 3, PodFeatures: 2, Hidden: 4, Rounds: 1}, true},
		{"no node features", Config{PodFeatures: 2, Hidden: 4, Rounds: 1}, false},
		{"no pod features", Config{NodeFeatures: 3, Hidden: 4, Rounds: 1}, false},
		{"no hidden", Config{NodeFeatures: 3, PodFeatures: 2, Rounds: 1}, false},
		{"no rounds", Config{NodeFeatures: 3, PodFeatures: 2, Hidden: 4}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.cfg.Validate(); (err == nil) != tc.ok {
				t.Errorf("Validate() = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

// Parameter shapes do not depend on N: (D+1)xH, (P+1)xH, then per round
// HxH (self), HxH (neighbours) and (2H+1)xH (context).
func TestParamShapes(t *testing.T) {
	e, err := New(Config{NodeFeatures: 3, PodFeatures: 2, Hidden: 4, Rounds: 2}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int{{4, 4}, {3, 4}, {4, 4}, {4, 4}, {9, 4}, {4, 4}, {4, 4}, {9, 4}}
	ps := e.Params()
	if len(ps) != len(want) {
		t.Fatalf("%d params, want %d", len(ps), len(want))
	}
	for i, p := range ps {
		if s := []int(p.Value.Shape()); s[0] != want[i][0] || s[1] != want[i][1] {
			t.Errorf("%s shape %v, want %v", p.Name, s, want[i])
		}
	}
}

// With every weight zero but the embedding's bias row, all node states are
// relu(bias) before the rounds and relu(0) = 0 after them: a hand-checkable
// fixed point of the host pass.
func TestForwardZeroWeights(t *testing.T) {
	e, err := New(Config{NodeFeatures: 2, PodFeatures: 1, Hidden: 3, Rounds: 1, Float64: true}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range e.Params() {
		clear(nn.Data[float64](p.Value))
	}
	// Round context bias row (last row of Ctx) = (1, -1, 2): every valid
	// node ends at relu(1, -1, 2) = (1, 0, 2).
	ctx := nn.Data[float64](e.Round[0].Ctx.Value)
	copy(ctx[6*3:], []float64{1, -1, 2})
	var l nn.Layout
	if err := l.Set(1, 2, []bool{true, true}, []int32{0, 0}); err != nil {
		t.Fatal(err)
	}
	var ws Workspace[float64]
	h, p := Forward(e, &ws, &l, []float64{0.5, 0.5, 1, 0.2, 0.3, 1}, []float64{0.7, 1})
	for i, want := range []float64{1, 0, 2, 1, 0, 2} {
		if math.Abs(h[i]-want) > 0 {
			t.Errorf("h[%d] = %v, want %v", i, h[i], want)
		}
	}
	for i, v := range p {
		if v != 0 {
			t.Errorf("pod embedding[%d] = %v, want 0", i, v)
		}
	}
}
