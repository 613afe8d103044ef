// Package gnn is the policy's graph encoder: it embeds each node's features
// and the pending pod's features, then runs L rounds of message passing in
// which every node combines its own state, the mean of its failure-domain
// neighbours, the mean over all valid nodes of its cluster and the pod
// embedding:
//
//	h0[i]   = relu([x[i], 1] E)
//	p       = relu([pod, 1] P)
//	a       = h[l] [S_l | M_l]                  (one matmul over all B*N rows)
//	c       = [mean_valid(h[l]), p, 1] C_l       (one row per cluster)
//	h[l+1][i] = relu(a[i, :H] + mean_{j in dom(i)} a[j, H:] + c)
//
// The neighbour and global means are linear, so the neighbour weights are
// applied before the mean (a[., H:]) and the global weights after it, on one
// row per cluster. No parameter depends on the node count N. Padding rows
// (invalid nodes) have zero weight in every mean, so they never change a
// valid node's state.
//
// The encoder builds the same computation twice: as a gorgonia graph (Build,
// for training) and as a host forward pass over the same weight tensors
// (Forward, for acting), which tests hold equal.
package gnn
