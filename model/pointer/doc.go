// Package pointer is the policy's decoder: an attention pointer over the
// nodes of each cluster plus a learned Pending token, and the value head.
//
//	ctx      = [mean_valid(h), p, 1]              (B, 2H+1)
//	q        = ctx Q                              (B, H)
//	score[i] = q . (K h[i])  for node i;  score[N] = q . k_pending
//	logit    = C tanh(score / sqrt(H))            (C = LogitClip, 10; Pending: PendingClip)
//	logp     = log_softmax(logit + mask)          (mask: 0 allowed, -1e9 not)
//	value    = [relu(ctx V1), 1] V2
//
// q . (K h[i]) is computed as (q K) . h[i], so the keys are never formed:
// one H x H product per cluster instead of one per node. Action N (the last)
// is Pending. Masked actions get probability exactly 0 (exp(-1e9) underflows),
// so they add nothing to the entropy and get no gradient.
//
// Like the encoder, the decoder exists as a gorgonia graph (Build) and as a
// host forward pass (Forward) over the same weights.
package pointer
