package agent

import (
	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/model"
)

// PaddedN is the node count a batch whose largest observation has n nodes
// is padded to: n rounded up to a multiple of 4 (of 16 above 64, of 64 above
// 256). Training graphs are built per (batch size, padded N), so rounding
// keeps the number of shapes (and graph rebuilds) small while wasting little
// work on padding rows.
func PaddedN(n int) int {
	step := 4
	switch {
	case n > 256:
		step = 64
	case n > 64:
		step = 16
	}
	return max(step, (n+step-1)/step*step)
}

// Fill packs observations into b, padded to PaddedN of the largest N with
// invalid nodes (masked, no neighbours). Pending, the last action of each
// observation, moves to index b.N. When any observation has a prior, b.Prior
// holds them all, laid out like the mask (padding entries and observations
// without a prior 0), K blocks per sample when the observations carry K
// priors for a gate (env.Prior.Heuristics); otherwise b.Prior is empty. b's slices are reused when
// large enough.
func Fill(b *model.Batch, obs []env.Obs) {
	fill(b, obs, env.NodeFeatures, env.PodFeatures)
}

// FillGPU is Fill for observations of a GPUEnv (env.GPUPodFeatures pod
// features; node rows of the environment's width, env.GPUConfig.NodeFeatures,
// read off the observations: all of them must share it).
func FillGPU(b *model.Batch, obs []env.Obs) {
	d := env.GPUNodeFeatures
	for i := range obs {
		if obs[i].N > 0 {
			d = len(obs[i].Nodes) / obs[i].N
			break
		}
	}
	fill(b, obs, d, env.GPUPodFeatures)
}

// fill is Fill for observations of d node and p pod features.
func fill(b *model.Batch, obs []env.Obs, d, p int) {
	maxN, prior := 1, false
	for i := range obs {
		maxN = max(maxN, obs[i].N)
		prior = prior || obs[i].Prior != nil
	}
	n := PaddedN(maxN)
	b.B, b.N = len(obs), n
	b.Nodes = grow(b.Nodes, b.B*n*d)
	b.NodeValid = grow(b.NodeValid, b.B*n)
	b.Pod = grow(b.Pod, b.B*p)
	b.Mask = grow(b.Mask, b.B*(n+1))
	b.Domain = grow(b.Domain, b.B*n)
	for s := range obs {
		o := &obs[s]
		copy(b.Pod[s*p:], o.Pod)
		rows := b.Nodes[s*n*d : (s+1)*n*d]
		copy(rows, o.Nodes)
		clear(rows[o.N*d:])
		valid := b.NodeValid[s*n : (s+1)*n]
		dom := b.Domain[s*n : (s+1)*n]
		mask := b.Mask[s*(n+1) : (s+1)*(n+1)]
		copy(dom, o.Domain)
		copy(mask, o.Mask[:o.N])
		for i := range n {
			valid[i] = i < o.N
			if i >= o.N {
				dom[i] = -1
				mask[i] = false
			}
		}
		mask[n] = true
	}
	b.Prior = b.Prior[:0]
	if prior {
		k := 1
		for i := range obs {
			if obs[i].Prior != nil {
				k = max(k, len(obs[i].Prior)/(obs[i].N+1))
			}
		}
		b.Prior = grow(b.Prior, b.B*k*(n+1))
		for s := range obs {
			o := &obs[s]
			for j := range k {
				row := b.Prior[(s*k+j)*(n+1) : (s*k+j+1)*(n+1)]
				clear(row)
				if src := o.Prior; len(src) >= (j+1)*(o.N+1) {
					src = src[j*(o.N+1) : (j+1)*(o.N+1)]
					copy(row, src[:o.N])
					row[n] = src[o.N]
				}
			}
		}
	}
}

// ToModel maps an environment action of an observation with n nodes to the
// batch's action space of padded size pn (Pending n -> pn).
func ToModel(a, n, pn int) int {
	if a == n {
		return pn
	}
	return a
}

// ToEnv maps a batch action back: pn (Pending) -> n.
func ToEnv(a, n, pn int) int {
	if a == pn {
		return n
	}
	return a
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
