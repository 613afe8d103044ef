package ppo

import (
	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/model"
)

// window is a running mean over the last n values (SB3's ep_info_buffer).
type window struct {
	v    []float64
	next int
	n    int
}

func newWindow(n int) *window { return &window{v: make([]float64, n)} }

func (w *window) add(x float64) {
	w.v[w.next] = x
	w.next = (w.next + 1) % len(w.v)
	w.n = min(w.n+1, len(w.v))
}

func (w *window) mean() float64 {
	var s float64
	for _, x := range w.v[:w.n] {
		s += x
	}
	return s / float64(w.n)
}

// rewardTerms sums each reward term over a rollout.
type rewardTerms struct {
	balance, fragment, violation, failure, pending float64
	wait, unplaced                                 float64
	pairedWait, pairedUnplaced                     float64 // reward.paired's baseline terms
}

func (r *rewardTerms) add(in *env.Info) {
	r.balance += in.Balance
	r.fragment += in.Fragment
	r.violation += in.Violation
	r.failure += in.Failure
	r.pending += in.Pending
	r.wait += in.Wait
	r.unplaced += in.Unplaced
	r.pairedWait += in.PairedWait
	r.pairedUnplaced += in.PairedUnplaced
}

func (r *rewardTerms) record(l *Logger, n int) {
	k := float64(n)
	l.Record("reward/balance_mean", r.balance/k)
	l.Record("reward/fragment_mean", r.fragment/k)
	l.Record("reward/violation_mean", r.violation/k)
	l.Record("reward/failure_mean", r.failure/k)
	l.Record("reward/pending_mean", r.pending/k)
	l.Record("reward/wait_mean", r.wait/k)
	l.Record("reward/unplaced_mean", r.unplaced/k)
	l.Record("reward/paired_wait_mean", r.pairedWait/k)
	l.Record("reward/paired_unplaced_mean", r.pairedUnplaced/k)
}

// trainStats averages TrainStats over an update's minibatches, as SB3 logs
// them.
type trainStats struct {
	n                                         int
	loss, pg, value, entropy, kl, clip, gnorm float64
}

func (s *trainStats) add(x model.TrainStats) {
	s.n++
	s.loss += x.Loss
	s.pg += x.PolicyLoss
	s.value += x.ValueLoss
	s.entropy += x.Entropy
	s.kl += x.ApproxKL
	s.clip += x.ClipFraction
	s.gnorm += x.GradNorm
}

func (s *trainStats) record(l *Logger) {
	if s.n == 0 {
		return
	}
	k := float64(s.n)
	l.Record("train/loss", s.loss/k)
	l.Record("train/policy_gradient_loss", s.pg/k)
	l.Record("train/value_loss", s.value/k)
	l.Record("train/entropy_loss", -s.entropy/k) // SB3 logs the negated entropy
	l.Record("train/approx_kl", s.kl/k)
	l.Record("train/clip_fraction", s.clip/k)
	l.Record("train/grad_norm", s.gnorm/k)
	l.Record("train/minibatches", k)
}
