package dataset

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/kubesim/kubesim/sim"
)

// source yields the record batches of trace tables, from Arrow files or by
// parsing CSV; the loader does not know which.
type source interface {
	has(table string) bool
	// scan calls fn with each record batch of table; a record is valid only
	// during the call.
	// win lets a source skip record batches that hold no time in it; the
	// caller filters rows itself.
	scan(ctx context.Context, table string, win timeRange, fn func(arrow.Record) error) error
}

// concurrentSource is a source that can work on several record batches of
// a table at once (the Arrow source, whose batches are independent slices
// of a mapped file).
type concurrentSource interface {
	source
	// scanConcurrent is scan with up to workers calls of fn running at once,
	// each given its goroutine w in [0, workers) and the batch's index k in
	// the table; batches come in no set order.
	scanConcurrent(ctx context.Context, table string, win timeRange, workers int, fn func(w, k int, rec arrow.Record) error) error
}

// arrowSource reads dir/<table>.arrow, checked against dir/manifest.json.
type arrowSource struct {
	dir string
	man *Manifest
}

// ErrNotTrace is wrapped by the error of a load from a folder that has no
// manifest: without it, tables cannot be told complete from missing, and
// an interrupted conversion would load as a much smaller trace.
var ErrNotTrace = errors.New("not a converted trace")

// openArrowSource opens the converted trace in dir; a folder without a
// valid manifest is an error naming the folder.
func openArrowSource(dir string) (*arrowSource, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("opening trace: %w", err)
	}
	man, err := ReadManifest(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("opening trace %s: %w: no %s (make one with kubesim convert or kubesim data)", dir, ErrNotTrace, ManifestFile)
	}
	if err != nil {
		return nil, fmt.Errorf("opening trace %s: %w", dir, err)
	}
	return &arrowSource{dir: dir, man: man}, nil
}

func (s *arrowSource) has(table string) bool { return s.man.Has(table) }

// eos is the Arrow IPC end-of-stream marker that closes every file Convert writes.
var eos = []byte{0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0}

// mappedMessages reads the messages of an Arrow IPC stream held in memory
// (a mapped file) without copying: each message's body is a slice of data.
type mappedMessages struct {
	data []byte
	off  int
	msg  *ipc.Message
}

func (m *mappedMessages) Retain()  {}
func (m *mappedMessages) Release() { m.releaseMsg() }

func (m *mappedMessages) releaseMsg() {
	if m.msg != nil {
		m.msg.Release()
		m.msg = nil
	}
}

// Message returns the next message, io.EOF at the end-of-stream marker.
func (m *mappedMessages) Message() (*ipc.Message, error) {
	m.releaseMsg()
	rest := m.data[m.off:]
	if len(rest) < 4 {
		return nil, fmt.Errorf("truncated at byte %d: no message header", m.off)
	}
	n := binary.LittleEndian.Uint32(rest)
	skip := 4
	if n == 0xFFFFFFFF {
		if len(rest) < 8 {
			return nil, fmt.Errorf("truncated at byte %d: no message length", m.off)
		}
		n, skip = binary.LittleEndian.Uint32(rest[4:]), 8
	}
	if n == 0 {
		m.off += skip
		return nil, io.EOF
	}
	if int64(n) > int64(len(rest)-skip) {
		return nil, fmt.Errorf("message at byte %d: metadata of %d bytes runs past the end", m.off, n)
	}
	meta := rest[skip : skip+int(n)]
	if err := checkSchemaMeta(meta); err != nil {
		return nil, fmt.Errorf("message at byte %d: %w", m.off, err)
	}
	head := ipc.NewMessage(memory.NewBufferBytes(meta), memory.NewBufferBytes(nil))
	bodyLen := head.BodyLen()
	head.Release()
	start := skip + int(n)
	if bodyLen < 0 || bodyLen > int64(len(rest)-start) {
		return nil, fmt.Errorf("message at byte %d: body of %d bytes runs past the end", m.off, bodyLen)
	}
	body := rest[start : start+int(bodyLen)]
	m.msg = ipc.NewMessage(memory.NewBufferBytes(meta), memory.NewBufferBytes(body))
	m.off += start + int(bodyLen)
	return m.msg, nil
}

