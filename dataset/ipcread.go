package dataset

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// This file decodes the uncompressed Arrow IPC streams that Convert writes,
// straight from the mapped file: record-batch columns are slices of the
// mapping, and a batch the loader does not need (by its time statistics) is
// skipped without touching its bytes, dictionaries included. The generic
// Arrow reader copies every buffer, which costs more than the loader's own
// work. Every offset read from the file is bounds-checked; anything this
// decoder does not handle (compression, dictionary deltas, other layouts)
// is errUnsupported, and the caller falls back to the generic reader.

var errUnsupported = errors.New("arrow stream layout not handled by the fast reader")

// Message header types of the Arrow IPC format.
const (
	msgSchema          = 1
	msgDictionaryBatch = 2
	msgRecordBatch     = 3
)

// batchLayout is a decoded RecordBatch header: its row count, field nodes
// (length, null count) and buffers (offset, length) in the body.
type batchLayout struct {
	rows    int64
	nodes   []byte // 16 bytes each
	buffers []byte // 16 bytes each
	body    []byte
}

func (b *batchLayout) node(i int) (length, nulls int64, err error) {
	if (i+1)*16 > len(b.nodes) {
		return 0, 0, fmt.Errorf("field node %d missing", i)
	}
	return int64(binary.LittleEndian.Uint64(b.nodes[i*16:])), int64(binary.LittleEndian.Uint64(b.nodes[i*16+8:])), nil
}

// buffer returns buffer i of the body; need is the least length it must have.
func (b *batchLayout) buffer(i int, need int64) ([]byte, error) {
	if (i+1)*16 > len(b.buffers) {
		return nil, fmt.Errorf("buffer %d missing", i)
	}
	off := int64(binary.LittleEndian.Uint64(b.buffers[i*16:]))
	n := int64(binary.LittleEndian.Uint64(b.buffers[i*16+8:]))
	if off < 0 || n < need || n > int64(len(b.body)) || off > int64(len(b.body))-n {
		return nil, fmt.Errorf("buffer %d (offset %d, %d bytes, %d needed) outside the %d-byte body", i, off, n, need, len(b.body))
	}
	return b.body[off : off+n], nil
}

func parseBatch(t fbTable, body []byte) (batchLayout, error) {
	rows, err := t.int64(0)
	if err != nil {
		return batchLayout{}, err
	}
	if p := t.field(3); p != 0 {
		return batchLayout{}, errUnsupported // compressed
	}
	nodes, err := t.structs(1, 16)
	if err != nil {
		return batchLayout{}, err
	}
	bufs, err := t.structs(2, 16)
	if err != nil {
		return batchLayout{}, err
	}
	if rows < 0 || rows > 1<<31 {
		return batchLayout{}, fmt.Errorf("record batch of %d rows", rows)
	}
	return batchLayout{rows: rows, nodes: nodes, buffers: bufs, body: body}, nil
}

// validity returns the validity buffer of a field, nil when it has no nulls.
func (b *batchLayout) validity(buf int, length, nulls int64) (*memory.Buffer, error) {
	if nulls == 0 {
		return nil, nil
	}
	if nulls < 0 || nulls > length {
		return nil, fmt.Errorf("%d nulls in %d values", nulls, length)
	}
	v, err := b.buffer(buf, (length+7)/8)
	if err != nil {
		return nil, err
	}
	return memory.NewBufferBytes(v), nil
}

// stringArray decodes the single utf8 column of a dictionary batch.
func stringArray(b *batchLayout) (*array.Data, error) {
	n, nulls, err := b.node(0)
	if err != nil {
		return nil, err
	}
	if n != b.rows {
		return nil, fmt.Errorf("dictionary of %d values in a batch of %d", n, b.rows)
	}
	valid, err := b.validity(0, n, nulls)
	if err != nil {
		return nil, err
	}
	offs, err := b.buffer(1, 4*(n+1))
	if err != nil {
		return nil, err
	}
	o := arrow.Int32Traits.CastFromBytes(offs)[:n+1]
	if o[0] < 0 {
		return nil, fmt.Errorf("negative dictionary offset")
	}
	for i := 1; i < len(o); i++ {
		if o[i] < o[i-1] {
			return nil, fmt.Errorf("dictionary offsets out of order")
		}
	}
	vals, err := b.buffer(2, int64(o[n]))
	if err != nil {
		return nil, err
	}
	return array.NewData(arrow.BinaryTypes.String, int(n), []*memory.Buffer{valid, memory.NewBufferBytes(offs), memory.NewBufferBytes(vals)}, nil, int(nulls), 0), nil
}

