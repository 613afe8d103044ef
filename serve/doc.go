// Package serve is the learned policy behind kube-scheduler's extender
// protocol (k8s.io/kube-scheduler/extender/v1), guarded by kube-default's
// filters and scores from package sched.
//
// A Server answers POST /filter and POST /prioritize with the upstream types
// (ExtenderArgs in; ExtenderFilterResult and HostPriorityList out), GET
// /healthz and GET /metrics (Prometheus text). For each request it turns the
// pod and the nodes into a sim.Cluster view (convert.go says which fields it
// reads and which it assumes), asks the policy for the probability of every
// node and of Pending, and answers with scores in 0..MaxExtenderPriority.
//
// Guardrail: the answer falls back to kube-default's exact scores
// (sched.Framework.Scores over the same view) when the policy's most
// probable node fails the hard filters (fit, taints, node affinity), when the
// policy errors or panics, or when it does not answer within the latency
// budget; each fallback is counted by reason. In shadow mode the answer is
// always kube-default's, and the policy's choice is only logged and counted
// (agreement with kube-default's best node).
//
// Units are sim's: CPU in millicores, memory in MiB. Policies are not safe
// for concurrent use: a Server keeps a pool of instances, one per worker,
// and each request borrows one.
package serve
