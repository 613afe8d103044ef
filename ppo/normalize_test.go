package ppo

import (
	"math"
	"testing"
)

// TestRunningStat: batches folded in one by one give the mean and
// population variance of all the values (up to the 1e-4 pseudo-count).
func TestRunningStat(t *testing.T) {
	s := newRunningStat()
	s.update([]float64{1, 2, 3})
	s.update([]float64{4, 5})
	s.update([]float64{6, 7, 8, 9, 10})
	// 1..10: mean 5.5, population variance 8.25.
	if math.Abs(s.mean-5.5) > 1e-3 || math.Abs(s.variance-8.25) > 1e-3 {
		t.Errorf("mean %v variance %v; want 5.5 and 8.25", s.mean, s.variance)
	}
}

// TestRewardScaler: a constant reward of 1 with gamma 0.5 gives returns 1,
// 1.5, 1.75, ...; each step scales the reward by the running std of those
// returns, and an episode end restarts the return.
func TestRewardScaler(t *testing.T) {
	r := newRewardScaler(1, 0.5, 10)
	dst := make([]float64, 1)
	r.scale([]float64{1}, []bool{false}, dst)
	// After the first return (1) the statistic is the pseudo-count prior
	// (mean 0, var 1, count 1e-4) merged with one value: mean ~1, var ~1e-4.
	want := 1 / math.Sqrt(r.stat.variance+1e-8)
	if math.Abs(dst[0]-min(10, want)) > 1e-12 {
		t.Errorf("first scaled reward %v; want %v", dst[0], min(10, want))
	}
	if dst[0] != 10 {
		t.Errorf("first scaled reward %v; want it clipped to 10", dst[0])
	}
	r.scale([]float64{1}, []bool{true}, dst)
	if r.ret[0] != 0 {
		t.Errorf("return after an episode end %v; want 0", r.ret[0])
	}
	// A long run of returns 1, 1.5, 1.75, ... converging to 2: the scaled
	// reward approaches 1/std of those returns, finite and positive.
	for range 200 {
		r.scale([]float64{1}, []bool{false}, dst)
	}
	if !(dst[0] > 0 && dst[0] <= 10) {
		t.Errorf("scaled reward %v out of (0, 10]", dst[0])
	}
}
