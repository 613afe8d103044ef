package ppo

import "math"

// Rollout layout: every per-step slice of a rollout is time-major, index
// t*envs + e for step t of environment e.

// GAE computes generalised advantage estimates (Schulman et al. 2016) and
// returns (advantage plus value) for a rollout of steps x envs transitions,
// writing them into adv and ret.
//
// An episode that ended at step t by termination bootstraps nothing; one
// that was truncated (time limit) bootstraps from boot[t], the value of its
// final observation, as Stable-Baselines3 does. The last step of the rollout
// bootstraps from last[e], the value of the observation that follows it.
// Advantages never carry across an episode boundary:
//
//	next_t  = 0 if terminated_t; boot_t if truncated_t; values_{t+1} (or last) otherwise
//	delta_t = r_t + gamma * next_t - values_t
//	A_t     = delta_t + gamma * lambda * A_{t+1} * (0 if the episode ended at t, else 1)
func GAE(steps, envs int, rewards, values []float64, terminated, truncated []bool, boot, last []float64,
	gamma, lambda float64, adv, ret []float64) {
	for e := range envs {
		var carry float64
		for t := steps - 1; t >= 0; t-- {
			i := t*envs + e
			var next float64
			switch {
			case terminated[i]:
				next = 0
			case truncated[i]:
				next = boot[i]
			case t == steps-1:
				next = last[e]
			default:
				next = values[i+envs]
			}
			if terminated[i] || truncated[i] {
				carry = 0
			}
			delta := rewards[i] + gamma*next - values[i]
			carry = delta + gamma*lambda*carry
			adv[i] = carry
			ret[i] = carry + values[i]
		}
	}
}

// ExplainedVariance is 1 - Var(y - pred) / Var(y): 1 for a perfect value
// function, 0 for a constant one, negative when worse than constant. It is
// NaN when y has no variance, as in Stable-Baselines3.
func ExplainedVariance(pred, y []float64) float64 {
	vy := variance(y, nil)
	if vy == 0 {
		return math.NaN()
	}
	return 1 - variance(y, pred)/vy
}

// variance returns the population variance of a - b (b may be nil).
func variance(a, b []float64) float64 {
	if len(a) == 0 {
		return 0
	}
	var sum, sq float64
	for i, v := range a {
		if b != nil {
			v -= b[i]
		}
		sum += v
		sq += v * v
	}
	n := float64(len(a))
	m := sum / n
	return max(0, sq/n-m*m)
}

// Normalize rescales x in place to mean 0 and (unbiased) standard deviation
// 1, with 1e-8 added to the deviation, as CleanRL and SB3 do for each
// minibatch's advantages. A single element becomes 0.
func Normalize(x []float64) {
	n := float64(len(x))
	if n == 0 {
		return
	}
	var sum float64
	for _, v := range x {
		sum += v
	}
	m := sum / n
	var sq float64
	for _, v := range x {
		sq += (v - m) * (v - m)
	}
	std := 0.0
	if n > 1 {
		std = math.Sqrt(sq / (n - 1))
	}
	for i := range x {
		x[i] = (x[i] - m) / (std + 1e-8)
	}
}
