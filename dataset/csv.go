package dataset

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/apache/arrow/go/v15/arrow"
)

// input is the CSV source of one table found in a directory.
type input struct {
	table string
	path  string
	size  int64
}

// Input file suffixes, longest first so that ".csv.gz" wins over ".gz".
var inputSuffixes = []string{".csv.gz", ".tar.gz", ".tgz", ".csv"}

// tableOf returns the table an input file name belongs to: the name is the
// table name, optionally followed by ".something" (as in the fixtures'
// "machine_meta.sample.csv"), then one of the input suffixes.
func tableOf(name string) (string, bool) {
	var stem string
	for _, s := range inputSuffixes {
		if strings.HasSuffix(name, s) {
			stem = strings.TrimSuffix(name, s)
			break
		}
	}
	if stem == "" {
		return "", false
	}
	for _, t := range Tables {
		if stem == t || strings.HasPrefix(stem, t+".") {
			return t, true
		}
	}
	return "", false
}

// findInputs lists the tables' CSV inputs in dir, at most one per table.
func findInputs(dir string) (map[string]input, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading input directory: %w", err)
	}
	found := make(map[string]input)
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		t, ok := tableOf(e.Name())
		if !ok {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if prev, dup := found[t]; dup {
			return nil, fmt.Errorf("two inputs for table %s: %s and %s; keep one", t, prev.path, p)
		}
		info, err := e.Info()
		if err != nil {
			return nil, fmt.Errorf("reading input directory: %w", err)
		}
		found[t] = input{table: t, path: p, size: info.Size()}
	}
	return found, nil
}

// countingReader counts the bytes read through it and reports progress.
type countingReader struct {
	r        io.Reader
	n        int64
	progress func(int64)
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.progress != nil && n > 0 {
		c.progress(int64(n))
	}
	return n, err
}

// members opens an input and calls fn for each CSV member it holds: the file
// itself, its gzip stream, or each .csv entry of a tar.gz archive. The name
// given to fn is what error messages use.
func (in input) members(progress func(int64), fn func(name string, r io.Reader) error) error {
	f, err := os.Open(in.path)
	if err != nil {
		return fmt.Errorf("opening input: %w", err)
	}
	defer f.Close()
	cr := &countingReader{r: f, progress: progress}
	switch {
	case strings.HasSuffix(in.path, ".csv"):
		return fn(in.path, cr)
	case strings.HasSuffix(in.path, ".csv.gz"):
		zr, err := gzip.NewReader(bufio.NewReaderSize(cr, 1<<20))
		if err != nil {
			return fmt.Errorf("%s: %w", in.path, err)
		}
		if err := fn(in.path, zr); err != nil {
			return err
		}
		return zr.Close()
	default: // .tar.gz, .tgz
		zr, err := gzip.NewReader(bufio.NewReaderSize(cr, 1<<20))
		if err != nil {
			return fmt.Errorf("%s: %w", in.path, err)
		}
		tr := tar.NewReader(zr)
		seen := 0
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return fmt.Errorf("%s: reading archive: %w", in.path, err)
			}
			base := filepath.Base(h.Name)
			if h.Typeflag != tar.TypeReg || !strings.HasSuffix(base, ".csv") || strings.HasPrefix(base, "._") {
				continue
			}
			seen++
			if err := fn(in.path+":"+h.Name, tr); err != nil {
				return err
			}
		}
		if seen == 0 {
			return fmt.Errorf("%s: archive holds no .csv file", in.path)
		}
		return nil
	}
}

// maxLine is the longest CSV line accepted; longer lines are malformed.
const maxLine = 1 << 20

// Reasons for dropping a row, as counted in TableSummary.Dropped.
const (
	ReasonColumns  = "wrong column count"
	ReasonInt      = "bad integer"
	ReasonReal     = "bad real"
	ReasonLong     = "line too long"
	ReasonEmptyRow = "empty line"
	// ReasonResource is a resource size (machine cores or memory, a
	// container's request, limit or memory, a task's plan) that is zero or
	// negative.
	ReasonResource = "non-positive resource"
	// ReasonRange is a number outside its column's range (ranges.go): a
	// time beyond MaxTraceSeconds, a resource above its ceiling, a
	// utilisation outside [0, 100] that is not a null marker.
	ReasonRange = "out of range"
	// ReasonText is a field that is not valid UTF-8.
	ReasonText = "invalid UTF-8"
	// ReasonTruncated is a last line without its end of line: a file cut
	// short, whose last row may have lost digits and still have its columns.
	ReasonTruncated = "truncated last line"
	// ReasonDuplicate is a row whose key (tableKeys) and values repeat an
	// earlier row's; ReasonConflict one whose key repeats an earlier row's
	// with other values. The first row is kept.
	ReasonDuplicate = "duplicate row"
	ReasonConflict  = "conflicting duplicate key"
)

// utf8BOM is the byte order mark some tools put at the start of a CSV file.
var utf8BOM = []byte("\xef\xbb\xbf")