// checkSchemaMeta checks the vector lengths of a schema message (its
// fields, their children and metadata, recursively) against the bytes that
// hold them: the Arrow library allocates by them before it reads, so a
// corrupt length would ask for terabytes. Other messages pass.
func checkSchemaMeta(meta []byte) error {
	if len(meta) < 4 {
		return errFlatbuffer
	}
	msg, err := fbTableAt(meta, int(u32(meta, 0)))
	if err != nil {
		return err
	}
	kind, err := msg.uint8(1)
	if err != nil || kind != msgSchema {
		return err
	}
	schema, ok, err := msg.table(2)
	if err != nil || !ok {
		return err
	}
	if _, err := schema.structs(2, 4); err != nil { // custom_metadata
		return err
	}
	return checkFields(schema, 1, 0)
}

// checkFields checks the vector of Field tables at field i of t, and
// theirs, to a depth of 8.
func checkFields(t fbTable, i, depth int) error {
	vec, err := t.structs(i, 4)
	if err != nil || len(vec) == 0 {
		return err
	}
	if depth > 8 {
		return errFlatbuffer
	}
	p := t.field(i)
	base := p + int(u32(t.buf, p)) + 4 // position of the first offset (structs checked it)
	for k := 0; k < len(vec); k += 4 {
		f, err := fbTableAt(t.buf, base+k+int(u32(t.buf, base+k)))
		if err != nil {
			return err
		}
		if _, err := f.structs(6, 4); err != nil { // custom_metadata
			return err
		}
		if err := checkFields(f, 5, depth+1); err != nil { // children
			return err
		}
	}
	return nil
}

func (s *arrowSource) scan(ctx context.Context, table string, win timeRange, fn func(arrow.Record) error) error {
	return s.scanConcurrent(ctx, table, win, 1, func(_, _ int, rec arrow.Record) error { return fn(rec) })
}

func (s *arrowSource) scanConcurrent(ctx context.Context, table string, win timeRange, workers int, fn func(w, k int, rec arrow.Record) error) error {
	path := filepath.Join(s.dir, table+".arrow")
	want := s.man.table(table)
	if want == nil {
		return fmt.Errorf("%s: %s is not in the manifest", s.dir, table)
	}
	return scanArrowFile(ctx, path, defs[table], want, win, workers, fn)
}

// rowCounter is a source that knows, without reading a table, how many rows
// its record batches selected by win hold: the Arrow source, from the
// manifest. The loader sizes its pod array from it.
type rowCounter interface {
	rows(table string, win timeRange) (int64, bool)
}

// rows sums the manifest's row counts of the batches of table that win
// selects; false without a manifest entry.
func (s *arrowSource) rows(table string, win timeRange) (int64, bool) {
	t := s.man.table(table)
	if t == nil || len(t.Batches) == 0 {
		return 0, false
	}
	var n int64
	for i := range t.Batches {
		if win.keeps(&t.Batches[i]) {
			n += t.Batches[i].Rows
		}
	}
	return n, true
}

// timeRange selects record batches by the time statistics in the manifest:
// a batch is read when it may hold a time in [lo, hi) (trace time). The
// loader still filters rows; this only spares it batches it would drop.
type timeRange struct {
	on     bool
	lo, hi sim.Time
}

func window(lo, hi sim.Time) timeRange { return timeRange{on: true, lo: lo, hi: hi} }

var allRows = timeRange{}

func (r timeRange) keeps(b *BatchInfo) bool {
	if !r.on || !b.Timed || b.NullTimes > 0 {
		return true
	}
	return b.MaxTime*1000 >= float64(r.lo) && b.MinTime*1000 < float64(r.hi)
}

