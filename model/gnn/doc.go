// Package gnn is the policy's graph encoder: it embeds each node's features
// and the pending pod's features, then runs L rounds of message passing in
// which every node combines its own state, the mean of its failure-domain
// neighbours, the mean over all valid nodes of its cluster and the pod
// embedding:
//
//	h0[i]     = relu([x[i], 1] E)
//	p         = relu([pod, 1] P)
//	m[d]      = mean of h[l][j] over the nodes j of failure domain d
//	c         = [mean_valid(h[l]), p, 1] C_l
//	h[l+1][i] = relu(h[l][i] S_l + m[dom(i)] M_l + c)
//
// The neighbour and global means are linear, so their weights multiply one
// row per failure domain and one per cluster, after the means: only S_l
// multiplies every node. No parameter depends on the node count N. Padding rows
// (invalid nodes) have zero weight in every mean, so they never change a
// valid node's state.
//
// The encoder builds the same computation twice: as a gorgonia graph (Build,
// for training) and as a host forward pass over the same weight tensors
// (Forward, for acting), which tests hold equal.
package gnn
