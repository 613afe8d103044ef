package sweep

import (
	"math"
	"testing"

	"github.com/kubesim/kubesim/sim"
)

// flat returns a curve with value v at every level, NaN below from.
func flat(v float64, from int) sim.Curve {
	c := make(sim.Curve, sim.CurvePoints)
	for k := range c {
		c[k] = v
		if k < from {
			c[k] = math.NaN()
		}
	}
	return c
}

// TestCurveDelta: by hand. Seed 0: the policy is 1 point above the
// reference at every level but 2 below at 95%; over the 81 levels 50-130
// its mean is (80 x 1 - 2) / 81. Seed 1: 0.5 above everywhere. The mean
// over seeds is lowest at 95%: (-2 + 0.5) / 2 = -0.75. A NaN level (seed
// 1's reference at 60%) is left out of that seed's mean only.
func TestCurveDelta(t *testing.T) {
	p0, r0 := flat(91, 0), flat(90, 0)
	p0[95] = 88
	p1, r1 := flat(80.5, 0), flat(80, 0)
	r1[60] = math.NaN()
	per, worst, at := curveDelta([]sim.Curve{p0, p1}, []sim.Curve{r0, r1}, 50)
	if want := (80.0 - 2) / 81; math.Abs(per[0]-want) > 1e-12 {
		t.Errorf("seed 0 mean %v, want %v", per[0], want)
	}
	if math.Abs(per[1]-0.5) > 1e-12 {
		t.Errorf("seed 1 mean %v, want 0.5", per[1])
	}
	if at != 95 || math.Abs(worst+0.75) > 1e-12 {
		t.Errorf("worst %v at %d, want -0.75 at 95", worst, at)
	}
	// the levels below from never count: a loss at 10% is not the worst
	p0[10] = 0
	if _, _, at := curveDelta([]sim.Curve{p0, p1}, []sim.Curve{r0, r1}, 50); at != 95 {
		t.Errorf("worst at %d with a loss below from, want 95", at)
	}
	// no level with a value in both
	if per, _, at := curveDelta([]sim.Curve{flat(1, 131)}, []sim.Curve{flat(1, 0)}, 50); at != -1 || !math.IsNaN(per[0]) {
		t.Errorf("empty curves: at %d, per %v; want -1 and NaN", at, per)
	}
}
