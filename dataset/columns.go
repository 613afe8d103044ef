package dataset

import (
	"math"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
)

// Typed views of record-batch columns for the loader. Records reaching the
// loader have passed checkRecord (Arrow files) or were built by batchBuilder
// (CSV), so the type assertions hold and dictionary codes are in range.

type strCol struct {
	arr   *array.Dictionary
	codes []int32
	dict  *array.String
	nulls bool
}

func strColumn(rec arrow.Record, i int) strCol {
	d := rec.Column(i).(*array.Dictionary)
	return strCol{arr: d, codes: d.Indices().(*array.Int32).Int32Values(), dict: d.Dictionary().(*array.String), nulls: d.NullN() > 0}
}

// code returns the dictionary code of row i, or -1 for null.
func (c strCol) code(i int) int32 {
	if c.nulls && c.arr.IsNull(i) {
		return -1
	}
	return c.codes[i]
}

// value returns row i's string (aliasing the batch's memory) and whether it is set.
func (c strCol) value(i int) (string, bool) {
	k := c.code(i)
	if k < 0 {
		return "", false
	}
	return c.dict.Value(int(k)), true
}

// mapDict fills dst with f of each dictionary entry, so that per-row work
// is an index: dst[code].
func (c strCol) mapDict(dst []int32, f func(string) int32) []int32 {
	dst = dst[:0]
	for j := 0; j < c.dict.Len(); j++ {
		dst = append(dst, f(c.dict.Value(j)))
	}
	return dst
}

type intCol struct {
	arr   *array.Int64
	vals  []int64
	nulls bool
}

func intColumn(rec arrow.Record, i int) intCol {
	a := rec.Column(i).(*array.Int64)
	return intCol{arr: a, vals: a.Int64Values(), nulls: a.NullN() > 0}
}

func (c intCol) get(i int) (int64, bool) {
	if c.nulls && c.arr.IsNull(i) {
		return 0, false
	}
	return c.vals[i], true
}

type realCol struct {
	arr   *array.Float64
	vals  []float64
	nulls bool
}

func realColumn(rec arrow.Record, i int) realCol {
	a := rec.Column(i).(*array.Float64)
	return realCol{arr: a, vals: a.Float64Values(), nulls: a.NullN() > 0}
}

func (c realCol) get(i int) (float64, bool) {
	if c.nulls && c.arr.IsNull(i) {
		return 0, false
	}
	return c.vals[i], true
}

// getOrNaN returns row i, or NaN when it is null.
func (c realCol) getOrNaN(i int) float64 {
	if v, ok := c.get(i); ok {
		return v
	}
	return math.NaN()
}
