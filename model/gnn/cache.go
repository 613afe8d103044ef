package gnn

import (
	"bytes"
	"unsafe"

	"github.com/kubesim/kubesim/model/internal/nn"
)

// rowCache keeps, between host forward passes, the rows of the node
// embedding (ReLU of nodes x Embed) and of the first round's Self product:
// both are row-wise, so a row whose input did not change keeps its value,
// and only the changed rows are multiplied again. A GPU policy deciding pod
// after pod on one cluster sees about 70 of 1,213 rows change per decision
// (the placed node, and the nodes whose fit or model match differs for the
// new pod). Every later step (the means, the context, the other rounds)
// mixes all rows and runs in full.
//
// Each output element is the same sum, in the same order, whichever rows
// are multiplied with it (gonum's sgemm/dgemm accumulate every element over
// k in order, whatever the row blocking), so the cached pass is bit for
// bit the full one; model.TestRowCacheBitIdentical checks it.
type rowCache[T nn.Float] struct {
	on          bool
	nodes       []T // the input rows the cache is for (rows x (D+1))
	h0, self0   []T // their embedding and first-round Self product (rows x H)
	embed, self []T // copies of the weights they were computed with
	idx         []int
	in, h, s    []T // gathered changed rows and their products
}

// SetCache turns the row cache on or off (off by default; turning it off
// drops what it holds). With it on, Forward recomputes the embedding and
// the first round's Self product only for the node rows whose input
// differs, bit for bit, from the previous call's; a change of row count or
// of the Embed or first Self weights recomputes everything.
func (ws *Workspace[T]) SetCache(on bool) {
	if !on {
		ws.cache = rowCache[T]{}
	}
	ws.cache.on = on
}

// update brings h0 and self0 up to date with nodes (rows x (D+1)).
func (c *rowCache[T]) update(e *Encoder, rows int, nodes []T) {
	d1, hd := e.cfg.NodeFeatures+1, e.cfg.Hidden
	embed := nn.Data[T](e.Embed.Value)
	self := nn.Data[T](e.Round[0].Self.Value)
	nodes = nodes[:rows*d1]
	if len(c.nodes) != len(nodes) || !sameBits(c.embed, embed) || !sameBits(c.self, self) {
		c.idx = c.idx[:0]
		c.nodes = append(c.nodes[:0], nodes...)
		c.embed = append(c.embed[:0], embed...)
		c.self = append(c.self[:0], self...)
		c.h0 = nn.Grow(c.h0, rows*hd)
		c.self0 = nn.Grow(c.self0, rows*hd)
		nn.Gemm(rows, hd, d1, nodes, embed, c.h0, false)
		nn.Relu(c.h0)
		nn.Gemm(rows, hd, hd, c.h0, self, c.self0, false)
		return
	}
	c.idx = c.idx[:0]
	for i := range rows {
		if !sameBits(c.nodes[i*d1:(i+1)*d1], nodes[i*d1:(i+1)*d1]) {
			c.idx = append(c.idx, i)
		}
	}
	m := len(c.idx)
	if m == 0 {
		return
	}
	c.in = nn.Grow(c.in, m*d1)
	c.h = nn.Grow(c.h, m*hd)
	c.s = nn.Grow(c.s, m*hd)
	for j, i := range c.idx {
		copy(c.in[j*d1:(j+1)*d1], nodes[i*d1:(i+1)*d1])
	}
	nn.Gemm(m, hd, d1, c.in, embed, c.h, false)
	nn.Relu(c.h)
	nn.Gemm(m, hd, hd, c.h, self, c.s, false)
	for j, i := range c.idx {
		copy(c.nodes[i*d1:(i+1)*d1], c.in[j*d1:(j+1)*d1])
		copy(c.h0[i*hd:(i+1)*hd], c.h[j*hd:(j+1)*hd])
		copy(c.self0[i*hd:(i+1)*hd], c.s[j*hd:(j+1)*hd])
	}
}

// sameBits reports whether a and b hold the same values bit for bit (so
// that -0 differs from 0 and a NaN equals itself): their bytes compared.
func sameBits[T nn.Float](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 {
		return true
	}
	size := int(unsafe.Sizeof(a[0]))
	return bytes.Equal(unsafe.Slice((*byte)(unsafe.Pointer(&a[0])), len(a)*size),
		unsafe.Slice((*byte)(unsafe.Pointer(&b[0])), len(b)*size))
}

// CachedRows returns the rows the last Forward recomputed when the cache
// kept the others (empty when it recomputed all rows, kept all, or is
// off): for tests and profiles.
func (ws *Workspace[T]) CachedRows() []int { return ws.cache.idx }
