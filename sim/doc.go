// Package sim is kubesim's discrete-event Kubernetes cluster simulator.
//
// Units: CPU in millicores, memory in MiB, simulated time in integer
// milliseconds (type Time). There is no wall clock anywhere in the package.
//
// A run replays a Workload (pods with arrival times, machine add/remove
// events, initial nodes, and optionally the pods already running on them:
// Workload.Initial, the warm start) on an Engine. Config.WarmUp leaves a
// first stretch of simulated time out of every metric instead. The engine keeps one event queue, a
// min-heap ordered by (time, sequence number), so ties are resolved in the
// order events were scheduled and every run is deterministic: the same
// workload, Config and seed give identical results, bit for bit.
//
// Placement policies implement Scheduler: they read the cluster view and one
// pod and return a node index or Pending. The engine alone mutates state.
// The step-wise API (Engine.Next, Engine.Decide) is what an RL environment
// drives; Run is a loop over the same two calls, so a heuristic replay and an
// RL episode go through one code path.
//
// Invariants, checked by the tests after every event:
//   - on every node the summed requests of bound pods never exceed allocatable
//     (CPU, memory, pod count);
//   - every pod is in exactly one state (not arrived, pending, bound/running,
//     finished);
//   - resources are conserved: a node's Requested equals the sum of its pods'
//     requests.
//
// Indices: nodes live in a dense slice in order of addition; a removed node
// leaves the slice and the nodes after it shift down. Schedulers return an
// index into Cluster.Nodes as it is at the decision; NodeID is stable for a
// node's life.
//
// GPUs (openb traces, FGD's experiment) are a resource of their own: a
// node's devices and their free milli-GPU (GPUs), a pod's request
// (GPURequest), FGD's fragmentation measure (GPUFrag, defined once) and the
// placement run of the paper's artifact (RunGPU: pods shuffled by the seed,
// inflated by clones, never leaving; curves against the arrived GPU
// demand). The event engine does not carry GPUs, so CPU/memory runs are as
// before (docs/gpu.md).
package sim
