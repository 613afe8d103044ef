// Package sched holds kubesim's heuristic schedulers: kube-scheduler's
// default profile (kube-default) and its bin-packing variant
// (most-allocated), best-fit, Tetris, first-fit and random. Every learned
// policy is compared with them.
//
// Schedulers are built from a small framework shaped like kube-scheduler's:
// filter plugins (FilterPlugin) remove nodes a pod cannot run on, score
// plugins (ScorePlugin) rank the rest, a Profile lists the filters, the
// weighted scores and how to pick, and a Framework runs a profile as a
// sim.Scheduler. New builds a scheduler by name (Names lists them); there is
// no registration by init.
//
// Units are sim's: CPU in millicores, memory in MiB. Scores are integers;
// kube-scheduler's plugins score in [MinNodeScore, MaxNodeScore] with
// upstream's integer arithmetic (BalancedAllocation uses upstream's float64
// expression, truncated).
//
// Invariants:
//   - every scheduler uses the same filters (DefaultFilters), which call
//     sim's canonical predicates, so a scheduler never returns a node where
//     sim.Feasible is false, and returns sim.PendingDecision exactly when no
//     node is feasible;
//   - every random choice (tie-breaks, the random scheduler) draws from a
//     math/rand/v2 source seeded by the caller: the same seed, cluster and
//     pod sequence give the same decisions;
//   - a decision allocates nothing once a scheduler's buffers have grown to
//     the cluster size.
//
// A scheduler instance keeps state between decisions (buffers, its random
// source, kube-default's rotating start index) and is not safe for
// concurrent use: each engine needs its own instance.
//
// docs/sched.md lists the formulas, the weights and where kubesim departs
// from kube-scheduler v1.35.
//
// GPU workloads have their own registry (NewGPU, GPUNames): the six
// policies of FGD's paper (random, dot-product, gpu-clustering,
// gpu-packing, best-fit, fgd) and kube-default, as sim.GPUScheduler values
// scored as the paper's artifact scores them, ties going to the node of
// lowest rank (docs/gpu.md).
package sched