// fastStream walks the messages of a mapped stream.
type fastStream struct {
	data []byte
	off  int
	def  *tableDef
	// dictionary id -> column; per id the last dictionary message, decoded
	// only when a record batch that is kept needs it
	dictCol []int
	dicts   []pendingDict
	// with a manifest: each batch's byte range and checksum, verified before
	// any of its bytes are decoded
	batches  []BatchInfo
	verified []bool // checks scheduled
	emitted  int    // record batches handed to the caller
	checks   chan int
	checked  chan error
}

type pendingDict struct {
	layout  batchLayout
	decoded *array.Data
	seen    bool
	batch   int // the record batch whose byte range holds the dictionary
}

// verify schedules the checksum check of batch k's byte range (once); the
// checks run on another goroutine while decoding goes on, and finish
// reports the first mismatch. A corrupt batch may thus be decoded before its
// check fails, which is safe (every offset is bounds-checked) and harmless
// (the scan then fails as a whole).
func (s *fastStream) verify(k int) error {
	if s.batches == nil {
		return nil
	}
	if k >= len(s.batches) {
		return fmt.Errorf("record batch %d is not in the manifest (%d batches)", k, len(s.batches))
	}
	if s.verified[k] {
		return nil
	}
	s.verified[k] = true
	if s.checks == nil {
		checks, checked := make(chan int, 256), make(chan error, 1)
		s.checks, s.checked = checks, checked
		go func() {
			var first error
			for k := range checks {
				b := &s.batches[k]
				if first != nil {
					continue
				}
				if b.Offset < 0 || b.Bytes < 0 || b.Offset > int64(len(s.data))-b.Bytes {
					first = fmt.Errorf("record batch %d: manifest range outside the file", k)
				} else if got := crc32.Checksum(s.data[b.Offset:b.Offset+b.Bytes], crcTable); got != b.CRC32 {
					first = fmt.Errorf("record batch %d: checksum %08x, manifest says %08x: file is corrupt", k, got, b.CRC32)
				}
			}
			checked <- first
		}()
	}
	s.checks <- k
	return nil
}

// finish waits for the scheduled checksum checks; it must run before the
// mapping is released.
func (s *fastStream) finish() error {
	if s.checks == nil {
		return nil
	}
	close(s.checks)
	s.checks = nil
	return <-s.checked
}

func newFastStream(data []byte, def *tableDef) *fastStream {
	s := &fastStream{data: data, def: def}
	for i, c := range def.cols {
		if c.kind == kString {
			s.dictCol = append(s.dictCol, i)
		}
	}
	s.dicts = make([]pendingDict, len(s.dictCol))
	return s
}

// message returns the next message's header table and body; done at the
// end-of-stream marker.
func (s *fastStream) message() (head fbTable, kind uint8, body []byte, done bool, err error) {
	rest := s.data[s.off:]
	if len(rest) < 8 || u32(rest, 0) != 0xFFFFFFFF {
		return fbTable{}, 0, nil, false, fmt.Errorf("byte %d: no message header", s.off)
	}
	n := int(u32(rest, 4))
	if n == 0 {
		s.off += 8
		return fbTable{}, 0, nil, true, nil
	}
	if n < 0 || n > len(rest)-8 {
		return fbTable{}, 0, nil, false, fmt.Errorf("byte %d: metadata of %d bytes runs past the end", s.off, n)
	}
	meta := rest[8 : 8+n]
	if len(meta) < 4 {
		return fbTable{}, 0, nil, false, errFlatbuffer
	}
	msg, err := fbTableAt(meta, int(u32(meta, 0)))
	if err != nil {
		return fbTable{}, 0, nil, false, fmt.Errorf("byte %d: %w", s.off, err)
	}
	kind, err = msg.uint8(1)
	if err != nil {
		return fbTable{}, 0, nil, false, err
	}
	bodyLen, err := msg.int64(3)
	if err != nil {
		return fbTable{}, 0, nil, false, err
	}
	if bodyLen < 0 || bodyLen > int64(len(rest)-8-n) {
		return fbTable{}, 0, nil, false, fmt.Errorf("byte %d: body of %d bytes runs past the end", s.off, bodyLen)
	}
	head, ok, err := msg.table(2)
	if err != nil || !ok {
		return fbTable{}, 0, nil, false, fmt.Errorf("byte %d: message without header", s.off)
	}
	body = rest[8+n : 8+n+int(bodyLen)]
	s.off += 8 + n + int(bodyLen)
	return head, kind, body, false, nil
}