// scanArrowFile streams the record batches of one Arrow file that win
// selects. A file that is truncated, corrupt, of another table, or different
// from its manifest entry is an error naming the file; a panic inside the
// Arrow library on malformed input is turned into such an error too.
//
// Uncompressed files take the fast path (fastStream): zero-copy, skipping
// unselected batches, verifying each batch read against its checksum in the
// manifest, and running fn on up to workers batches at once. Other files go
// through the generic Arrow reader, which checks the whole file's checksum
// and calls fn on one batch at a time (w = 0). k is the batch's index in
// the file.
func scanArrowFile(ctx context.Context, path string, def *tableDef, want *ManifestTable, win timeRange, workers int, fn func(w, k int, rec arrow.Record) error) (err error) {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("opening table: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("opening table: %w", err)
	}
	size := info.Size()
	if want != nil && size != want.Bytes {
		return fmt.Errorf("%s: %d bytes, manifest says %d: truncated or replaced", path, size, want.Bytes)
	}
	if size < int64(len(eos)) {
		return fmt.Errorf("%s: truncated arrow stream (%d bytes)", path, size)
	}
	data, unmap, err := mapFile(f, size)
	if err != nil {
		return err
	}
	defer unmap()
	if !bytes.Equal(data[len(data)-len(eos):], eos) {
		return fmt.Errorf("%s: truncated arrow stream: no end-of-stream marker", path)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: table %s: corrupt arrow data: %s", path, def.name, panicCause(r))
		}
	}()
	schemaReader, err := ipc.NewReaderFromMessageReader(&mappedMessages{data: data}, ipc.WithAllocator(&poolAllocator{}))
	if err != nil {
		return fmt.Errorf("%s: table %s: not an arrow stream: %w", path, def.name, arrowError(err))
	}
	err = checkSchema(schemaReader.Schema(), def)
	schemaReader.Release()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if want != nil && len(want.Batches) == 0 && want.Rows > 0 {
		return fmt.Errorf("%s: manifest lists no record batches for %d rows", path, want.Rows)
	}
	wrapped := func(w, k int, rec arrow.Record) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		// Check every buffer size and dictionary code, with checksums or
		// without: a file corrupted and given matching checksums (or
		// corrupted in memory) fails here, naming the table and the column,
		// rather than giving wrong values or an out-of-range read.
		if err := checkRecord(rec, def); err != nil {
			return fmt.Errorf("%s: record batch %d: %w", path, k, err)
		}
		return fn(w, k, rec)
	}
	if want == nil || want.Compression == "" {
		fs := newFastStream(data, def)
		var keep func(int) bool
		if want != nil {
			fs.batches, fs.verified = want.Batches, make([]bool, len(want.Batches))
			keep = func(k int) bool { return k >= len(want.Batches) || win.keeps(&want.Batches[k]) }
		}
		batches, rows, err := fs.run(keep, workers, wrapped)
		switch {
		case errors.Is(err, errUnsupported) && fs.emitted == 0 && want == nil:
			// not a layout the fast path handles: use the generic reader
		case err != nil:
			if strings.HasPrefix(err.Error(), path) {
				return err
			}
			return fmt.Errorf("%s: corrupt arrow stream: %w", path, err)
		default:
			if want != nil && (rows != want.Rows || batches != len(want.Batches)) {
				return fmt.Errorf("%s: %d rows in %d batches, manifest says %d in %d", path, rows, batches, want.Rows, len(want.Batches))
			}
			return nil
		}
	}
	return scanGeneric(path, data, want, win, wrapped)
}

// scanGeneric reads a stream with the Arrow library's reader, which copies
// every buffer and handles compression; the whole file's checksum is
// computed on another core meanwhile.
func scanGeneric(path string, data []byte, want *ManifestTable, win timeRange, fn func(w, k int, rec arrow.Record) error) (err error) {
	if want != nil {
		// the mapping must outlive the goroutine, hence the wait on every
		// path; a mismatch is the better explanation of any decoding error
		sum := make(chan uint32, 1)
		go func() { sum <- crc32.Checksum(data, crcTable) }()
		defer func() {
			if got := <-sum; got != want.CRC32 {
				err = fmt.Errorf("%s: checksum %08x, manifest says %08x: file is corrupt", path, got, want.CRC32)
			}
		}()
	}
	mr := &mappedMessages{data: data}
	rdr, err := ipc.NewReaderFromMessageReader(mr, ipc.WithAllocator(&poolAllocator{}))
	if err != nil {
		return fmt.Errorf("%s: not an arrow stream: %w", path, arrowError(err))
	}
	defer rdr.Release()
	var rows int64
	k := 0
	for rdr.Next() {
		rec := rdr.Record()
		rows += rec.NumRows()
		k++
		if want != nil && k <= len(want.Batches) && !win.keeps(&want.Batches[k-1]) {
			continue
		}
		if err := fn(0, k-1, rec); err != nil {
			return err
		}
	}
	if err := rdr.Err(); err != nil {
		return fmt.Errorf("%s: corrupt arrow stream: %w", path, arrowError(err))
	}
	if mr.off != len(data) {
		return fmt.Errorf("%s: corrupt arrow stream: %d bytes after the end-of-stream marker at byte %d", path, len(data)-mr.off, mr.off)
	}
	if want != nil && rows != want.Rows {
		return fmt.Errorf("%s: %d rows, manifest says %d", path, rows, want.Rows)
	}
	return nil
}

