package dataset

import (
	"bytes"
	"math"
	"strconv"
	"unsafe"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// cell is one parsed field of a row before the row is accepted.
type cell struct {
	null bool
	i    int64
	f    float64
	s    []byte // aliases the line buffer until the row is appended
}

// colBuf accumulates one column of a record batch.
type colBuf struct {
	kind  kind
	valid []byte // validity bitmap, bit set = value present
	nulls int
	ints  []int64
	reals []float64
	// string columns: per-batch dictionary
	codes    []int32
	dict     map[string]int32
	dictOffs []int32
	dictData []byte
	// the previous row's value and code: trace tables often repeat an id
	// on consecutive rows, which then skips the map
	last     []byte
	lastCode int32
}

// batchBuilder turns accepted rows of one table into Arrow record batches.
// The record returned by build aliases the builder's buffers: it is valid
// until the next call to reset. Dictionaries are the exception: reset gives
// each batch new dictionary memory, because an IPC writer keeps the last
// dictionary it wrote to compare the next one with.
type batchBuilder struct {
	def  *tableDef
	cols []colBuf
	n    int
}

func newBatchBuilder(def *tableDef, capRows int) *batchBuilder {
	b := &batchBuilder{def: def, cols: make([]colBuf, len(def.cols))}
	for i, c := range def.cols {
		cb := &b.cols[i]
		cb.kind = c.kind
		cb.valid = make([]byte, 0, (capRows+7)/8)
		switch c.kind {
		case kInt:
			cb.ints = make([]int64, 0, capRows)
		case kReal:
			cb.reals = make([]float64, 0, capRows)
		case kString:
			cb.codes = make([]int32, 0, capRows)
			cb.dict = make(map[string]int32)
			cb.lastCode = -1
			cb.dictOffs = append(make([]int32, 0, 1024), 0)
		}
	}
	return b
}

// reset empties the builder, keeping its capacity.
func (b *batchBuilder) reset() {
	for i := range b.cols {
		cb := &b.cols[i]
		cb.valid = cb.valid[:0]
		cb.nulls = 0
		cb.ints = cb.ints[:0]
		cb.reals = cb.reals[:0]
		if cb.kind == kString {
			cb.codes = cb.codes[:0]
			clear(cb.dict)
			cb.lastCode = -1
			cb.dictOffs = append(make([]int32, 0, cap(cb.dictOffs)), 0)
			cb.dictData = make([]byte, 0, cap(cb.dictData))
		}
	}
	b.n = 0
}

// appendRow adds a parsed row (one cell per column).
func (b *batchBuilder) appendRow(row []cell) {
	n := b.n
	if n%8 == 0 {
		for i := range b.cols {
			b.cols[i].valid = append(b.cols[i].valid, 0)
		}
	}
	for i := range b.cols {
		cb := &b.cols[i]
		c := &row[i]
		if c.null {
			cb.nulls++
		} else {
			cb.valid[n/8] |= 1 << (n % 8)
		}
		switch cb.kind {
		case kInt:
			cb.ints = append(cb.ints, c.i)
		case kReal:
			cb.reals = append(cb.reals, c.f)
		case kString:
			var code int32
			if !c.null {
				if cb.lastCode >= 0 && bytes.Equal(c.s, cb.last) {
					code = cb.lastCode
				} else {
					var ok bool
					code, ok = cb.dict[string(c.s)]
					if !ok {
						code = int32(len(cb.dictOffs) - 1)
						cb.dict[string(c.s)] = code
						cb.dictData = append(cb.dictData, c.s...)
						cb.dictOffs = append(cb.dictOffs, int32(len(cb.dictData)))
					}
					cb.last, cb.lastCode = append(cb.last[:0], c.s...), code
				}
			}
			cb.codes = append(cb.codes, code)
		}
	}
	b.n++
}

// build returns the accumulated rows as a record batch. The record aliases
// the builder's memory and is valid until reset.
func (b *batchBuilder) build() arrow.Record {
	arrs := make([]arrow.Array, len(b.cols))
	for i := range b.cols {
		cb := &b.cols[i]
		var valid *memory.Buffer
		if cb.nulls > 0 {
			valid = memory.NewBufferBytes(cb.valid)
		}
		var data *array.Data
		switch cb.kind {
		case kInt:
			data = array.NewData(arrow.PrimitiveTypes.Int64, b.n,
				[]*memory.Buffer{valid, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(cb.ints))}, nil, cb.nulls, 0)
		case kReal:
			data = array.NewData(arrow.PrimitiveTypes.Float64, b.n,
				[]*memory.Buffer{valid, memory.NewBufferBytes(arrow.Float64Traits.CastToBytes(cb.reals))}, nil, cb.nulls, 0)
		case kString:
			dict := array.NewData(arrow.BinaryTypes.String, len(cb.dictOffs)-1,
				[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(cb.dictOffs)), memory.NewBufferBytes(cb.dictData)},
				nil, 0, 0)
			data = array.NewDataWithDictionary(dictType, b.n,
				[]*memory.Buffer{valid, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(cb.codes))}, cb.nulls, 0, dict)
			dict.Release()
		}
		arrs[i] = array.MakeFromData(data)
		data.Release()
	}
	rec := array.NewRecord(b.def.schema, arrs, int64(b.n))
	for _, a := range arrs {
		a.Release()
	}
	return rec
}

// bytesString views b as a string without copying; the string must not
// outlive b's contents.
func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// parseInt parses a trace integer. Plain decimal integers take a fast path;
// reals with an integral value ("1.0", "1e3") are accepted, as some
// republished copies of the trace write integers that way.
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	i := 0
	neg := false
	if b[0] == '-' || b[0] == '+' {
		neg = b[0] == '-'
		i = 1
	}
	if i < len(b) && len(b)-i <= 18 {
		var v int64
		j := i
		for ; j < len(b); j++ {
			c := b[j] - '0'
			if c > 9 {
				break
			}
			v = v*10 + int64(c)
		}
		if j == len(b) && j > i {
			if neg {
				v = -v
			}
			return v, true
		}
	}
	f, err := strconv.ParseFloat(bytesString(b), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) >= 1<<63 {
		return 0, false
	}
	return int64(f), true
}

// parseReal parses a finite real.
func parseReal(b []byte) (float64, bool) {
	f, err := strconv.ParseFloat(bytesString(b), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}
