package dataset

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
)

const fixtures = "testdata/alibaba-v2018"

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// value is one cell as read back: nil for null, else string, int64 or float64.
type value = any

// readTable returns every cell of an Arrow table file.
func readTable(t *testing.T, path, table string) [][]value {
	t.Helper()
	var rows [][]value
	err := scanArrowFile(context.Background(), path, defs[table], nil, allRows, 1, func(_, _ int, rec arrow.Record) error {
		rows = append(rows, recordCells(rec)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func recordCells(rec arrow.Record) [][]value {
	var rows [][]value
	for i := range int(rec.NumRows()) {
		row := make([]value, rec.NumCols())
		for c, col := range rec.Columns() {
			if col.IsNull(i) {
				continue
			}
			switch a := col.(type) {
			case *array.Dictionary:
				// clone: batch memory is reused once the callback returns
				row[c] = strings.Clone(a.Dictionary().(*array.String).Value(a.GetValueIndex(i)))
			case *array.Int64:
				row[c] = a.Value(i)
			case *array.Float64:
				row[c] = a.Value(i)
			}
		}
		rows = append(rows, row)
	}
	return rows
}

func TestConvertFixtures(t *testing.T) {
	out := t.TempDir()
	sum, err := Convert(context.Background(), fixtures, out, ConvertOptions{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	// Row counts from the fixtures README; batch_task has a header line that
	// is not a row.
	counts := map[string][2]int64{ // table -> {rows kept, header lines}
		MachineMeta: {40, 0}, MachineUsage: {40, 0}, ContainerMeta: {3, 0}, ContainerUsage: {4, 0}, BatchTask: {40, 1},
	}
	if len(sum.Tables) != len(counts) {
		t.Fatalf("converted %d tables, want %d", len(sum.Tables), len(counts))
	}
	for _, ts := range sum.Tables {
		want := counts[ts.Table]
		if ts.Read != want[0] || ts.Kept != want[0] || ts.Headers != want[1] || ts.DroppedTotal() != 0 {
			t.Errorf("%s: read %d kept %d headers %d dropped %d; want %d, %d, %d, 0",
				ts.Table, ts.Read, ts.Kept, ts.Headers, ts.DroppedTotal(), want[0], want[0], want[1])
		}
	}
	cases := []struct {
		name  string
		table string
		row   int
		want  []value
	}{
		// first raw row: m_1,0,219,17,96,100,USING
		{"machine_meta first row", MachineMeta, 0, []value{"m_1", int64(0), int64(219), "17", int64(96), int64(100), "USING"}},
		// last row: m_1006,0,62,4,96,100,USING
		{"machine_meta last row", MachineMeta, 39, []value{"m_1006", int64(0), int64(62), "4", int64(96), int64(100), "USING"}},
		// m_1932,386640,41,92,,,43.04,33.08,5: empty mem_gps and mkpi are null
		{"machine_usage empty fields", MachineUsage, 0, []value{"m_1932", 386640.0, int64(41), int64(92), nil, nil, 43.04, 33.08, 5.0}},
		// header skipped; M1,1.0,j_1,1,Terminated,419912,419912,100.0,0.2: "1.0" is the integer 1
		{"batch_task integers written as reals", BatchTask, 0, []value{"M1", int64(1), "j_1", "1", "Terminated", int64(419912), int64(419912), 100.0, 0.2}},
		// M3,12846.0,j_3,...,157213,157295,100.0,0.3
		{"batch_task large instance count", BatchTask, 7, []value{"M3", int64(12846), "j_3", "1", "Terminated", int64(157213), int64(157295), 100.0, 0.3}},
		// c_1,m_2556,338909,app_5052,started,400,400,1.56
		{"container_meta", ContainerMeta, 2, []value{"c_1", "m_2556", int64(338909), "app_5052", "started", int64(400), int64(400), 1.56}},
		// ,m_108,696330,20,56,,,,0,0,2<CR>: empty container id, CRLF line end
		{"container_usage empty id and CRLF", ContainerUsage, 0, []value{nil, "m_108", 696330.0, int64(20), int64(56), nil, nil, nil, 0.0, 0.0, 2.0}},
		// ,m_108,698570,14,64,1.56,0,0,0,0,4<CR>
		{"container_usage second row", ContainerUsage, 1, []value{nil, "m_108", 698570.0, int64(14), int64(64), 1.56, 0.0, int64(0), 0.0, 0.0, 4.0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rows := readTable(t, filepath.Join(out, tc.table+".arrow"), tc.table)
			if got := fmt.Sprint(rows[tc.row]); got != fmt.Sprint(tc.want) {
				t.Errorf("row %d = %s; want %s", tc.row, got, fmt.Sprint(tc.want))
			}
		})
	}
	m, err := ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	// the largest time stamp of the fixtures is container_usage's 698570
	if m.Span != 698570 {
		t.Errorf("manifest span = %d; want 698570", m.Span)
	}
}

// roundTripCase is a table's random content: the typed values and the CSV
// text that encodes them.
type roundTripCase struct {
	want [][]value
	csv  []byte
}

// randomTable draws rows for a table: about 15% of fields empty, utilisation
// fields sometimes -1 or 101 (which must read back as null), integers now
// and then written as reals ("7.0"), strings from a small alphabet so that
// dictionaries repeat and change between batches. Numbers lie in their
// column's range (ranges.go), and the first key column is unique per row,
// so that no row is dropped.
func randomTable(r *rand.Rand, def *tableDef, n int) roundTripCase {
	var c roundTripCase
	var b bytes.Buffer
	for i := range n {
		row := make([]value, len(def.cols))
		for j, col := range def.cols {
			if j > 0 {
				b.WriteByte(',')
			}
			if r.IntN(100) < 15 {
				continue // empty field: null
			}
			switch col.kind {
			case kString:
				s := "v" + strconv.Itoa(r.IntN(40))
				if len(def.key) > 0 && j == def.key[0] {
					s = "k" + strconv.Itoa(i)
				}
				row[j] = s
				b.WriteString(s)
			case kInt:
				lo, hi := int64(col.rng.Min), int64(min(col.rng.Max, 2_000_000))
				if col.pos || col.rng.Positive { // resources are positive (others are ReasonResource)
					lo = 1
				}
				v := lo + r.Int64N(hi-lo+1)
				if col.util && r.IntN(10) == 0 {
					v = []int64{-1, 101}[r.IntN(2)]
				}
				if r.IntN(5) == 0 {
					b.WriteString(strconv.FormatInt(v, 10) + ".0")
				} else {
					b.WriteString(strconv.FormatInt(v, 10))
				}
				if !(col.util && (v == -1 || v == 101)) {
					row[j] = v
				}
			case kReal:
				v := math.Round(r.NormFloat64()*1e6) / 100
				if col.pos || col.rng.Positive || col.rng.Min >= 0 {
					v = math.Abs(v) + 0.01
				}
				v = min(v, col.rng.Max)
				if col.util && r.IntN(10) == 0 {
					v = []float64{-1, 101}[r.IntN(2)]
				}
				b.WriteString(strconv.FormatFloat(v, 'f', -1, 64))
				if !(col.util && (v == -1 || v == 101)) {
					row[j] = v
				}
			}
		}
		b.WriteByte('\n')
		c.want = append(c.want, row)
	}
	c.csv = b.Bytes()
	return c
}

// The Arrow round trip preserves every value and null, across many record
// batches whose dictionaries differ, for every table.
func TestArrowRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	in, out := t.TempDir(), t.TempDir()
	cases := make(map[string]roundTripCase)
	for _, table := range Tables {
		c := randomTable(r, defs[table], 1000)
		cases[table] = c
		if err := os.WriteFile(filepath.Join(in, table+".csv"), c.csv, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// 64 rows per batch: 16 batches per table, each with its own dictionaries
	if _, err := Convert(context.Background(), in, out, ConvertOptions{BatchRows: 64, Logger: quiet}); err != nil {
		t.Fatal(err)
	}
	for _, table := range Tables {
		t.Run(table, func(t *testing.T) {
			got := readTable(t, filepath.Join(out, table+".arrow"), table)
			want := cases[table].want
			if len(got) != len(want) {
				t.Fatalf("%d rows; want %d", len(got), len(want))
			}
			for i := range want {
				if fmt.Sprint(got[i]) != fmt.Sprint(want[i]) {
					t.Fatalf("row %d = %v; want %v", i, got[i], want[i])
				}
			}
		})
	}
}

// The same rows as .csv, .csv.gz and .tar.gz convert to identical Arrow
// bytes.
func TestConvertInputFormats(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(fixtures, "batch_task.sample.csv"))
	if err != nil {
		t.Fatal(err)
	}
	gz := func(b []byte) []byte {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(b)
		zw.Close()
		return buf.Bytes()
	}
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	tw.WriteHeader(&tar.Header{Name: "batch_task.csv", Mode: 0o644, Size: int64(len(raw)), Typeflag: tar.TypeReg})
	tw.Write(raw)
	tw.Close()
	cases := []struct {
		name, file string
		data       []byte
	}{
		{"plain", "batch_task.csv", raw},
		{"gzip", "batch_task.csv.gz", gz(raw)},
		{"published archive", "batch_task.tar.gz", gz(tb.Bytes())},
	}
	var first uint32
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in, out := t.TempDir(), t.TempDir()
			if err := os.WriteFile(filepath.Join(in, tc.file), tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			sum, err := Convert(context.Background(), in, out, ConvertOptions{Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			ts := sum.Tables[0]
			if ts.Kept != 40 || ts.Headers != 1 {
				t.Errorf("kept %d rows, %d headers; want 40, 1", ts.Kept, ts.Headers)
			}
			if i == 0 {
				first = ts.CRC32
			} else if ts.CRC32 != first {
				t.Errorf("arrow checksum %08x; want %08x as for the plain CSV", ts.CRC32, first)
			}
		})
	}
}

func TestConvertMalformedRows(t *testing.T) {
	// machine_meta rows; line numbers count every line of the file.
	lines := []string{
		"m_1,0,219,17,96,100,USING",        // 1 ok
		"m_2,0,219,17,96,USING",            // 2 six columns
		"m_3,zero,219,17,96,100,USING",     // 3 bad integer
		"",                                 // 4 empty line
		"m_4,5,219,17,96,100,USING,extra",  // 5 eight columns
		"m_5,10,219,17,96,100.5,USING",     // 6 100.5 is not an integer
		"m_6,20,219,17,96,100,USING\r",     // 7 ok, CRLF
		"m_7,30,219,\"17\",96,100,USING",   // 8 ok, quoted field
		"m_8,1e3,219,17,96,1.0e2,IMPORT_X", // 9 ok, integral reals
	}
	in := t.TempDir()
	path := filepath.Join(in, "machine_meta.csv")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Run("counted", func(t *testing.T) {
		out := t.TempDir()
		sum, err := Convert(context.Background(), in, out, ConvertOptions{Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		ts := sum.Tables[0]
		// 9 lines: 4 kept; dropped: 2 column counts (lines 2, 5), 2 bad
		// integers (3, 6), 1 empty line (4)
		want := map[string]int64{ReasonColumns: 2, ReasonInt: 2, ReasonEmptyRow: 1}
		if ts.Read != 9 || ts.Kept != 4 || fmt.Sprint(ts.Dropped) != fmt.Sprint(want) {
			t.Errorf("read %d kept %d dropped %v; want 9, 4, %v", ts.Read, ts.Kept, ts.Dropped, want)
		}
		wantSamples := []string{
			path + ":2: wrong column count: want 7 columns, got 6",
			path + `:3: bad integer: column time_stamp: "zero"`,
			path + ":4: empty line: no fields",
			path + ":5: wrong column count: want 7 columns, got 8",
			path + `:6: bad integer: column mem_size: "100.5"`,
		}
		if fmt.Sprint(ts.Samples) != fmt.Sprint(wantSamples) {
			t.Errorf("samples:\n%s\nwant:\n%s", strings.Join(ts.Samples, "\n"), strings.Join(wantSamples, "\n"))
		}
		rows := readTable(t, filepath.Join(out, MachineMeta+".arrow"), MachineMeta)
		if got := fmt.Sprint(rows[3]); got != "[m_8 1000 219 17 96 100 IMPORT_X]" {
			t.Errorf("last row = %s; want [m_8 1000 219 17 96 100 IMPORT_X]", got)
		}
	})
	t.Run("strict", func(t *testing.T) {
		out := t.TempDir()
		_, err := Convert(context.Background(), in, out, ConvertOptions{Strict: true, Logger: quiet})
		var me *MalformedError
		if !errors.As(err, &me) || me.File != path || me.Line != 2 || me.Reason != ReasonColumns {
			t.Fatalf("error %v; want a MalformedError for %s line 2, %s", err, path, ReasonColumns)
		}
		if !strings.Contains(err.Error(), path+":2:") {
			t.Errorf("error %q does not name file and line", err)
		}
		if _, err := os.Stat(filepath.Join(out, MachineMeta+".arrow")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a failed conversion left %s.arrow behind (stat: %v)", MachineMeta, err)
		}
	})
}

func TestConvertInputErrors(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"no tables", map[string]string{"notes.txt": "x"}, "no trace tables"},
		{"two inputs for one table", map[string]string{"machine_meta.csv": "", "machine_meta.csv.gz": ""}, "two inputs for table machine_meta"},
		{"not gzip", map[string]string{"batch_task.csv.gz": "plain text"}, "batch_task.csv.gz"},
		{"archive without csv", map[string]string{"batch_task.tar.gz": ""}, "batch_task.tar.gz"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := t.TempDir()
			for name, data := range tc.files {
				if err := os.WriteFile(filepath.Join(in, name), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Convert(context.Background(), in, t.TempDir(), ConvertOptions{Logger: quiet})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v; want one containing %q", err, tc.want)
			}
		})
	}
}

// A corrupt or truncated Arrow file is an error that names the file, never
// a panic, with or without a manifest to check it against.
func TestCorruptArrow(t *testing.T) {
	src := t.TempDir()
	if _, err := Convert(context.Background(), fixtures, src, ConvertOptions{BatchRows: 8, Logger: quiet}); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(filepath.Join(src, MachineMeta+".arrow"))
	if err != nil {
		t.Fatal(err)
	}
	flip := func(at int) []byte {
		b := bytes.Clone(good)
		for i := at; i < at+16 && i < len(b); i++ {
			b[i] ^= 0x5a
		}
		return b
	}
	other, err := os.ReadFile(filepath.Join(src, BatchTask+".arrow"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		data     []byte
		manifest bool
		want     string
	}{
		{"truncated in the middle", good[:len(good)/2], true, "manifest says"},
		{"truncated in the middle, no manifest", good[:len(good)/2], false, "truncated"},
		{"end marker cut off, no manifest", good[:len(good)-8], false, "no end-of-stream marker"},
		{"bytes changed in a batch", flip(len(good) / 2), true, "checksum"},
		{"schema message garbled, no manifest", flip(8), false, "machine_meta.arrow"},
		{"message header garbled, no manifest", flip(len(good)/2 + bytes.Index(good[len(good)/2:], []byte{0xff, 0xff, 0xff, 0xff})), false, "machine_meta.arrow"},
		{"empty file, no manifest", nil, false, "truncated"},
		{"another table's file, no manifest", other, false, "want 7 for table machine_meta"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, MachineMeta+".arrow")
			if err := os.WriteFile(path, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			if tc.manifest {
				b, _ := os.ReadFile(filepath.Join(src, ManifestFile))
				if err := os.WriteFile(filepath.Join(dir, ManifestFile), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var err error
			if tc.manifest {
				_, err = Load(dir, LoadOptions{})
			} else { // Load refuses a folder without a manifest: read the file itself
				err = scanArrowFile(context.Background(), path, defs[MachineMeta], nil, allRows, 2,
					func(int, int, arrow.Record) error { return nil })
			}
			if err == nil {
				t.Fatal("loaded a corrupt file without error")
			}
			t.Log(err)
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q; want it to name %s and contain %q", err, path, tc.want)
			}
		})
	}
}

// genReader produces batch_instance CSV rows on the fly, without holding
// more than one row.
type genReader struct {
	left int64
	i    int64
	buf  []byte
	off  int
}

func (g *genReader) Read(p []byte) (int, error) {
	if g.off == len(g.buf) {
		if g.left <= 0 {
			return 0, io.EOF
		}
		g.i++
		g.buf = g.buf[:0]
		g.buf = append(g.buf, "ins_"...)
		g.buf = strconv.AppendInt(g.buf, g.i, 10)
		g.buf = append(g.buf, ",M"...)
		g.buf = strconv.AppendInt(g.buf, g.i%7, 10)
		g.buf = append(g.buf, ",j_"...)
		g.buf = strconv.AppendInt(g.buf, g.i/5, 10)
		g.buf = append(g.buf, ",1,Terminated,"...)
		g.buf = strconv.AppendInt(g.buf, 100000+g.i%600000, 10)
		g.buf = append(g.buf, ',')
		g.buf = strconv.AppendInt(g.buf, 100030+g.i%600000, 10)
		g.buf = append(g.buf, ",m_"...)
		g.buf = strconv.AppendInt(g.buf, g.i%4034, 10)
		g.buf = append(g.buf, ",1,1,37.5,61.25,0.41,0.52\n"...)
		g.off = 0
		g.left -= int64(len(g.buf))
	}
	n := copy(p, g.buf[g.off:])
	g.off += n
	return n, nil
}

// convertGenerated converts size bytes of generated batch_instance CSV to a
// discarded Arrow stream and returns the summary and the peak heap in use
// (sampled every millisecond).
func convertGenerated(tb testing.TB, size int64) (TableSummary, uint64) {
	tb.Helper()
	stop := make(chan struct{})
	peak := make(chan uint64)
	go func() {
		var p uint64
		for {
			if h := heapInUse(); h > p {
				p = h
			}
			select {
			case <-stop:
				peak <- p
				return
			default:
				sleepMillisecond()
			}
		}
	}()
	var ts TableSummary
	err := encodeTable(context.Background(), defs[BatchInstance], io.Discard, "discard", ConvertOptions{BatchRows: 1 << 16, MaxSamples: 10},
		&ts, func(fn func(string, io.Reader) error) error { return fn("generated", &genReader{left: size}) })
	close(stop)
	p := <-peak
	if err != nil {
		tb.Fatal(err)
	}
	return ts, p
}

// Memory stays bounded whatever the input size: the peak heap while
// converting a generated 1 GiB input stays under 256 MiB (64 MiB of input
// in -short mode).
func TestConvertBoundedMemory(t *testing.T) {
	size := int64(1 << 30)
	if testing.Short() {
		size = 64 << 20
	}
	ts, peak := convertGenerated(t, size)
	if ts.Kept == 0 || ts.DroppedTotal() != 0 {
		t.Fatalf("kept %d rows, dropped %d; want all rows kept", ts.Kept, ts.DroppedTotal())
	}
	t.Logf("%d MiB of CSV, %d rows: peak heap %d MiB", size>>20, ts.Kept, peak>>20)
	if peak >= 256<<20 {
		t.Errorf("peak heap %d MiB; want under 256 MiB", peak>>20)
	}
}

func TestSchema(t *testing.T) {
	for _, table := range Tables {
		s, err := Schema(table)
		if err != nil {
			t.Fatal(err)
		}
		if s.NumFields() != len(defs[table].cols) || s.Field(0).Name != defs[table].cols[0].name {
			t.Errorf("%s: %d fields starting %s", table, s.NumFields(), s.Field(0).Name)
		}
	}
	// schema.txt: batch_instance has 14 columns, the 11th is cpu_avg (double)
	s, _ := Schema(BatchInstance)
	if s.NumFields() != 14 || s.Field(10).Name != "cpu_avg" || s.Field(10).Type.ID() != arrow.FLOAT64 {
		t.Errorf("batch_instance schema %v", s)
	}
	if _, err := Schema("machine_events"); err == nil || !strings.Contains(err.Error(), "machine_events") {
		t.Errorf("unknown table: error %v", err)
	}
}

// A conversion made with another manifest version (version 1 had CRC-32C
// checksums) is refused with an error that names the file and says what to
// do, rather than reported as corrupt.
func TestOldManifestRefused(t *testing.T) {
	dir := t.TempDir()
	if _, err := Convert(context.Background(), fixtures, dir, ConvertOptions{Logger: quiet}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, ManifestFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	// version 1 as it was written: CRC-32C checksums under "crc32c"
	old := bytes.Replace(b, []byte(`"version": 2`), []byte(`"version": 1`), 1)
	old = bytes.ReplaceAll(old, []byte(`"crc32":`), []byte(`"crc32c":`))
	if bytes.Equal(old, b) || !bytes.Contains(old, []byte(`"crc32c":`)) {
		t.Fatalf("no version 2 or no checksum in the manifest:\n%s", b)
	}
	if err := os.WriteFile(p, old, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Load(dir, LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "convert the trace again") {
		t.Errorf("Load with a version-1 manifest: %v; want an error naming %s and saying to convert again", err, p)
	}
}