// MalformedError is a CSV row that could not be parsed. It names the file
// and the line (1-based, counting every line including a header).
type MalformedError struct {
	File   string
	Line   int64
	Reason string // one of the Reason constants
	Detail string
}

func (e *MalformedError) Error() string {
	return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Reason, e.Detail)
}

// rowSink receives each completed record batch; the record is valid only
// during the call.
type rowSink func(rec arrow.Record) error

// parseOptions controls one table's CSV parse.
type parseOptions struct {
	batchRows  int
	strict     bool
	maxSamples int
	progress   func(int64)
}

// parseInput parses every member of one input into record batches given to
// sink, updating sum. In strict mode the first malformed row is an error
// (a *MalformedError); otherwise it is counted and skipped.
func parseInput(ctx context.Context, in input, po parseOptions, sum *TableSummary, sink rowSink) error {
	return parseMembers(ctx, defs[in.table], po, sum, sink, func(fn func(string, io.Reader) error) error {
		return in.members(po.progress, fn)
	})
}

// parseMembers parses the CSV streams that members hands to its callback,
// as one table: record batches run across member boundaries. Parsing and the
// sink run in two goroutines, handing over two batch builders in turn, so
// memory stays at two batches; sink is called from one goroutine at a time.
func parseMembers(ctx context.Context, def *tableDef, po parseOptions, sum *TableSummary, sink rowSink,
	members func(fn func(name string, r io.Reader) error) error) (err error) {
	free := make(chan *batchBuilder, 2)
	free <- newBatchBuilder(def, po.batchRows)
	free <- newBatchBuilder(def, po.batchRows)
	work := make(chan *batchBuilder, 1)
	done := make(chan struct{})
	var sinkErr error
	var failed atomic.Bool
	go func() {
		defer close(done)
		for b := range work {
			if sinkErr == nil {
				rec := b.build()
				sinkErr = sink(rec)
				rec.Release()
				if sinkErr != nil {
					failed.Store(true)
				}
			}
			b.reset()
			free <- b
		}
	}()
	defer func() {
		close(work)
		<-done
		if err == nil || errors.Is(err, errSinkFailed) {
			err = sinkErr
		}
	}()
	bb := <-free
	keys := newKeySet(maxDupKeys)
	defer func() { sum.DupKeysCapped = sum.DupKeysCapped || keys.capped }()
	row := make([]cell, len(def.cols))
	fields := make([][]byte, 0, len(def.cols)+1)
	flush := func() error {
		if bb.n == 0 {
			return nil
		}
		work <- bb
		bb = <-free
		if failed.Load() {
			return errSinkFailed
		}
		return nil
	}
	err = members(func(name string, r io.Reader) error {
		br := bufio.NewReaderSize(r, maxLine)
		var line int64
		for {
			raw, err := br.ReadSlice('\n')
			if len(raw) == 0 && err == io.EOF {
				break
			}
			line++
			if errors.Is(err, bufio.ErrBufferFull) {
				// skip the rest of an over-long line
				for errors.Is(err, bufio.ErrBufferFull) {
					_, err = br.ReadSlice('\n')
				}
				if err != nil && err != io.EOF {
					return fmt.Errorf("%s:%d: %w", name, line, err)
				}
				sum.Read++
				if e := sum.malformed(po, &MalformedError{File: name, Line: line, Reason: ReasonLong,
					Detail: fmt.Sprintf("longer than %d bytes", maxLine)}); e != nil {
					return e
				}
				if err == io.EOF {
					break
				}
				continue
			}
			if err != nil && err != io.EOF {
				return fmt.Errorf("%s:%d: %w", name, line, err)
			}
			truncated := err == io.EOF && raw[len(raw)-1] != '\n'
			l := bytes.TrimRight(raw, "\r\n")
			if line == 1 {
				l = bytes.TrimPrefix(l, utf8BOM)
			}
			if len(bytes.TrimSpace(l)) == 0 {
				if err == io.EOF {
					break
				}
				sum.Read++
				if e := sum.malformed(po, &MalformedError{File: name, Line: line, Reason: ReasonEmptyRow, Detail: "no fields"}); e != nil {
					return e
				}
				continue
			}
			fields = splitFields(l, fields[:0])
			if line == 1 && isHeader(fields, def) {
				sum.Headers++
				continue
			}
			sum.Read++
			rs, me := parseRow(fields, def, row)
			if me == nil && truncated {
				me = &MalformedError{Reason: ReasonTruncated, Detail: "the file ends inside this line (no end of line after it)"}
			}
			if me == nil && len(def.key) > 0 {
				if h, ok := keyHash(fields, def.key); ok {
					if seen, same := keys.check(h, l); seen {
						me = &MalformedError{Reason: ReasonConflict, Detail: "key " + keyText(fields, def) + " seen before with other values"}
						if same {
							me = &MalformedError{Reason: ReasonDuplicate, Detail: "key " + keyText(fields, def) + " seen before with the same values"}
						}
					}
				}
			}
			if me != nil {
				me.File, me.Line = name, line
				if e := sum.malformed(po, me); e != nil {
					return e
				}
			} else {
				// counted only now: a dropped row (a duplicate, a cut
				// line) must not move the span
				sum.Nulled += rs.nulled
				sum.MaxTime = max(sum.MaxTime, rs.maxTime)
				bb.appendRow(row)
				sum.Kept++
				if bb.n >= po.batchRows {
					if e := ctx.Err(); e != nil {
						return e
					}
					if e := flush(); e != nil {
						return e
					}
				}
			}
			if err == io.EOF {
				break
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}

// errSinkFailed stops the parser once the sink has failed; the sink's own
// error is what parseMembers returns.
var errSinkFailed = errors.New("sink failed")

// malformed records a dropped row, or returns it as an error in strict mode.
func (s *TableSummary) malformed(po parseOptions, me *MalformedError) error {
	if po.strict {
		return me
	}
	if s.Dropped == nil {
		s.Dropped = make(map[string]int64)
	}
	s.Dropped[me.Reason]++
	if len(s.Samples) < po.maxSamples {
		s.Samples = append(s.Samples, me.Error())
	}
	return nil
}

// splitFields splits a line at commas. Fields wrapped in double quotes lose
// the quotes (the trace never quotes, some re-exports do); a quoted comma is
// not supported and shows up as a wrong column count.
func splitFields(l []byte, dst [][]byte) [][]byte {
	for {
		i := bytes.IndexByte(l, ',')
		f := l
		if i >= 0 {
			f = l[:i]
		}
		if len(f) >= 2 && f[0] == '"' && f[len(f)-1] == '"' {
			f = f[1 : len(f)-1]
		}
		dst = append(dst, f)
		if i < 0 {
			return dst
		}
		l = l[i+1:]
	}
}

// isHeader reports whether the first line is a header: its first field is
// the table's first column name.
func isHeader(fields [][]byte, def *tableDef) bool {
	return len(fields) > 0 && strings.EqualFold(strings.TrimSpace(string(fields[0])), def.cols[0].name)
}

// keyText formats a row's key fields for a message, as "(a, b)".
func keyText(fields [][]byte, def *tableDef) string {
	var b strings.Builder
	b.WriteByte('(')
	for j, k := range def.key {
		if j > 0 {
			b.WriteString(", ")
		}
		b.Write(fields[k])
	}
	b.WriteByte(')')
	return b.String()
}

// rowStats is what a parsed row adds to its table's summary once kept.
type rowStats struct {
	nulled  int64 // utilisation markers stored as null
	maxTime int64 // the largest time stamp (0 when none)
}

// parseRow parses fields into row; the error is nil when every field is
// valid: the right number of columns, text in UTF-8, numbers that parse and
// lie in their column's range (ranges.go).
func parseRow(fields [][]byte, def *tableDef, row []cell) (rowStats, *MalformedError) {
	var rs rowStats
	if len(fields) != len(def.cols) {
		return rs, &MalformedError{Reason: ReasonColumns,
			Detail: fmt.Sprintf("want %d columns, got %d", len(def.cols), len(fields))}
	}
	for i, c := range def.cols {
		f := fields[i]
		r := &row[i]
		r.null = len(f) == 0
		r.s = nil
		if r.null {
			continue
		}
		var v float64 // the number, for the range check
		switch c.kind {
		case kString:
			if !utf8.Valid(f) {
				return rs, &MalformedError{Reason: ReasonText, Detail: fmt.Sprintf("column %s: %q", c.name, f)}
			}
			r.s = f
			continue
		case kInt:
			iv, ok := parseInt(f)
			if !ok {
				return rs, &MalformedError{Reason: ReasonInt, Detail: fmt.Sprintf("column %s: %q", c.name, f)}
			}
			r.i, v = iv, float64(iv)
		case kReal:
			fv, ok := parseReal(f)
			if !ok {
				return rs, &MalformedError{Reason: ReasonReal, Detail: fmt.Sprintf("column %s: %q", c.name, f)}
			}
			r.f, v = fv, fv
		}
		if c.pos && !(v > 0) {
			return rs, &MalformedError{Reason: ReasonResource, Detail: fmt.Sprintf("column %s: %s", c.name, f)}
		}
		if c.util && (v == -1 || v == 101) {
			r.null = true
			rs.nulled++
			continue
		}
		if c.hasRange && !c.rng.contains(v) {
			return rs, &MalformedError{Reason: ReasonRange, Detail: fmt.Sprintf("column %s: %s outside %s", c.name, f, c.rng)}
		}
		if c.time && v > float64(rs.maxTime) {
			rs.maxTime = int64(math.Ceil(v))
		}
	}
	return rs, nil
}

// sortedInputs returns the inputs in schema order.
func sortedInputs(m map[string]input) []input {
	out := make([]input, 0, len(m))
	for _, in := range m {
		out = append(out, in)
	}
	order := make(map[string]int, len(Tables))
	for i, t := range Tables {
		order[t] = i
	}
	sort.Slice(out, func(i, j int) bool { return order[out[i].table] < order[out[j].table] })
	return out
}
