package ppo

import "github.com/kubesim/kubesim/agent"

// record logs the evaluation under SB3's eval/ prefix.
func recordEval(l *Logger, r agent.EvalResult) {
	l.Record("eval/mean_reward", r.MeanReward)
	l.Record("eval/mean_ep_length", r.MeanLength)
	l.Record("eval/unschedulable", r.Unschedulable)
	l.Record("eval/stranded", r.Stranded)
	l.Record("eval/fragmentation", r.Fragmentation)
	l.Record("eval/node_cpu_std", r.NodeCPUStd)
	l.Record("eval/sla_per_1k", r.SLAPer1k)
	l.Record("eval/pending_p95_ms", r.PendingP95Ms)
}
