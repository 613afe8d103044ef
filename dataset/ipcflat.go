package dataset

import (
	"encoding/binary"
	"errors"
)

// Flatbuffers tables, as Arrow IPC message metadata stores them, read straight from a
// byte slice with bounds checks (used by the fast reader in ipcread.go).

// fbTable is a flatbuffers table in buf, read with bounds checks.
type fbTable struct {
	buf        []byte
	pos, vt    int
	vtableSize int
}

func u16(b []byte, p int) int    { return int(binary.LittleEndian.Uint16(b[p:])) }
func u32(b []byte, p int) uint32 { return binary.LittleEndian.Uint32(b[p:]) }

var errFlatbuffer = errors.New("corrupt message metadata")

func fbTableAt(buf []byte, pos int) (fbTable, error) {
	if pos < 0 || pos > len(buf)-4 {
		return fbTable{}, errFlatbuffer
	}
	vt := pos - int(int32(u32(buf, pos)))
	if vt < 0 || vt > len(buf)-4 {
		return fbTable{}, errFlatbuffer
	}
	size := u16(buf, vt)
	if size < 4 || vt+size > len(buf) {
		return fbTable{}, errFlatbuffer
	}
	return fbTable{buf: buf, pos: pos, vt: vt, vtableSize: size}, nil
}

// field returns the position of field i, or 0 when it is absent.
func (t fbTable) field(i int) int {
	o := 4 + 2*i
	if o+2 > t.vtableSize {
		return 0
	}
	off := u16(t.buf, t.vt+o)
	if off == 0 {
		return 0
	}
	return t.pos + off
}

func (t fbTable) int64(i int) (int64, error) {
	p := t.field(i)
	if p == 0 {
		return 0, nil
	}
	if p > len(t.buf)-8 {
		return 0, errFlatbuffer
	}
	return int64(binary.LittleEndian.Uint64(t.buf[p:])), nil
}

func (t fbTable) uint8(i int) (uint8, error) {
	p := t.field(i)
	if p == 0 {
		return 0, nil
	}
	if p >= len(t.buf) {
		return 0, errFlatbuffer
	}
	return t.buf[p], nil
}

// table follows field i's offset to a table; ok is false when it is absent.
func (t fbTable) table(i int) (fbTable, bool, error) {
	p := t.field(i)
	if p == 0 {
		return fbTable{}, false, nil
	}
	if p > len(t.buf)-4 {
		return fbTable{}, false, errFlatbuffer
	}
	tt, err := fbTableAt(t.buf, p+int(u32(t.buf, p)))
	return tt, err == nil, err
}

// structs returns the bytes of field i's vector of fixed-size structs.
func (t fbTable) structs(i, size int) ([]byte, error) {
	p := t.field(i)
	if p == 0 {
		return nil, nil
	}
	if p > len(t.buf)-4 {
		return nil, errFlatbuffer
	}
	v := p + int(u32(t.buf, p))
	if v < 0 || v > len(t.buf)-4 {
		return nil, errFlatbuffer
	}
	n := int(u32(t.buf, v))
	if n < 0 || n > (len(t.buf)-v-4)/size {
		return nil, errFlatbuffer
	}
	return t.buf[v+4 : v+4+n*size], nil
}
