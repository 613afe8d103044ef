package dataset

import (
	"math"
	"sort"
)

// knot is one point (x, P(X <= x)) of a target distribution.
type knot struct{ x, p float64 }

// dist is a distribution given by knots: its CDF is linear between knots of
// different x and jumps where two knots share an x (an atom); it is 0 below
// the first knot and 1 from the last. Knots are sorted by x with p
// non-decreasing, and the last p is 1.
type dist []knot

// cdf returns P(X <= x) (right-continuous).
func (d dist) cdf(x float64) float64 {
	// i: the first knot with k.x > x
	i := sort.Search(len(d), func(i int) bool { return d[i].x > x })
	switch {
	case i == 0:
		return 0
	case i == len(d):
		return 1
	}
	a, b := d[i-1], d[i]
	return a.p + (b.p-a.p)*(x-a.x)/(b.x-a.x)
}

// cdfBelow returns P(X < x), the CDF's limit from the left.
func (d dist) cdfBelow(x float64) float64 {
	// i: the first knot with k.x >= x
	i := sort.Search(len(d), func(i int) bool { return d[i].x >= x })
	switch {
	case i == 0:
		return 0
	case i == len(d):
		return 1
	}
	a, b := d[i-1], d[i]
	if b.x == x {
		return b.p
	}
	return a.p + (b.p-a.p)*(x-a.x)/(b.x-a.x)
}

// ksTarget is the Kolmogorov-Smirnov statistic D = sup |F_n(x) - G(x)|
// between the sample xs (sorted) and the target distribution d. For
// integer-valued quantities the target is discretised with a continuity
// correction: P(X <= k) = G(k + 0.5), so that an integer k stands for
// [k - 0.5, k + 0.5). The supremum is taken at each sample value and just
// below the next one, where the gap between the step function F_n and the
// non-decreasing G is largest.
func ksTarget(xs []float64, d dist, integer bool) float64 {
	n := len(xs)
	if n == 0 {
		return math.NaN()
	}
	at := func(x float64) float64 {
		if integer {
			return d.cdf(x + 0.5)
		}
		return d.cdf(x)
	}
	below := func(x float64) float64 {
		if integer {
			return d.cdf(x - 0.5)
		}
		return d.cdfBelow(x)
	}
	ks := below(xs[0])
	for i := 0; i < n; {
		j := i
		for j < n && xs[j] == xs[i] {
			j++
		}
		f := float64(j) / float64(n)
		ks = math.Max(ks, math.Abs(f-at(xs[i])))
		if j < n {
			ks = math.Max(ks, math.Abs(f-below(xs[j])))
		}
		i = j
	}
	return ks
}

// ksSamples is the two-sample Kolmogorov-Smirnov statistic between the
// sorted samples a and b: the largest gap between their empirical CDFs.
func ksSamples(a, b []float64) float64 {
	if len(a) == 0 || len(b) == 0 {
		return math.NaN()
	}
	var i, j int
	ks := 0.0
	for i < len(a) && j < len(b) {
		x := math.Min(a[i], b[j])
		for i < len(a) && a[i] == x {
			i++
		}
		for j < len(b) && b[j] == x {
			j++
		}
		ks = math.Max(ks, math.Abs(float64(i)/float64(len(a))-float64(j)/float64(len(b))))
	}
	return ks
}

// quantile returns the p-quantile of the sorted sample xs as the inverse of
// its empirical CDF: the smallest x with F_n(x) >= p.
func quantile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	k := int(math.Ceil(p*float64(len(xs)))) - 1
	return xs[min(max(k, 0), len(xs)-1)]
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// dispersion returns the index of dispersion (population variance over
// mean) of counts, and their mean.
func dispersion(counts []float64) (index, mu float64) {
	if len(counts) == 0 {
		return math.NaN(), math.NaN()
	}
	mu = mean(counts)
	v := 0.0
	for _, c := range counts {
		v += (c - mu) * (c - mu)
	}
	v /= float64(len(counts))
	if mu == 0 {
		return math.NaN(), 0
	}
	return v / mu, mu
}
