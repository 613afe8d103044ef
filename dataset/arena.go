package dataset

import "unsafe"

// stringArena builds many small strings in a few large blocks instead of
// one allocation each (the loader names every batch pod "job/task/instance").
// A block is never written again once a string points into it, so the
// strings are ordinary immutable strings; they keep their block alive.
type stringArena struct {
	block []byte
}

// arenaBlock is the size of an arena block; longer strings get their own.
const arenaBlock = 64 << 10

// join returns the concatenation of parts with sep between them.
func (a *stringArena) join(sep string, parts ...string) string {
	if len(parts) == 0 {
		return ""
	}
	n := len(sep) * (len(parts) - 1)
	for _, p := range parts {
		n += len(p)
	}
	if n == 0 {
		return ""
	}
	if cap(a.block)-len(a.block) < n {
		a.block = make([]byte, 0, max(arenaBlock, n))
	}
	start := len(a.block)
	for i, p := range parts {
		if i > 0 {
			a.block = append(a.block, sep...)
		}
		a.block = append(a.block, p...)
	}
	return unsafe.String(&a.block[start], n)
}
