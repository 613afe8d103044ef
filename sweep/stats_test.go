package sweep

import (
	"math"
	"testing"
)

func TestMeanCI(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		name       string
		xs         []float64
		mean, half float64
		n          int
	}{
		// mean 2, sample sd 1 (deviations -1, 0, 1: ss 2, /2 = 1), t(2) =
		// 4.303: half = 4.303 * 1 / sqrt(3) = 2.4843
		{"three", []float64{1, 2, 3}, 2, 4.303 / math.Sqrt(3), 3},
		// five equal values: no spread
		{"constant", []float64{4, 4, 4, 4, 4}, 4, 0, 5},
		// NaN (no sample) is left out: 1, 3 -> mean 2, sd sqrt(2), t(1) =
		// 12.706, half = 12.706 * sqrt(2) / sqrt(2) = 12.706
		{"nan left out", []float64{1, nan, 3}, 2, 12.706, 2},
		{"one", []float64{5}, 5, nan, 1},
		{"none", []float64{nan}, nan, nan, 0},
	}
	same := func(a, b float64) bool { return math.IsNaN(a) && math.IsNaN(b) || math.Abs(a-b) < 1e-9 }
	for _, tc := range cases {
		got := MeanCI(tc.xs)
		if !same(got.Mean, tc.mean) || !same(got.Half, tc.half) || got.N != tc.n {
			t.Errorf("%s: MeanCI = %+v; want mean %v half %v n %d", tc.name, got, tc.mean, tc.half, tc.n)
		}
	}
}

func TestPairedCI(t *testing.T) {
	// differences 1, 1, 1, 1, 2: mean 1.2, ss = 4*0.04 + 0.64 = 0.8, sd =
	// sqrt(0.2), half = 2.776 * sqrt(0.2) / sqrt(5) = 2.776 * 0.2 = 0.5552
	a := []float64{11, 12, 13, 14, 17}
	b := []float64{10, 11, 12, 13, 15}
	got := PairedCI(a, b)
	if math.Abs(got.Mean-1.2) > 1e-12 || math.Abs(got.Half-0.5552) > 1e-9 || !got.Excludes0() {
		t.Errorf("PairedCI = %+v; want 1.2 +- 0.5552, excluding 0", got)
	}
	// the unpaired intervals of a and b overlap, but pairing removes the
	// shared seed-to-seed spread
	if ia, ib := MeanCI(a), MeanCI(b); ia.Mean-ia.Half > ib.Mean+ib.Half {
		t.Errorf("unpaired intervals %+v, %+v do not overlap; the test wants them to", ia, ib)
	}
	if (Interval{Mean: 1, Half: 2}).Excludes0() || (Interval{Mean: 1, Half: math.NaN()}).Excludes0() {
		t.Error("an interval containing 0, or without a width, excludes 0")
	}
}

func TestT975(t *testing.T) {
	// exact values: df 40 -> 2.0211, 120 -> 1.9799
	for _, c := range []struct {
		df   int
		want float64
	}{{1, 12.706}, {4, 2.776}, {30, 2.042}, {40, 2.0211}, {120, 1.9799}} {
		if got := t975(c.df); math.Abs(got-c.want) > 0.002 {
			t.Errorf("t975(%d) = %.4f; want %.4f", c.df, got, c.want)
		}
	}
}
