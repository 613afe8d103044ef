package ppo

import (
	"cmp"
	"context"
	"log/slog"
	"path/filepath"

	"github.com/kubesim/kubesim/agent"
)

// record logs the evaluation under SB3's eval/ prefix.
func recordEval(l *Logger, r agent.EvalResult) { recordEvalAs(l, "eval/", r) }

// recordPrior logs the prior heuristic's evaluation on the same validation
// episodes under eval/prior_: the figure the policy starts from (with a
// zero-initialised correction, exactly) and has to beat.
func recordPrior(l *Logger, r agent.EvalResult) { recordEvalAs(l, "eval/prior_", r) }

func recordEvalAs(l *Logger, prefix string, r agent.EvalResult) {
	l.Record(prefix+"mean_reward", r.MeanReward)
	l.Record(prefix+"mean_ep_length", r.MeanLength)
	l.Record(prefix+"unschedulable", r.Unschedulable)
	l.Record(prefix+"stranded", r.Stranded)
	l.Record(prefix+"fragmentation", r.Fragmentation)
	l.Record(prefix+"node_cpu_std", r.NodeCPUStd)
	l.Record(prefix+"sla_per_1k", r.SLAPer1k)
	l.Record(prefix+"pending_p95_ms", r.PendingP95Ms)
}

// evaluate runs the greedy policy on the validation episodes, logs it (and,
// once, the prior heuristic on the same episodes) and saves best.ckpt when
// the selection score improves on the best so far. An interruption (ctx
// done) skips it without error: the caller stops at its next check.
func (t *Trainer) evaluate(ctx context.Context, logger *Logger) error {
	cfg := t.cfg
	ev, err := agent.Evaluate(ctx, t.pol, t.envCfg, t.val, cfg.EvalEpisodes, agent.EvalSeed)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	if t.envCfg.Prior.Heuristic != "" && t.priorEval == nil {
		// the prior heuristic acting greedily, on the same episodes, once
		pe, err := agent.EvaluateActor(ctx, t.envCfg, t.val, cfg.EvalEpisodes, agent.EvalSeed, TeacherAction)
		if err != nil && ctx.Err() == nil {
			return err
		}
		if err == nil {
			t.priorEval = &pe
		}
	}
	recordEval(logger, ev)
	if t.priorEval != nil {
		recordPrior(logger, *t.priorEval)
	}
	if sc := cfg.selectScore(ev); sc > t.best {
		t.best = sc
		if err := t.save(filepath.Join(t.opts.Out, BestCheckpoint)); err != nil {
			return err
		}
		slog.Info("new best policy", "step", t.steps, "eval_reward", ev.MeanReward, "eval_unschedulable", ev.Unschedulable, "select", cmp.Or(cfg.Select, SelectReward))
	}
	return nil
}
