package ppo

import "github.com/kubesim/kubesim/agent"

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