// run calls fn(w, k, rec) for every record batch k (its index in the file)
// for which keep(k) is true (keep nil: all). With workers > 1, up to that
// many calls run at once on their own goroutines, w in [0, workers) naming
// the goroutine, and batches reach them in no set order; run returns when
// every call has. The first message is the schema, already checked by the
// caller. It returns the number of record batches and of their rows, kept
// or not.
func (s *fastStream) run(keep func(k int) bool, workers int, fn func(w, k int, rec arrow.Record) error) (batches int, rows int64, err error) {
	defer func() {
		// a checksum mismatch explains any other error
		if cerr := s.finish(); cerr != nil {
			err = cerr
		}
	}()
	emit := func(k int, rec arrow.Record) error {
		defer rec.Release()
		return fn(0, k, rec)
	}
	if workers > 1 {
		p := newBatchPool(workers, fn)
		defer func() {
			// The workers read the mapping: wait for them on every path. A
			// worker's error is on an earlier batch than any the dispatcher
			// met after it, and wins.
			if perr := p.wait(); perr != nil {
				err = perr
			}
		}()
		emit = p.send
	}
	if _, kind, _, _, err := s.message(); err != nil || kind != msgSchema {
		return 0, 0, fmt.Errorf("stream does not start with a schema: %v", err)
	}
	for {
		head, kind, body, done, err := s.message()
		if err != nil {
			return batches, rows, err
		}
		if done {
			if s.off != len(s.data) {
				return batches, rows, fmt.Errorf("%d bytes after the end-of-stream marker", len(s.data)-s.off)
			}
			return batches, rows, nil
		}
		switch kind {
		case msgDictionaryBatch:
			id, err := head.int64(0)
			if err != nil {
				return batches, rows, err
			}
			if delta, err := head.uint8(2); err != nil || delta != 0 {
				return batches, rows, errUnsupported
			}
			data, ok, err := head.table(1)
			if err != nil || !ok {
				return batches, rows, fmt.Errorf("dictionary batch without data")
			}
			if id < 0 || id >= int64(len(s.dicts)) {
				return batches, rows, errUnsupported
			}
			l, err := parseBatch(data, body)
			if err != nil {
				return batches, rows, err
			}
			s.dicts[id] = pendingDict{layout: l, seen: true, batch: batches}
		case msgRecordBatch:
			l, err := parseBatch(head, body)
			if err != nil {
				return batches, rows, err
			}
			k := batches
			batches++
			rows += l.rows
			if keep != nil && !keep(k) {
				continue
			}
			if err := s.verify(k); err != nil {
				return batches, rows, err
			}
			rec, err := s.record(&l)
			if err != nil {
				return batches, rows, fmt.Errorf("record batch %d: %w", k, err)
			}
			s.emitted++
			if err := emit(k, rec); err != nil {
				return batches, rows, err
			}
		default:
			return batches, rows, fmt.Errorf("unexpected message type %d", kind)
		}
	}
}

// record assembles a record batch whose columns are slices of the mapping.
func (s *fastStream) record(l *batchLayout) (arrow.Record, error) {
	n := l.rows
	cols := make([]arrow.Array, len(s.def.cols))
	release := func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}
	buf, dict := 0, 0
	for i, c := range s.def.cols {
		length, nulls, err := l.node(i)
		if err != nil {
			release()
			return nil, fmt.Errorf("table %s column %s: %w", s.def.name, c.name, err)
		}
		if length != n {
			release()
			return nil, fmt.Errorf("table %s column %s has %d values, want %d", s.def.name, c.name, length, n)
		}
		valid, err := l.validity(buf, n, nulls)
		if err != nil {
			release()
			return nil, fmt.Errorf("table %s column %s: %w", s.def.name, c.name, err)
		}
		var data *array.Data
		switch c.kind {
		case kInt, kReal:
			v, err := l.buffer(buf+1, 8*n)
			if err != nil {
				release()
				return nil, fmt.Errorf("table %s column %s: %w", s.def.name, c.name, err)
			}
			t := arrow.DataType(arrow.PrimitiveTypes.Int64)
			if c.kind == kReal {
				t = arrow.PrimitiveTypes.Float64
			}
			data = array.NewData(t, int(n), []*memory.Buffer{valid, memory.NewBufferBytes(v)}, nil, int(nulls), 0)
		case kString:
			v, err := l.buffer(buf+1, 4*n)
			if err != nil {
				release()
				return nil, fmt.Errorf("table %s column %s: %w", s.def.name, c.name, err)
			}
			d := &s.dicts[dict]
			if !d.seen {
				release()
				return nil, fmt.Errorf("table %s column %s: no dictionary", s.def.name, c.name)
			}
			if d.decoded == nil {
				if err := s.verify(d.batch); err != nil {
					release()
					return nil, err
				}
				if d.decoded, err = stringArray(&d.layout); err != nil {
					release()
					return nil, fmt.Errorf("table %s column %s dictionary: %w", s.def.name, c.name, err)
				}
			}
			data = array.NewDataWithDictionary(dictType, int(n), []*memory.Buffer{valid, memory.NewBufferBytes(v)}, int(nulls), 0, d.decoded)
			dict++
		}
		cols[i] = array.MakeFromData(data)
		data.Release()
		buf += 2
	}
	rec := array.NewRecord(s.def.schema, cols, n)
	release()
	return rec, nil
}
