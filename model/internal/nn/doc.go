// Package nn holds the pieces that the encoder (model/gnn), the decoder
// (model/pointer) and the policy (model) share: named parameters with
// orthogonal initialisation, the per-batch [Layout] that says which rows of a
// padded node matrix belong to which sample and failure domain, the gorgonia
// ops that pool, spread and aggregate rows over that layout, and host
// (non-graph) kernels over the same row-major slices.
//
// All matrices are row-major host slices. A padded batch has B samples of N
// rows each (R = B*N rows); padding rows carry zero pooling weight and belong
// to no failure domain, so they never reach a valid row's output or gradient.
package nn
