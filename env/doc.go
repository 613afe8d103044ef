// Package env is kubesim's reinforcement-learning environment: the Gymnasium
// API in Go over the simulator (package sim), one step per scheduling
// decision.
//
//	e, err := env.New(env.DefaultConfig(), nil) // nil: the synthetic source
//	obs, info, err := e.Reset(seed)
//	obs, reward, terminated, truncated, info := e.Step(action)
//
// VecEnv steps K environments in parallel goroutines with automatic resets.
//
// # Episodes
//
// Reset(seed) draws, from one random stream seeded by seed: the initial
// cluster size n uniformly in [Config.MinNodes, Config.MaxNodes], the
// workload (Source.Episode(r, n): a synthetic workload, or a trace window
// once the trace loader provides a Source) and the simulator's seed
// (startup and provisioning noise). The same seed and actions give the same
// episode, bit for bit. An episode terminates when the workload is exhausted
// (sim.Engine.Next returns false, at the window's end) and is truncated
// after Config.MaxSteps decisions. With the autoscaler (on by default) and
// trace machine events, the node count N changes between steps.
//
// # Observation
//
// Obs.Pod has PodFeatures values, Obs.Nodes is an N x NodeFeatures matrix
// (row i is node i of sim.Engine.Cluster().Nodes() at this decision), each
// column listed at its constant:
//
//	Pod*:  CPU, Mem       request / Config.Reference
//	       Priority       0 batch, 1 online
//	       Lifetime       estimated, never the trace's duration: the mean of
//	                      ln(1+l/1s) over the finished pods of the pod's task,
//	                      else group, else run (sim.Cluster.Lifetime), else
//	                      ln(1+300); over ln(1+86400); 1 for long-running pods
//	       LifetimeLevel  1 task (or long-running), 2/3 group, 1/3 run, 0 none
//	       Service        1 for a long-running pod
//	       Attempts       ln(1+decisions so far)/ln(17)
//	       Waited         ln(1+queued seconds)/ln(3601)
//	       Queue          ln(1+pending pods)/ln(1001), this one included
//	       QueueCPU, QueueMem  Q/(Q+F): Q the pending pods' summed requests,
//	                      F the cluster's free allocatable
//	       QueueRank      share of the other pending pods with a smaller
//	                      dominant share (ties 1/2), 1/2 alone
//	       Arrivals       ln(1+r/N)/ln(11), r arrivals per minute decayed
//	                      over 5 minutes (sim.Cluster.ArrivalRate), N nodes
//	Node*: CPUAlloc, MemAlloc     requested / allocatable
//	       CPUUtil, MemUtil       actual use / allocatable (not capped)
//	       CPUAfter, MemAfter     (requested + the pod's request) / allocatable
//	       Pods                   pods bound / pod limit
//	       Taint, SoftTaint       1 when a hard (NoSchedule, NoExecute) or
//	                              soft (PreferNoSchedule) taint is not tolerated
//	       AffinityMiss           1 when required node affinity excludes the node
//	       AffinityPref           matched share of preferred-affinity weight
//	       Fits                   1 when the filters pass (= Mask[i])
//	       CPUSize, MemSize       allocatable / Config.Reference
//
// Obs.Domain gives each node's failure-domain id at the level of
// Config.Domain (zone by default, or rack; -1 without the label), for the
// GNN's neighbourhoods. Obs.Mask has N+1 entries: node i is allowed exactly
// when sim.Feasible passes (kube-scheduler's default filters: resources and
// pod count, taints, required node affinity, the same functions the
// heuristics of package sched use), and Mask[N], the Pending token, always.
//
// Obs.Prior is nil unless Config.Prior names a heuristic (YAML prior:
// {heuristic, scale, pending, normalize}); then it has N+1 entries: for a
// feasible node i, scale*(s_i/max_s - 1) with s_i the heuristic's total
// score (sched.Framework.Scores) and max_s the best over feasible nodes
// (normalize "range": scale*(s_i - max_s)/(max_s - min_s)), 0 for an
// infeasible node, and pending for the Pending token. A policy that adds
// it to zero logits picks, greedily, a node the heuristic scores highest.
//
// The slices of an Obs are the environment's own buffers, reused at every
// step so that stepping does not allocate: an Obs is valid until the next
// Step or Reset of the environment that returned it. Copy it (Clone, CopyTo)
// to keep it.
//
// # Action
//
// An action in [0, N) places the pod on that node, N leaves it pending (the
// simulator retries it after kube-scheduler's backoff). Every other integer,
// and a node that the mask forbids, is a scheduling failure: the pod stays
// pending for its backoff and P_failure is 1. No integer makes Step panic.
//
// # Reward
//
//	r = w1*R_balance + w2*R_fragment - w3*P_violation - w4*P_failure - wp*P_pending
//	    - w5*P_wait - w6*P_unplaced
//
// with the weights of Config.Reward (YAML keys balance, fragment, violation,
// failure, pending, wait, unplaced); Info reports every term unweighted and
// Episode.Return sums the rewards. w5 and w6 are 0 by default, which gives
// the reward of the first five terms bit for bit.
//
//   - R_balance: with s the population standard deviation over nodes of CPU
//     utilisation at the returned observation (actual use capped at
//     allocatable, or requested CPU capped at allocatable with balance_of
//     "requested"), either 1 - s/0.5 ("bounded", in [0, 1], the default) or
//     1/(s + 0.01) ("inverse", the original design, up to 100). The bounded
//     level is nearly constant from step to step (about 0.96 to 1); "delta"
//     is instead the change of the bounded level caused by the decision,
//     (s_before - s_after)/0.5 with s measured just before and just after
//     sim.Engine.Decide at the same simulated time (like R_fragment): in
//     [-1, 1], 0 for a deferral or a failure, and summed over an episode
//     the balance the agent's binds built. It requires balance_of
//     "requested": actual use moves only when a pod starts, in a later
//     event, so no decision changes it at once.
//   - R_fragment: the decrease caused by the decision itself, measured just
//     before and just after sim.Engine.Decide at the same simulated time, of
//     the stranded share S and of the fragmentation ratio F:
//     R_fragment = (1-m)*(S_before - S_after) + m*(F_before - F_after), m =
//     fragment_mix. S is the mean of the stranded shares of free CPU and of
//     free memory, and F = 1 - min(A_cpu, A_mem)/max(A_cpu, A_mem), exactly as
//     sim's metrics define them (DESIGN "Metrics"), with the workload's
//     typical pod (sim.Engine.Typical). Only a bind or a preemption changes
//     them; a deferral or a failure gives 0. F does not depend on the node
//     chosen, only on whether the pod is placed; S does.
//   - P_violation: SLA violations that started (a high-priority pod throttled
//     or evicted) plus evictions (memory pressure, machine removal) plus
//     preemptions, counted from the decision to the returned observation
//     (sim.Counters differences). An evicted high-priority pod counts twice,
//     as a violation and as an eviction; pods drained by autoscaler
//     scale-down do not count.
//   - P_failure: 1 when the action was masked out or out of range.
//   - P_pending: 1 when the action deferred a pod although a node was
//     feasible (sim.OutcomeDeferred); choosing Pending when nothing fits is
//     free, being the only legal action.
//   - P_wait (key wait): the waiting cost, the exact time integral from the
//     decision to the returned observation of the number of pending pods,
//     in pod-minutes, a high-priority pod weighing wait_high (default 1) and
//     a low-priority pod 1. Pending is every pod in the active queue, in
//     backoff or in the unschedulable list, including pods that fit nowhere
//     and the forced Pending decisions the environment takes itself; events
//     that change the count between decisions are integrated exactly
//     (sim.Counters.PendingMs, PendingHighMs). Summed over an episode it is
//     the weighted pending pod-time from the first decision to the end,
//     the quantity behind the pending-latency metrics (time before the first
//     decision, which no action influences, is not counted).
//   - P_unplaced (key unplaced): on the step that terminates an episode
//     (the workload is exhausted), the number of pods still pending, with the
//     same priority weights: the pods the run leaves unscheduled, which
//     sim.Result counts as Unschedulable (pods evicted and not placed again
//     included; warm-up pods included too). 0 on every other step and on
//     truncation, where PPO bootstraps from the value instead.
//   - With reward.paired, both are paired against the prior heuristic's
//     replay of the same workload under the same simulator seed: each step
//     adds back (with w5) the replay's waiting cost over the same simulated
//     interval and, on termination, (with w6) the replay's pods left
//     pending (Info.PairedWait, PairedUnplaced). A policy that decides as
//     the heuristic earns 0 from the two terms; the workload's own
//     difficulty, which no action changes, cancels out of the return.
//
// # Units
//
// Simulated time is sim.Time (milliseconds); resources are millicores and
// MiB; every observation value is a dimensionless ratio or flag.
package env
