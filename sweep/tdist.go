package sweep

import "math"

// Student's t at other levels than the tables' 95%, for intervals that
// cover a family of comparisons at once (Interval.Widen).

// tQuantile returns the p quantile of Student's t with df degrees of
// freedom, for p in (0.5, 1), by bisection on tCDF; NaN outside.
func tQuantile(p float64, df int) float64 {
	if df < 1 || !(p > 0.5 && p < 1) {
		return math.NaN()
	}
	lo, hi := 0.0, 1.0
	for tCDF(hi, df) < p {
		hi *= 2
		if hi > 1e12 {
			return math.Inf(1)
		}
	}
	for range 200 {
		mid := (lo + hi) / 2
		if tCDF(mid, df) < p {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo < 1e-12*hi {
			break
		}
	}
	return (lo + hi) / 2
}

// tCDF is Student's t distribution function for t >= 0:
// 1 - I_x(df/2, 1/2)/2 with x = df/(df + t^2).
func tCDF(t float64, df int) float64 {
	v := float64(df)
	return 1 - 0.5*regIncBeta(v/(v+t*t), v/2, 0.5)
}

// regIncBeta is the regularised incomplete beta function I_x(a, b) for
// x in [0, 1] and a, b > 0, from its continued fraction (evaluated by the
// modified Lentz method), on the side of x where it converges fast.
func regIncBeta(x, a, b float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log1p(-x))
	if x > (a+1)/(a+b+2) {
		return 1 - front*betaFraction(1-x, b, a)/b
	}
	return front * betaFraction(x, a, b) / a
}

// betaFraction evaluates the continued fraction of I_x(a, b):
// 1/(1+ d1/(1+ d2/(1+ ...))) with d_{2m+1} = -(a+m)(a+b+m)x/((a+2m)(a+2m+1))
// and d_{2m} = m(b-m)x/((a+2m-1)(a+2m)).
func betaFraction(x, a, b float64) float64 {
	const tiny, eps = 1e-300, 1e-15
	guard := func(v float64) float64 {
		if math.Abs(v) < tiny {
			return tiny
		}
		return v
	}
	c, d := 1.0, 1/guard(1-(a+b)*x/(a+1))
	h := d
	for m := 1; m <= 500; m++ {
		fm := float64(m)
		even := fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm))
		d = 1 / guard(1+even*d)
		c = guard(1 + even/c)
		h *= d * c
		odd := -(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1))
		d = 1 / guard(1+odd*d)
		c = guard(1 + odd/c)
		step := d * c
		h *= step
		if math.Abs(step-1) < eps {
			break
		}
	}
	return h
}