// panicCause describes a panic recovered while decoding corrupt input: a
// runtime error (an index or slice out of range) is an offset or length in
// the file that points outside its buffer; the Go message says nothing to
// a user.
func panicCause(r any) string {
	if _, ok := r.(runtime.Error); ok {
		return "an offset or length points outside its buffer"
	}
	return fmt.Sprint(r)
}

// arrowError replaces the Arrow library's report of a panic it recovered
// ("unknown error while reading: runtime error: ...") by panicCause's.
func arrowError(err error) error {
	if strings.Contains(err.Error(), "runtime error") {
		return errors.New("corrupt message: an offset or length points outside its buffer")
	}
	return err
}

// checkSchema verifies that a file holds the expected table.
func checkSchema(got *arrow.Schema, def *tableDef) error {
	if got.NumFields() != len(def.cols) {
		return fmt.Errorf("schema has %d columns, want %d for table %s", got.NumFields(), len(def.cols), def.name)
	}
	for i, f := range def.schema.Fields() {
		g := got.Field(i)
		if g.Name != f.Name || !arrow.TypeEqual(g.Type, f.Type) {
			return fmt.Errorf("column %d is %s %s, want %s %s (table %s)", i, g.Name, g.Type, f.Name, f.Type, def.name)
		}
	}
	return nil
}

// checkRecord verifies what the loader relies on: the table's columns,
// buffer sizes that match the row count, and dictionary codes inside their
// dictionaries, so that a corrupt batch is an error naming the table and
// the column rather than a wrong value or an out-of-range read.
func checkRecord(rec arrow.Record, def *tableDef) error {
	n := int(rec.NumRows())
	if int(rec.NumCols()) != len(def.cols) {
		return fmt.Errorf("table %s: %d columns, want %d", def.name, rec.NumCols(), len(def.cols))
	}
	for i, col := range rec.Columns() {
		bad := func(format string, a ...any) error {
			return fmt.Errorf("table %s column %s: %s", def.name, def.cols[i].name, fmt.Sprintf(format, a...))
		}
		if col.Len() != n {
			return bad("%d values, want %d", col.Len(), n)
		}
		switch a := col.(type) {
		case *array.Int64:
			if len(a.Int64Values()) != n {
				return bad("short value buffer")
			}
		case *array.Float64:
			if len(a.Float64Values()) != n {
				return bad("short value buffer")
			}
		case *array.Dictionary:
			idx, ok := a.Indices().(*array.Int32)
			if !ok {
				return bad("dictionary indices are %s, want int32", a.Indices().DataType())
			}
			dict, ok := a.Dictionary().(*array.String)
			if !ok {
				return bad("dictionary values are %s, want utf8", a.Dictionary().DataType())
			}
			if err := checkStrings(dict); err != nil {
				return bad("%v", err)
			}
			codes := idx.Int32Values()
			if len(codes) != n {
				return bad("short index buffer")
			}
			m := int32(dict.Len())
			for j, c := range codes {
				if (c < 0 || c >= m) && a.IsValid(j) {
					return bad("row %d: dictionary code %d outside [0, %d)", j, c, m)
				}
			}
		default:
			return bad("unexpected type %s", col.DataType())
		}
	}
	return nil
}

// checkStrings verifies a string array's offsets: non-negative and in order.
// (The Arrow reader already checks that the last offset is inside the data.)
func checkStrings(a *array.String) error {
	if a.Len() == 0 {
		return nil
	}
	offs := a.ValueOffsets()
	if len(offs) != a.Len()+1 || offs[0] < 0 {
		return fmt.Errorf("dictionary offsets invalid")
	}
	for i := 1; i < len(offs); i++ {
		if offs[i] < offs[i-1] {
			return fmt.Errorf("dictionary offsets out of order")
		}
	}
	return nil
}

// csvSource parses the CSV tables of a directory on every scan: the slow
// path, used for traces that were not converted and to measure what the
// Arrow files save.
type csvSource struct {
	inputs    map[string]input
	batchRows int
}

func openCSVSource(dir string) (*csvSource, error) {
	inputs, err := findInputs(dir)
	if err != nil {
		return nil, err
	}
	return &csvSource{inputs: inputs, batchRows: 1 << 14}, nil
}

func (s *csvSource) has(table string) bool { _, ok := s.inputs[table]; return ok }

func (s *csvSource) scan(ctx context.Context, table string, _ timeRange, fn func(arrow.Record) error) error {
	var ts TableSummary
	return parseInput(ctx, s.inputs[table], parseOptions{batchRows: s.batchRows}, &ts, fn)
}
