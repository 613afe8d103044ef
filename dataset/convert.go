package dataset

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/kubesim/kubesim/internal/atomicdir"
	"github.com/kubesim/kubesim/internal/atomicfile"
)

// ConvertOptions controls Convert. The zero value is usable.
type ConvertOptions struct {
	// Strict makes the first malformed CSV row an error instead of a counted drop.
	Strict bool
	// BatchRows is the number of rows per Arrow record batch (default 65,536).
	// Memory use is proportional to it, not to the input size.
	BatchRows int
	// Compression of the Arrow buffers: "" or "none", "lz4" or "zstd".
	Compression string
	// Progress, when set, is called as input bytes are consumed, with the
	// bytes read so far and the total size of all inputs (compressed size for
	// .gz and .tar.gz inputs).
	Progress func(done, total int64)
	// MaxSamples is how many malformed rows each table's summary quotes with
	// file and line (default 10).
	MaxSamples int
	// Logger receives one warning per quoted malformed row; nil means slog.Default().
	Logger *slog.Logger
}

func (o *ConvertOptions) defaults() error {
	if o.BatchRows == 0 {
		o.BatchRows = 1 << 16
	}
	if o.BatchRows < 1 {
		return fmt.Errorf("convert options: batch rows %d must be positive", o.BatchRows)
	}
	if o.MaxSamples == 0 {
		o.MaxSamples = 10
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	switch o.Compression {
	case "", "none", "lz4", "zstd":
	default:
		return fmt.Errorf("convert options: unknown compression %q (want none, lz4 or zstd)", o.Compression)
	}
	return nil
}

// TableSummary is what Convert did with one table.
type TableSummary struct {
	Table  string
	Input  string // CSV input path
	Output string // Arrow file path
	// Read counts data rows (lines other than a header); Read = Kept + sum(Dropped).
	Read, Kept int64
	// Headers counts header lines skipped (one per file that has one).
	Headers int64
	// Nulled counts utilisation values -1 or 101 stored as null.
	Nulled int64
	// Dropped counts malformed rows by reason (the Reason constants).
	Dropped map[string]int64
	// Samples quotes the first malformed rows as "file:line: reason: detail".
	Samples []string
	// DupKeysCapped is set when the table has more distinct keys than the
	// duplicate check remembers (maxDupKeys): later rows were checked
	// against the first keys only.
	DupKeysCapped bool
	// MaxTime is the largest time stamp seen (seconds since trace start).
	MaxTime int64
	// Bytes is the size of the Arrow file written.
	Bytes int64
	// CRC32 is the CRC-32 (IEEE) checksum of the Arrow file.
	CRC32 uint32
	// Batches describes each record batch of the Arrow file.
	Batches []BatchInfo
}

// BatchInfo locates one record batch in an Arrow file: the bytes of its
// messages (its dictionaries, then the batch; the first also holds the
// schema) with their checksum, its rows, and the range of the table's
// window time column (seconds; Timed is false when no row has a time).
// Load verifies the checksum of every batch it reads and skips batches whose
// times fall outside the window.
type BatchInfo struct {
	Offset    int64   `json:"offset"`
	Bytes     int64   `json:"bytes"`
	CRC32     uint32  `json:"crc32"`
	Rows      int64   `json:"rows"`
	Timed     bool    `json:"timed,omitempty"`
	MinTime   float64 `json:"min_time,omitempty"`
	MaxTime   float64 `json:"max_time,omitempty"`
	NullTimes int64   `json:"null_times,omitempty"`
}

// DroppedTotal returns the number of rows dropped for any reason.
func (s *TableSummary) DroppedTotal() int64 {
	var n int64
	for _, v := range s.Dropped {
		n += v
	}
	return n
}

// Summary is the result of Convert: one entry per table converted, in schema order.
type Summary struct {
	Tables []TableSummary
}

// String formats the summary as a small table, one line per table, reasons
// in sorted order.
func (s Summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-16s %12s %12s %10s %8s  %s\n", "table", "read", "kept", "dropped", "nulled", "reasons")
	for _, t := range s.Tables {
		reasons := make([]string, 0, len(t.Dropped))
		for r, n := range t.Dropped {
			reasons = append(reasons, fmt.Sprintf("%s=%d", r, n))
		}
		sort.Strings(reasons)
		if t.DupKeysCapped {
			reasons = append(reasons, fmt.Sprintf("(duplicates checked against the first %d keys only)", maxDupKeys))
		}
		fmt.Fprintf(&b, "%-16s %12d %12d %10d %8d  %s\n", t.Table, t.Read, t.Kept, t.DroppedTotal(), t.Nulled, strings.Join(reasons, ", "))
	}
	return b.String()
}

// Manifest describes a converted trace directory. Convert writes it last, so
// its presence means every table listed is complete; Load checks each file's
// size and checksum against it.
type Manifest struct {
	Format  string          `json:"format"`
	Version int             `json:"version"`
	Span    int64           `json:"span_seconds"` // largest time stamp of any table
	Tables  []ManifestTable `json:"tables"`
}

// ManifestTable is one converted table.
type ManifestTable struct {
	Table   string           `json:"table"`
	File    string           `json:"file"`
	Rows    int64            `json:"rows"`
	Bytes   int64            `json:"bytes"`
	CRC32   uint32           `json:"crc32"`
	MaxTime int64            `json:"max_time_seconds"`
	Read    int64            `json:"rows_read"`
	Dropped map[string]int64 `json:"rows_dropped,omitempty"`
	// Compression of the Arrow buffers ("" for none).
	Compression string      `json:"compression,omitempty"`
	Batches     []BatchInfo `json:"batches"`
}

// Manifest format identifiers.
const (
	ManifestFile   = "manifest.json"
	manifestFormat = "kubesim-alibaba-v2018-arrow"
	// Version 2: CRC-32 (IEEE) checksums instead of CRC-32C (version 1).
	manifestVersion = 2
)

// Has reports whether the manifest lists table.
func (m *Manifest) Has(table string) bool { return m.table(table) != nil }

func (m *Manifest) table(table string) *ManifestTable {
	for i := range m.Tables {
		if m.Tables[i].Table == table {
			return &m.Tables[i]
		}
	}
	return nil
}

// ReadManifest reads dir/manifest.json.
func ReadManifest(dir string) (*Manifest, error) {
	p := filepath.Join(dir, ManifestFile)
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("reading manifest: %w", err)
	}
	// the format and version first: another version's fields are not errors
	// but a reason to convert again
	var head struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if head.Format != manifestFormat || head.Version != manifestVersion {
		return nil, fmt.Errorf("%s: format %q version %d, want %q version %d: convert the trace again", p, head.Format, head.Version, manifestFormat, manifestVersion)
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if m.Span < 0 || m.Span > MaxTraceSeconds {
		return nil, fmt.Errorf("%s: span_seconds %d outside [0, %d]: convert the trace again", p, m.Span, MaxTraceSeconds)
	}
	for _, t := range m.Tables {
		if _, ok := defs[t.Table]; !ok {
			return nil, fmt.Errorf("%s: unknown table %q", p, t.Table)
		}
		if t.File != t.Table+".arrow" {
			return nil, fmt.Errorf("%s: table %s: file %q, want %q", p, t.Table, t.File, t.Table+".arrow")
		}
	}
	return &m, nil
}

// crcTable is the checksum of Arrow files and of their record batches.
// Load verifies every batch it reads, some 200 MB for the two-day benchmark
// trace: CRC-32 (IEEE), which the standard library computes by carry-less
// multiplication, runs at 21-23 GB/s on data out of the cache on this
// project's machines, CRC-32C (Castagnoli) at 6 GB/s (24 GB/s on data in the
// cache); the load spent 30 ms per run on it.
var crcTable = crc32.IEEETable

// Convert reads the trace tables found in inDir (table.csv, table.csv.gz or
// the published table.tar.gz; a file named table.anything.csv also counts) and
// writes outDir/table.arrow for each, then outDir/manifest.json. Rows are
// streamed in record batches of opts.BatchRows, so memory does not grow with
// the input. The whole folder is replaced at once (internal/atomicdir): the
// tables and the manifest are written into a temporary sibling of outDir
// that is swapped in only when all of them are complete, so a failed,
// cancelled or killed conversion leaves outDir as it was, and readers see
// the old trace or the new one, never a mix. outDir is locked while it is
// written: a second conversion into it fails (atomicdir.ErrLocked) naming
// the folder and the pid of the first. An outDir that holds other files
// than a trace's is refused rather than replaced.
//
// The .arrow files hold the Arrow IPC streaming format: every record batch
// carries its own dictionaries for the string columns, which keeps memory
// bounded (the IPC file format allows a single dictionary per column for the
// whole file). Read them with an IPC stream reader (pyarrow.ipc.open_stream).
//
// A folder holding one openb_node_list_*.csv and one openb_pod_list_*.csv
// (Alibaba's GPU traces, FGD's openb) is converted by ConvertOpenb instead.
func Convert(ctx context.Context, inDir, outDir string, opts ConvertOptions) (Summary, error) {
	if err := opts.defaults(); err != nil {
		return Summary{}, err
	}
	if nodes, pods, ok, err := FindOpenb(inDir); err != nil || ok {
		if err != nil {
			return Summary{}, err
		}
		return ConvertOpenb(ctx, nodes, pods, outDir)
	}
	inputs, err := findInputs(inDir)
	if err != nil {
		return Summary{}, err
	}
	if len(inputs) == 0 {
		return Summary{}, fmt.Errorf("no trace tables in %s (want files such as %s.csv, %s.csv.gz or %s.tar.gz)", inDir, MachineMeta, MachineMeta, MachineMeta)
	}
	if err := replaceableTrace(outDir); err != nil {
		return Summary{}, err
	}
	lock, err := atomicdir.Lock(outDir)
	if err != nil {
		return Summary{}, fmt.Errorf("converting into %s: %w", outDir, err)
	}
	defer lock.Unlock()
	var total int64
	for _, in := range inputs {
		total += in.size
	}
	var done atomic.Int64
	var progress func(int64)
	if opts.Progress != nil {
		progress = func(n int64) { opts.Progress(done.Add(n), total) }
	}
	var sum Summary
	err = atomicdir.Replace(outDir, func(tmp string) error {
		m := Manifest{Format: manifestFormat, Version: manifestVersion}
		for _, in := range sortedInputs(inputs) {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("converting into %s: %w", outDir, err)
			}
			ts, err := convertTable(ctx, in, tmp, outDir, opts, progress)
			if err != nil {
				return err
			}
			for _, s := range ts.Samples {
				opts.Logger.Warn("malformed row dropped", "table", ts.Table, "row", s)
			}
			sum.Tables = append(sum.Tables, ts)
			comp := opts.Compression
			if comp == "none" {
				comp = ""
			}
			m.Tables = append(m.Tables, ManifestTable{Table: ts.Table, File: ts.Table + ".arrow", Rows: ts.Kept,
				Bytes: ts.Bytes, CRC32: ts.CRC32, MaxTime: ts.MaxTime, Read: ts.Read, Dropped: ts.Dropped,
				Compression: comp, Batches: ts.Batches})
			m.Span = max(m.Span, ts.MaxTime)
		}
		b, err := json.MarshalIndent(&m, "", "  ")
		if err != nil {
			return fmt.Errorf("encoding manifest: %w", err)
		}
		return writeFileAtomic(filepath.Join(tmp, ManifestFile), append(b, '\n'))
	})
	if err != nil {
		return sum, err
	}
	return sum, nil
}

