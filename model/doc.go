// Package model is kubesim's actor-critic scheduling policy: a graph neural
// network over a cluster's nodes (model/gnn), an attention pointer decoder
// that picks a node or the Pending token, and a value head (model/pointer).
// One set of weights serves clusters of any size.
//
// The policy works on its own [Batch] type, not on simulator types: B
// cluster states padded to a common node count N, with per-node validity,
// failure-domain ids and an action mask (index N = Pending, always allowed).
// Actions are in [0, N]. Padding never changes a valid output, and
// permuting nodes permutes their log-probabilities (both tested).
//
// With Config.Prior the policy adds Batch.Prior, a heuristic's additive
// log-prior per action, to its logits (logit = prior + C*tanh(score)), so
// it learns a bounded correction to the heuristic; Config.ZeroInit starts
// that correction at zero, the policy then being softmax(prior). With
// Config.Gate = K the batch carries K heuristics' priors per sample and a
// learned gate, a softmax over K of the context [graph, pod, 1], weighs
// them: logit = sum_k w_k prior_k + C*tanh(score). The gate starts at
// zero (equal weights) and is trained with the rest; its gradient is
// checked against finite differences like every other weight.
//
// Acting ([Policy.Act], [Policy.Forward]) runs a host forward pass; training
// ([Policy.TrainStep], and [Policy.CloneStep] for behaviour cloning of a
// teacher's actions) runs gorgonia graphs, built once per shape (B, N and
// a power-of-two number of failure-domain rows) and cached (at most
// Config.MaxGraphs), whose gradients come from gorgonia's reverse-mode
// differentiation. Both read the same weight tensors, and a
// test holds their outputs equal. The default element type is float32;
// Config.Float64 selects float64 (gradient checks).
//
// Checkpoints ([Policy.Save], [Load], [Policy.Restore]) are versioned,
// checksummed files holding the architecture, the weights, Adam's state
// (exact resume) and caller metadata.
//
// Build with -tags openblas (Debian: libopenblas-dev) for OpenBLAS through
// cgo; the default build is pure Go (gonum) and several times slower at the
// benchmark sizes. See docs/model.md for shapes, figures and pitfalls.
package model
