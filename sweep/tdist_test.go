package sweep

import (
	"math"
	"testing"
)

// tQuantile agrees with the printed 0.975 table for every df it holds, and
// with published quantiles at other levels: t(0.995, 7) = 3.499,
// t(0.99, 10) = 2.764, t(0.95, 1) = 6.314; with df 1 (Cauchy) the
// quantile is exactly tan(pi (p - 1/2)); for large df it tends to the
// normal's 1.95996.
func TestTQuantile(t *testing.T) {
	for df := 1; df <= len(tTable); df++ {
		if got := tQuantile(0.975, df); math.Abs(got-tTable[df-1]) > 0.0006 {
			t.Errorf("tQuantile(0.975, %d) = %.4f; the table says %.3f", df, got, tTable[df-1])
		}
	}
	for _, c := range []struct {
		p    float64
		df   int
		want float64
		tol  float64
	}{
		{0.995, 7, 3.499, 0.0006},
		{0.99, 10, 2.764, 0.0006},
		{0.95, 1, 6.314, 0.0006},
		{0.9, 1, math.Tan(0.4 * math.Pi), 1e-9},
		{0.975, 1000000, 1.959964, 1e-4},
	} {
		if got := tQuantile(c.p, c.df); math.Abs(got-c.want) > c.tol {
			t.Errorf("tQuantile(%v, %d) = %.6f; want %.6f", c.p, c.df, got, c.want)
		}
	}
	for _, bad := range []float64{0.5, 0.2, 1, math.NaN()} {
		if got := tQuantile(bad, 5); !math.IsNaN(got) {
			t.Errorf("tQuantile(%v, 5) = %v; want NaN", bad, got)
		}
	}
}

// Widen scales the half-width by the Bonferroni ratio: for 3 comparisons
// and 8 seeds t(1 - 0.05/6, 7)/t(0.975, 7) = 3.128/2.365 = 1.323; k = 1 and
// intervals without a half-width are unchanged.
func TestWiden(t *testing.T) {
	iv := Interval{Mean: -48.4, Half: 37.9, N: 8}
	w := iv.Widen(3)
	if r := w.Half / iv.Half; math.Abs(r-1.323) > 0.002 {
		t.Errorf("Widen(3) ratio with 8 seeds = %.4f; want 1.323", r)
	}
	if w.Mean != iv.Mean || w.N != iv.N {
		t.Errorf("Widen changed the mean or N: %+v", w)
	}
	if w.Excludes0() || !iv.Excludes0() {
		t.Errorf("-48.4 ± 37.9 should exclude 0 alone and not widened for 3 (%+v)", w)
	}
	if got := iv.Widen(1); got != iv {
		t.Errorf("Widen(1) = %+v; want %+v", got, iv)
	}
	one := Interval{Mean: 2, Half: math.NaN(), N: 1}
	if got := one.Widen(3); got.Mean != 2 || !math.IsNaN(got.Half) {
		t.Errorf("Widen of a one-sample interval = %+v", got)
	}
}
