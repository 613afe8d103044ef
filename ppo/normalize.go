package ppo

import "math"

// runningStat is a running mean and variance over batches of values
// (Chan et al.'s parallel update, as SB3's RunningMeanStd), started with a
// tiny pseudo-count like SB3 (epsilon 1e-4).
type runningStat struct {
	mean, variance, count float64
}

func newRunningStat() runningStat { return runningStat{variance: 1, count: 1e-4} }

// update folds a batch of values into the statistic.
func (s *runningStat) update(x []float64) {
	if len(x) == 0 {
		return
	}
	var sum float64
	for _, v := range x {
		sum += v
	}
	n := float64(len(x))
	bm := sum / n
	var sq float64
	for _, v := range x {
		sq += (v - bm) * (v - bm)
	}
	bv := sq / n
	delta := bm - s.mean
	tot := s.count + n
	s.mean += delta * n / tot
	m2 := s.variance*s.count + bv*n + delta*delta*s.count*n/tot
	s.variance = m2 / tot
	s.count = tot
}

// rewardScaler divides rewards by the running standard deviation of the
// discounted return, then clips them, like SB3's VecNormalize(norm_obs=False)
// and Gymnasium's NormalizeReward. Without it, the per-step balance reward
// (about 1) makes returns of about 1/(1-gamma) = 100: the value loss then
// dominates the gradient, the global-norm clip shrinks the policy gradient by
// orders of magnitude, and the policy barely moves (approx_kl ~ 1e-8).
type rewardScaler struct {
	ret   []float64 // discounted return of each environment's episode so far
	stat  runningStat
	gamma float64
	clip  float64
}

func newRewardScaler(envs int, gamma, clip float64) *rewardScaler {
	return &rewardScaler{ret: make([]float64, envs), stat: newRunningStat(), gamma: gamma, clip: clip}
}

// scale updates the return statistic with one step of every environment and
// writes the scaled rewards into dst. done[e] ends environment e's episode.
func (r *rewardScaler) scale(rewards []float64, done []bool, dst []float64) {
	for e, x := range rewards {
		r.ret[e] = r.ret[e]*r.gamma + x
	}
	r.stat.update(r.ret)
	std := math.Sqrt(r.stat.variance + 1e-8)
	for e, x := range rewards {
		dst[e] = max(-r.clip, min(r.clip, x/std))
		if done[e] {
			r.ret[e] = 0
		}
	}
}
