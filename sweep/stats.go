package sweep

import "math"

// Interval is the mean of a sample with the half-width of its two-sided 95%
// confidence interval (Student's t with N-1 degrees of freedom): the
// interval is [Mean-Half, Mean+Half]. NaN values (statistics that had no
// sample) are left out and N counts the rest; Mean is NaN when N is 0 and
// Half is NaN when N < 2.
type Interval struct {
	Mean, Half float64
	N          int
}

// MeanCI returns the mean of xs and its 95% confidence interval.
func MeanCI(xs []float64) Interval {
	var n int
	var sum float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			sum += x
			n++
		}
	}
	iv := Interval{Mean: math.NaN(), Half: math.NaN(), N: n}
	if n == 0 {
		return iv
	}
	iv.Mean = sum / float64(n)
	if n < 2 {
		return iv
	}
	var ss float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			d := x - iv.Mean
			ss += d * d
		}
	}
	sd := math.Sqrt(ss / float64(n-1))
	iv.Half = t975(n-1) * sd / math.Sqrt(float64(n))
	return iv
}

// PairedCI returns the mean difference a[i] - b[i] over the pairs where
// both are numbers, with its 95% confidence interval: the paired
// comparison of two schedulers on the same seeds.
func PairedCI(a, b []float64) Interval {
	d := make([]float64, min(len(a), len(b)))
	for i := range d {
		d[i] = a[i] - b[i] // NaN when either is NaN
	}
	return MeanCI(d)
}

// Widen returns the interval at the Bonferroni level for a family of k
// comparisons judged together: the two-sided 1 - 0.05/k interval, its
// half-width scaled by t(1 - 0.025/k)/t(0.975) with N-1 degrees of
// freedom (1.32 for k = 3 and 8 seeds). k <= 1 returns iv unchanged.
func (iv Interval) Widen(k int) Interval {
	if k <= 1 || iv.N < 2 {
		return iv
	}
	iv.Half *= tQuantile(1-0.025/float64(k), iv.N-1) / tQuantile(0.975, iv.N-1)
	return iv
}

// Excludes0 reports whether the interval lies entirely on one side of 0.
func (iv Interval) Excludes0() bool {
	return !math.IsNaN(iv.Half) && (iv.Mean-iv.Half > 0 || iv.Mean+iv.Half < 0)
}

// tTable holds the 0.975 quantiles of Student's t for 1 to 30 degrees of
// freedom.
var tTable = [...]float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}

// t975 is the 0.975 quantile of Student's t with df degrees of freedom:
// the table up to 30, then the normal quantile plus the first term of its
// Cornish-Fisher expansion (z + (z^3+z)/(4 df)), within 0.002 of the exact
// value for df > 30.
func t975(df int) float64 {
	if df < 1 {
		return math.NaN()
	}
	if df <= len(tTable) {
		return tTable[df-1]
	}
	const z = 1.959964
	return z + (z*z*z+z)/(4*float64(df))
}
