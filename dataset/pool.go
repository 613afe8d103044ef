package dataset

import (
	"math/bits"
	"sync"
)

// poolAllocator is an Arrow memory.Allocator that recycles freed buffers by
// power-of-two size class. The Arrow IPC reader allocates a buffer for every
// column of every record batch and frees it when the batch is released, so
// a scan reuses a handful of buffers instead of zeroing and collecting new
// ones. Buffers come back with stale contents: use it only where every
// allocated byte is overwritten before it is read, as the IPC reader does.
type poolAllocator struct {
	mu   sync.Mutex
	free [64][][]byte
}

func sizeClass(n int) int {
	if n <= 64 {
		return 6
	}
	return bits.Len(uint(n - 1))
}

func (p *poolAllocator) Allocate(size int) []byte {
	c := sizeClass(size)
	p.mu.Lock()
	if k := len(p.free[c]); k > 0 {
		b := p.free[c][k-1]
		p.free[c] = p.free[c][:k-1]
		p.mu.Unlock()
		return b[:size]
	}
	p.mu.Unlock()
	return make([]byte, size, 1<<c)
}

func (p *poolAllocator) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		return b[:size]
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

func (p *poolAllocator) Free(b []byte) {
	c := sizeClass(cap(b))
	if cap(b) != 1<<c || c < 6 {
		return // not one of ours; leave it to the garbage collector
	}
	p.mu.Lock()
	if len(p.free[c]) < 64 {
		p.free[c] = append(p.free[c], b[:0])
	}
	p.mu.Unlock()
}
