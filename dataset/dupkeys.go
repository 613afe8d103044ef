package dataset

import (
	"hash/crc32"
)

// maxDupKeys bounds the keys one table's duplicate check remembers: 1 Mi
// keys, 24 MiB at most (an open-addressing table of 2 Mi slots of 12
// bytes; 36 MiB for the moment it doubles). That holds every table of the
// default trace (batch_instance: 619,748 rows). A table with more rows (the
// published batch_instance has 1.35 billion) is checked against its first
// maxDupKeys keys only, and the summary says so
// (TableSummary.DupKeysCapped). Measured on 1 GiB of generated
// batch_instance rows (TestConvertBoundedMemory), the check takes about a
// third of the parse's CPU (random access to the table).
const maxDupKeys = 1 << 20

// keySet remembers the rows seen of one table: a 64-bit hash of each row's
// key (FNV-1a over the key fields) and a CRC-32 of its whole line, in an
// open-addressing table that doubles up to maxDupKeys keys. Two different
// keys with one hash (odds about n²/2⁶⁵: 3e-8 at 1 Mi keys) would drop a
// good row, named in the summary like any other.
type keySet struct {
	keys   []uint64 // 0: empty slot (a hash of 0 is stored as 1)
	rows   []uint32
	n      int
	max    int
	capped bool
}

func newKeySet(max int) *keySet {
	return &keySet{keys: make([]uint64, 1024), rows: make([]uint32, 1024), max: max}
}

// keyHash hashes the key fields of a row; ok is false when a key field is
// empty (such rows identify nothing, and the loader skips them).
func keyHash(fields [][]byte, key []int) (uint64, bool) {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for _, k := range key {
		f := fields[k]
		if len(f) == 0 {
			return 0, false
		}
		for _, c := range f {
			h ^= uint64(c)
			h *= prime
		}
		h ^= 0xff // separator: ("ab","c") and ("a","bc") differ
		h *= prime
	}
	if h == 0 {
		h = 1
	}
	return h, true
}

// check records a row's key and line; it returns whether the key was seen
// before and, if so, whether with the same line.
func (s *keySet) check(h uint64, line []byte) (seen, same bool) {
	row := crc32.Checksum(line, crcTable)
	mask := uint64(len(s.keys) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch s.keys[i] {
		case h:
			return true, s.rows[i] == row
		case 0:
			if s.n >= s.max {
				s.capped = true
				return false, false
			}
			s.keys[i], s.rows[i] = h, row
			s.n++
			if s.n*2 > len(s.keys) {
				s.grow()
			}
			return false, false
		}
	}
}

func (s *keySet) grow() {
	keys, rows := s.keys, s.rows
	s.keys, s.rows = make([]uint64, 2*len(keys)), make([]uint32, 2*len(keys))
	mask := uint64(len(s.keys) - 1)
	for j, h := range keys {
		if h == 0 {
			continue
		}
		i := h & mask
		for s.keys[i] != 0 {
			i = (i + 1) & mask
		}
		s.keys[i], s.rows[i] = h, rows[j]
	}
}