// replaceableTrace refuses an output folder that Convert must not replace
// as a whole: one holding anything but a trace's files (a manifest, Arrow
// tables, the default trace's stamp, hidden temporaries). A missing or
// empty folder is fine.
func replaceableTrace(dir string) error {
	return replaceable(dir, "a converted trace", "Convert replaces the whole folder, so give an empty or new folder (or a trace folder)",
		func(e fs.DirEntry) bool {
			n := e.Name()
			if n == DefaultStampFile {
				return true
			}
			t, ok := strings.CutSuffix(n, ".arrow")
			return ok && defs[t] != nil && !e.IsDir()
		})
}

// replaceable refuses an output folder that holds an entry other than
// hidden temporaries, the manifest and those ours accepts: the folder is
// replaced as a whole, so anything else in it would be lost. what names
// the folder's kind and advice what to do instead. A missing folder is
// fine.
func replaceable(dir, what, advice string, ours func(fs.DirEntry) bool) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("output folder: %w", err)
	}
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, ".") || n == ManifestFile || ours(e) {
			continue
		}
		return fmt.Errorf("output folder %s holds %s, which is not part of %s: %s", dir, n, what, advice)
	}
	return nil
}

// ipcOptions returns the writer options for a table.
func ipcOptions(def *tableDef, compression string) []ipc.Option {
	o := []ipc.Option{ipc.WithSchema(def.schema), ipc.WithAllocator(memory.DefaultAllocator)}
	switch compression {
	case "lz4":
		o = append(o, ipc.WithLZ4())
	case "zstd":
		o = append(o, ipc.WithZstd())
	}
	return o
}

