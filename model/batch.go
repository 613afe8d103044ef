package model

import (
	"fmt"
	"math"

	"github.com/kubesim/kubesim/model/internal/nn"
)

// Batch is B cluster states padded to a common node count N. All slices are
// row-major; sample s's node i is row s*N+i.
type Batch struct {
	B, N      int
	Nodes     []float64 // B*N*D node features (padding rows are ignored)
	NodeValid []bool    // B*N: false for padding
	Pod       []float64 // B*P features of the pod to place, one pod per sample
	// Mask is B*(N+1): the allowed actions. Index N of each sample (the
	// last) is Pending and must be true. A padding node is never allowed,
	// whatever its mask entry says.
	Mask []bool
	// Domain is B*N failure-domain ids: nodes of one sample with the same id
	// are neighbours. -1 means no neighbours but the node itself.
	Domain []int32
	// Prior is B*(N+1) additive log-prior terms, Pending last as in Mask,
	// that a policy built with Config.Prior adds to its logits; with
	// Config.Gate = K it is B*K*(N+1), sample s's prior k at
	// (s*K+k)*(N+1), which the policy's gate mixes. Empty (nil
	// or length 0) means all zero; entries of padding nodes and masked actions are ignored. A
	// policy without Config.Prior ignores it.
	Prior []float64
}

// check validates b's sizes and values against d node features, p pod
// features and k priors per sample.
func (b *Batch) check(d, p, k int) error {
	switch {
	case b == nil:
		return fmt.Errorf("batch: nil")
	case b.B < 1 || b.N < 1:
		return fmt.Errorf("batch: B=%d N=%d, want both >= 1", b.B, b.N)
	case len(b.Nodes) != b.B*b.N*d:
		return fmt.Errorf("batch: %d node features, want B*N*D = %d*%d*%d", len(b.Nodes), b.B, b.N, d)
	case len(b.NodeValid) != b.B*b.N:
		return fmt.Errorf("batch: %d node-valid flags, want B*N = %d", len(b.NodeValid), b.B*b.N)
	case len(b.Pod) != b.B*p:
		return fmt.Errorf("batch: %d pod features, want B*P = %d*%d", len(b.Pod), b.B, p)
	case len(b.Mask) != b.B*(b.N+1):
		return fmt.Errorf("batch: %d mask entries, want B*(N+1) = %d", len(b.Mask), b.B*(b.N+1))
	case len(b.Domain) != b.B*b.N:
		return fmt.Errorf("batch: %d domain ids, want B*N = %d", len(b.Domain), b.B*b.N)
	}
	if len(b.Prior) != 0 && len(b.Prior) != b.B*k*(b.N+1) {
		if k > 1 {
			return fmt.Errorf("batch: %d prior entries, want B*K*(N+1) = %d for the gate's %d priors (or none)", len(b.Prior), b.B*k*(b.N+1), k)
		}
		return fmt.Errorf("batch: %d prior entries, want B*(N+1) = %d (or none)", len(b.Prior), b.B*(b.N+1))
	}
	for s := range b.B {
		if !b.Mask[s*(b.N+1)+b.N] {
			return fmt.Errorf("batch: sample %d masks Pending (mask[%d]), which is always allowed", s, s*(b.N+1)+b.N)
		}
	}
	for r, ok := range b.NodeValid {
		if !ok {
			continue
		}
		for j, v := range b.Nodes[r*d : (r+1)*d] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("batch: sample %d node %d feature %d is %v", r/b.N, r%b.N, j, v)
			}
		}
	}
	for i, v := range b.Prior {
		s, a := i/(k*(b.N+1)), i%(b.N+1)
		if !b.Mask[s*(b.N+1)+a] || (a < b.N && !b.NodeValid[s*b.N+a]) {
			continue // ignored
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("batch: sample %d action %d prior is %v", s, a, v)
		}
	}
	for i, v := range b.Pod {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("batch: sample %d pod feature %d is %v", i/p, i%p, v)
		}
	}
	return nil
}

// fillNodes writes the (B*N) x (d+1) node matrix with a last column of ones;
// padding rows are all zero.
func fillNodes[T nn.Float](dst []T, b *Batch, d int) {
	for r, ok := range b.NodeValid {
		row := dst[r*(d+1) : (r+1)*(d+1)]
		if !ok {
			clear(row)
			continue
		}
		for j, v := range b.Nodes[r*d : (r+1)*d] {
			row[j] = T(v)
		}
		row[d] = 1
	}
}

// fillPod writes the B x (p+1) pod matrix with a last column of ones.
func fillPod[T nn.Float](dst []T, b *Batch, p int) {
	for s := range b.B {
		row := dst[s*(p+1) : (s+1)*(p+1)]
		for j, v := range b.Pod[s*p : (s+1)*p] {
			row[j] = T(v)
		}
		row[p] = 1
	}
}

// allowed writes the effective mask: b.Mask with padding nodes disallowed.
func allowed(dst []bool, b *Batch) {
	n := b.N
	for s := range b.B {
		for i := range n + 1 {
			ok := b.Mask[s*(n+1)+i]
			if i < n && !b.NodeValid[s*n+i] {
				ok = false
			}
			dst[s*(n+1)+i] = ok
		}
	}
}
