package ppo

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kubesim/kubesim/agent"
	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/model"
)

// CloneFile is the run folder's behaviour-cloning log: one row per epoch
// with the training loss and agreement and the held-out agreement, after a
// row for epoch 0 with the untrained policy's held-out agreement.
const CloneFile = "bc.csv"

// TeacherAction is the action of the prior's heuristic in o: the allowed
// action (Mask) of highest Obs.Prior, the lowest index on ties, Pending (o.N)
// when it is the best. It is an error when o has no prior.
func TeacherAction(o *env.Obs) (int, error) {
	if len(o.Prior) != o.N+1 || len(o.Mask) != o.N+1 {
		return 0, fmt.Errorf("teacher: an observation of %d nodes with %d prior and %d mask entries: the environment has no prior heuristic configured",
			o.N, len(o.Prior), len(o.Mask))
	}
	best := o.N
	for i, ok := range o.Mask {
		if ok && o.Prior[i] > o.Prior[best] {
			best = i
		}
	}
	for i, ok := range o.Mask[:best] {
		if ok && o.Prior[i] == o.Prior[best] {
			return i, nil
		}
	}
	return best, nil
}

// cloneSummary is what the behaviour-cloning phase did.
type cloneSummary struct {
	decisions, heldOut int
	loss, trainAgree   float64 // last epoch's means over its minibatches
	heldAgree          float64 // last epoch's agreement on the held-out decisions
	teacherReturn      float64 // mean return of the teacher's finished episodes (NaN: none)
	episodes           int
}

// clone runs the behaviour-cloning phase of a fresh run (Config.BCSteps):
// it steps vec from cur with the teacher acting until BCSteps decisions
// (rounded up to whole steps of every environment) are collected, holds
// out a random BCHoldout share, trains the policy on the rest and logs
// agreement on the held-out ones. It returns the observations PPO
// continues from. When ctx is done it stops early without an error; the
// PPO loop then reports the interruption.
func (t *Trainer) clone(ctx context.Context, vec Vec, cur *env.Batch, logger *Logger) (*env.Batch, error) {
	cfg := &t.cfg
	k := len(cur.Obs)
	var (
		obs     store
		teacher []int // environment actions
		acts    = make([]int, k)
		sum     = cloneSummary{}
		ret     float64
	)
	for obs.len() < cfg.BCSteps {
		if ctx.Err() != nil {
			return cur, nil
		}
		for e := range k {
			a, err := TeacherAction(&cur.Obs[e])
			if err != nil {
				return nil, fmt.Errorf("%w: ppo.bc_steps: %w", ErrConfig, err)
			}
			obs.add(&cur.Obs[e])
			teacher = append(teacher, a)
			acts[e] = a
		}
		nxt, err := vec.Step(acts)
		if err != nil {
			return nil, fmt.Errorf("behaviour cloning: stepping environments: %w", err)
		}
		for e := range k {
			if ep := nxt.Info[e].Episode; ep != nil {
				ret += ep.Return
				sum.episodes++
			}
		}
		cur = nxt
	}
	sum.decisions = obs.len()
	sum.teacherReturn = ret / float64(sum.episodes) // NaN without an episode

	perm := t.rng.Perm(sum.decisions)
	sum.heldOut = bcHeldOut(sum.decisions, cfg.BCHoldout)
	held, train := perm[:sum.heldOut], perm[sum.heldOut:]
	mb := min(cfg.BatchSize, len(train))
	var (
		batch model.Batch
		act   model.ActResult
		views = make([]env.Obs, mb)
		mbT   = make([]int, mb)
		cc    = model.CloneConfig{LearningRate: cfg.BCLearningRate, MaxGradNorm: cfg.MaxGradNorm}
		rows  strings.Builder
	)
	rows.WriteString("epoch,loss,train_agreement,heldout_agreement\n")
	// agreement is the share of decisions ids where the greedy policy picks
	// the teacher's action.
	agreement := func(ids []int) (float64, error) {
		agree := 0
		for lo := 0; lo < len(ids); lo += mb {
			part := ids[lo:min(lo+mb, len(ids))]
			for j, i := range part {
				views[j] = obs.obs(i)
			}
			agent.Fill(&batch, views[:len(part)])
			if err := t.pol.Act(&batch, true, nil, &act); err != nil {
				return 0, err
			}
			for j, i := range part {
				if act.Actions[j] == agent.ToModel(teacher[i], obs.n[i], batch.N) {
					agree++
				}
			}
		}
		return float64(agree) / float64(len(ids)), nil
	}
	// Epoch 0: the untrained policy's agreement, the baseline.
	before, err := agreement(held)
	if err != nil {
		return nil, fmt.Errorf("behaviour cloning, held-out agreement: %w", err)
	}
	fmt.Fprintf(&rows, "0,,,%s\n", fmtFloat(before))
	for epoch := 1; epoch <= cfg.BCEpochs; epoch++ {
		t.rng.Shuffle(len(train), func(a, b int) { train[a], train[b] = train[b], train[a] })
		var loss, agree float64
		n := len(train) / mb // whole minibatches: a few graph shapes; the rest rotates with the shuffle
		for m := range n {
			if ctx.Err() != nil {
				return cur, nil
			}
			ids := train[m*mb : (m+1)*mb]
			for j, i := range ids {
				views[j] = obs.obs(i)
			}
			agent.Fill(&batch, views)
			for j, i := range ids {
				mbT[j] = agent.ToModel(teacher[i], obs.n[i], batch.N)
			}
			st, err := t.pol.CloneStep(&batch, mbT, cc)
			if err != nil {
				return nil, fmt.Errorf("behaviour cloning, epoch %d: %w", epoch, err)
			}
			loss += st.Loss
			agree += st.Agreement
		}
		sum.loss, sum.trainAgree = loss/float64(n), agree/float64(n)
		if sum.heldAgree, err = agreement(held); err != nil {
			return nil, fmt.Errorf("behaviour cloning, held-out agreement: %w", err)
		}
		slog.Info("behaviour cloning", "epoch", epoch, "loss", sum.loss, "train_agreement", sum.trainAgree, "heldout_agreement", sum.heldAgree)
		fmt.Fprintf(&rows, "%d,%s,%s,%s\n", epoch, fmtFloat(sum.loss), fmtFloat(sum.trainAgree), fmtFloat(sum.heldAgree))
	}
	if err := writeFileAtomic(filepath.Join(t.opts.Out, CloneFile), []byte(rows.String())); err != nil {
		return nil, fmt.Errorf("writing %s: %w", CloneFile, err)
	}
	// The summary lands in the first update's progress row.
	logger.Record("bc/decisions", float64(sum.decisions))
	logger.Record("bc/heldout_decisions", float64(sum.heldOut))
	logger.Record("bc/loss", sum.loss)
	logger.Record("bc/train_agreement", sum.trainAgree)
	logger.Record("bc/heldout_agreement", sum.heldAgree)
	logger.Record("bc/heldout_agreement_untrained", before)
	if sum.episodes > 0 {
		logger.Record("bc/teacher_ep_rew_mean", sum.teacherReturn)
	}
	return cur, nil
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