// hashingWriter checksums and counts what it writes, over the whole file
// and since the last batch mark.
type hashingWriter struct {
	w    io.Writer
	crc  hash.Hash32
	part uint32
	n    int64
}

func (h *hashingWriter) Write(p []byte) (int, error) {
	n, err := h.w.Write(p)
	h.crc.Write(p[:n])
	h.part = crc32.Update(h.part, crcTable, p[:n])
	h.n += int64(n)
	return n, err
}

// convertTable converts one table into writeDir; errors and the summary
// name the file as it will be in outDir.
func convertTable(ctx context.Context, in input, writeDir, outDir string, opts ConvertOptions, progress func(int64)) (TableSummary, error) {
	out := filepath.Join(outDir, in.table+".arrow")
	ts := TableSummary{Table: in.table, Input: in.path, Output: out}
	err := writeAtomic(filepath.Join(writeDir, in.table+".arrow"), func(f io.Writer) error {
		return encodeTable(ctx, defs[in.table], f, out, opts, &ts, func(fn func(string, io.Reader) error) error {
			return in.members(progress, fn)
		})
	})
	return ts, err
}

// encodeTable parses the CSV streams of one table and writes them to w as an
// Arrow IPC stream, recording counts, size and checksum in ts. out names w in
// errors.
func encodeTable(ctx context.Context, def *tableDef, w io.Writer, out string, opts ConvertOptions, ts *TableSummary,
	members func(fn func(string, io.Reader) error) error) error {
	hw := &hashingWriter{w: w, crc: crc32.New(crcTable)}
	aw := ipc.NewWriter(hw, ipcOptions(def, opts.Compression)...)
	po := parseOptions{batchRows: opts.BatchRows, strict: opts.Strict, maxSamples: opts.MaxSamples}
	err := parseMembers(ctx, def, po, ts, func(rec arrow.Record) error {
		bi := BatchInfo{Offset: hw.n, Rows: rec.NumRows()}
		if def.window >= 0 {
			timeStats(rec.Column(def.window), &bi)
		}
		hw.part = 0
		if err := aw.Write(rec); err != nil {
			return fmt.Errorf("%s: writing record batch: %w", out, err)
		}
		bi.Bytes, bi.CRC32 = hw.n-bi.Offset, hw.part
		ts.Batches = append(ts.Batches, bi)
		return nil
	}, members)
	if err != nil {
		aw.Close()
		return err
	}
	if err := aw.Close(); err != nil {
		return fmt.Errorf("%s: closing arrow stream: %w", out, err)
	}
	ts.Bytes, ts.CRC32 = hw.n, hw.crc.Sum32()
	return nil
}

// timeStats records the range and null count of a time column.
func timeStats(col arrow.Array, bi *BatchInfo) {
	lo, hi := math.Inf(1), math.Inf(-1)
	switch a := col.(type) {
	case *array.Int64:
		for i, v := range a.Int64Values() {
			if a.IsValid(i) {
				lo, hi = math.Min(lo, float64(v)), math.Max(hi, float64(v))
			}
		}
	case *array.Float64:
		for i, v := range a.Float64Values() {
			if a.IsValid(i) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	bi.NullTimes = int64(col.NullN())
	if lo <= hi {
		bi.Timed, bi.MinTime, bi.MaxTime = true, lo, hi
	}
}

// writeAtomic writes path through fill (internal/atomicfile).
func writeAtomic(path string, fill func(io.Writer) error) error { return atomicfile.Write(path, fill) }

func writeFileAtomic(path string, data []byte) error { return atomicfile.WriteBytes(path, data) }
