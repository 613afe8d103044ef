package ppo

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// tbValue is one decoded Summary.Value.
type tbValue struct {
	Tag    string
	Simple float32
}

// tbEvent is one decoded Event; fields absent from the record keep their zero values.
type tbEvent struct {
	WallTime    float64
	Step        int64
	FileVersion string
	Values      []tbValue
}

// readRecords splits a TFRecord stream into record payloads, checking both masked CRCs of
// every record. It is the test's independent reader: it shares nothing with the writer but
// the standard library's CRC32C table.
func readRecords(b []byte) ([][]byte, error) {
	table := crc32.MakeTable(crc32.Castagnoli)
	masked := func(p []byte) uint32 {
		c := crc32.Checksum(p, table)
		return (c>>15 | c<<17) + 0xa282ead8
	}
	var recs [][]byte
	for off := 0; off < len(b); {
		if len(b)-off < 12 {
			return nil, fmt.Errorf("record at byte %d: truncated header", off)
		}
		hdr := b[off : off+8]
		n := binary.LittleEndian.Uint64(hdr)
		if got, want := binary.LittleEndian.Uint32(b[off+8:]), masked(hdr); got != want {
			return nil, fmt.Errorf("record at byte %d: length crc %#x, want %#x", off, got, want)
		}
		off += 12
		if uint64(len(b)-off) < n+4 {
			return nil, fmt.Errorf("record at byte %d: truncated data", off)
		}
		data := b[off : off+int(n)]
		if got, want := binary.LittleEndian.Uint32(b[off+int(n):]), masked(data); got != want {
			return nil, fmt.Errorf("record at byte %d: data crc %#x, want %#x", off, got, want)
		}
		recs = append(recs, data)
		off += int(n) + 4
	}
	return recs, nil
}

// protoFields calls fn for each field of a protobuf message; v holds the varint or fixed
// value, p the bytes of a length-delimited field.
func protoFields(b []byte, fn func(num int, typ int, v uint64, p []byte) error) error {
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			return errors.New("bad field key")
		}
		b = b[n:]
		num, typ := int(key>>3), int(key&7)
		var v uint64
		var p []byte
		switch typ {
		case 0:
			v, n = binary.Uvarint(b)
			if n <= 0 {
				return fmt.Errorf("field %d: bad varint", num)
			}
			b = b[n:]
		case 1:
			if len(b) < 8 {
				return fmt.Errorf("field %d: short fixed64", num)
			}
			v, b = binary.LittleEndian.Uint64(b), b[8:]
		case 2:
			l, n := binary.Uvarint(b)
			if n <= 0 || uint64(len(b)-n) < l {
				return fmt.Errorf("field %d: bad length", num)
			}
			p, b = b[n:n+int(l)], b[n+int(l):]
		case 5:
			if len(b) < 4 {
				return fmt.Errorf("field %d: short fixed32", num)
			}
			v, b = uint64(binary.LittleEndian.Uint32(b)), b[4:]
		default:
			return fmt.Errorf("field %d: unsupported wire type %d", num, typ)
		}
		if err := fn(num, typ, v, p); err != nil {
			return err
		}
	}
	return nil
}

// decodeEvent decodes the Event fields kubesim writes, rejecting wrong wire types.
func decodeEvent(b []byte) (tbEvent, error) {
	var ev tbEvent
	err := protoFields(b, func(num, typ int, v uint64, p []byte) error {
		switch {
		case num == 1 && typ == 1:
			ev.WallTime = math.Float64frombits(v)
		case num == 2 && typ == 0:
			ev.Step = int64(v)
		case num == 3 && typ == 2:
			ev.FileVersion = string(p)
		case num == 5 && typ == 2:
			return protoFields(p, func(num, typ int, _ uint64, p []byte) error {
				if num != 1 || typ != 2 {
					return fmt.Errorf("summary field %d type %d", num, typ)
				}
				var val tbValue
				err := protoFields(p, func(num, typ int, v uint64, p []byte) error {
					switch {
					case num == 1 && typ == 2:
						val.Tag = string(p)
					case num == 2 && typ == 5:
						val.Simple = math.Float32frombits(uint32(v))
					default:
						return fmt.Errorf("value field %d type %d", num, typ)
					}
					return nil
				})
				ev.Values = append(ev.Values, val)
				return err
			})
		default:
			return fmt.Errorf("event field %d type %d", num, typ)
		}
		return nil
	})
	return ev, err
}

// readEventFile reads and decodes a whole event file, failing the test on any error.
func readEventFile(t *testing.T, path string) []tbEvent {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := readRecords(b)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	evs := make([]tbEvent, len(recs))
	for i, r := range recs {
		if evs[i], err = decodeEvent(r); err != nil {
			t.Fatalf("%s record %d: %v", path, i, err)
		}
	}
	return evs
}

// stepClock returns a clock that starts at start and advances by dt on every call.
func stepClock(start time.Time, dt time.Duration) func() time.Time {
	t := start.Add(-dt)
	return func() time.Time {
		t = t.Add(dt)
		return t
	}
}

func TestMaskCRC(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want uint32
	}{
		// CRC32C("") = 0; rotating 0 gives 0; 0 + 0xa282ead8 = 0xa282ead8.
		{name: "empty", in: "", want: 0xa282ead8},
		// CRC32C("123456789") = 0xe3069283, the Castagnoli check value.
		// crc>>15: 0xe3069283>>16 = 0xe306, one more bit from 0x9283 (top bit 1): 0x1c60d.
		// crc<<17 mod 2^32: low 15 bits 0x9283&0x7fff = 0x1283, <<17 = 0x25060000.
		// rotated = 0x25060000|0x0001c60d = 0x2507c60d; + 0xa282ead8 = 0xc78ab0e5.
		// (A bitwise CRC32C written in Python, polynomial 0x82f63b78, agrees.)
		{name: "check string", in: "123456789", want: 0xc78ab0e5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := maskCRC([]byte(tc.in)); got != tc.want {
				t.Errorf("maskCRC(%q) = %#x; want %#x", tc.in, got, tc.want)
			}
		})
	}
}

// TestTBWriterGoldenBytes compares a whole file with bytes derived outside Go.
func TestTBWriterGoldenBytes(t *testing.T) {
	// Record 1, the file_version event, 24 bytes of data:
	//   09 + 1.5 as a little-endian double (0x3ff8000000000000)  wall_time = 1.5
	//   1a 0d "brain.Event:2"                                     file_version (step 0 omitted)
	// framed as 18 00.. (length 24) + masked CRC of the length + data + masked CRC of the data.
	// Record 2, the scalar event, 26 bytes:
	//   09 + 2.25 as a double (0x4002000000000000)                wall_time = 2.25
	//   10 ac 02                                                  step = 300 = 0b10_0101100
	//   2a 0c { 0a 0a { 0a 03 "a/b"  15 + 0.5 as float (0x3f000000) } }
	// The CRCs were computed with an independent bitwise CRC32C in Python.
	const want = "1800000000000000a37f4b22" +
		"09000000000000f83f1a0d627261696e2e4576656e743a32" + "2a28646c" +
		"1a00000000000000129bd82d" +
		"0900000000000002401" + "0ac022a0c0a0a0a03612f62150000003f" + "e6a7607a"
	dir := t.TempDir()
	w, err := NewTBWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	w.Clock = stepClock(time.Unix(1, 5e8), 750*time.Millisecond) // 1.5 s, then 2.25 s
	if err := w.Scalar("a/b", 300, 0.5); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	if hex.EncodeToString(got) != want {
		t.Errorf("file bytes\n got %x\nwant %s", got, want)
	}
}

func TestTBWriterRoundTrip(t *testing.T) {
	longTag := "train/" + strings.Repeat("x", 200) // tag length 206 needs a 2-byte varint
	type scalar struct {
		tag  string
		step int64
		v    float64
	}
	tests := []struct {
		name    string
		scalars []scalar
	}{
		{name: "none"},
		{name: "sb3 tags", scalars: []scalar{
			{"rollout/ep_rew_mean", 2048, -12.5},
			{"train/approx_kl", 2048, 0.0123},
			{"time/fps", 4096, 1500},
		}},
		{name: "step zero and negative", scalars: []scalar{{"a", 0, 1}, {"a", -3, 2}}},
		{name: "large step and long tag", scalars: []scalar{{longTag, 1 << 40, 3}}},
		{name: "special values", scalars: []scalar{
			{"inf", 1, math.Inf(1)}, {"neg", 2, math.Inf(-1)}, {"zero", 3, 0}, {"tiny", 4, 1e-30},
		}},
	}
	// More scalars than one auto-flush buffer holds (about 60 bytes each).
	var many []scalar
	for i := range 3000 {
		many = append(many, scalar{"train/loss", int64(i + 1), float64(i) / 7})
	}
	tests = append(tests, struct {
		name    string
		scalars []scalar
	}{name: "past auto-flush", scalars: many})

	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, err := NewTBWriter(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			w.Clock = stepClock(time.Unix(1_700_000_000, 0), time.Second)
			for _, s := range tc.scalars {
				if err := w.Scalar(s.tag, s.step, s.v); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			evs := readEventFile(t, w.Path())
			if len(evs) != len(tc.scalars)+1 {
				t.Fatalf("%d events; want %d", len(evs), len(tc.scalars)+1)
			}
			if evs[0].FileVersion != "brain.Event:2" || evs[0].WallTime != 1_700_000_000 || len(evs[0].Values) != 0 {
				t.Errorf("first event %+v; want file_version brain.Event:2 at wall time 1.7e9", evs[0])
			}
			for i, s := range tc.scalars {
				ev := evs[i+1]
				want := tbEvent{
					WallTime: float64(1_700_000_000 + i + 1),
					Step:     s.step,
					Values:   []tbValue{{Tag: s.tag, Simple: float32(s.v)}},
				}
				if ev.WallTime != want.WallTime || ev.Step != want.Step || ev.FileVersion != "" ||
					len(ev.Values) != 1 || ev.Values[0] != want.Values[0] {
					t.Fatalf("event %d = %+v; want %+v", i+1, ev, want)
				}
			}
		})
	}
}

// TestTBWriterNaN checks NaN separately: NaN != NaN defeats the struct comparison above.
func TestTBWriterNaN(t *testing.T) {
	w, err := NewTBWriter(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Scalar("nan", 1, math.NaN()); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	evs := readEventFile(t, w.Path())
	if len(evs) != 2 || len(evs[1].Values) != 1 || !math.IsNaN(float64(evs[1].Values[0].Simple)) {
		t.Errorf("events %+v; want a NaN simple_value", evs)
	}
}

func TestTBReaderDetectsCorruption(t *testing.T) {
	w, err := NewTBWriter(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w.Clock = stepClock(time.Unix(10, 0), time.Second)
	if err := w.Scalar("rollout/ep_rew_mean", 2048, 1.25); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readRecords(good); err != nil {
		t.Fatalf("intact file: %v", err)
	}
	// The first record's data are 24 bytes (see TestTBWriterGoldenBytes: wall_time and
	// file_version), so it spans bytes 0..39 and the second record starts at byte 40.
	first := 8 + 4 + 24 + 4
	tests := []struct {
		name    string
		at      int // byte to flip; -1 truncates the file by one byte instead
		wantErr string
	}{
		{name: "length", at: 0, wantErr: "length crc"},
		{name: "length crc", at: 9, wantErr: "length crc"},
		{name: "data", at: 12 + 5, wantErr: "data crc"},
		{name: "data crc", at: first - 1, wantErr: "data crc"},
		{name: "second record data", at: first + 12 + 20, wantErr: "data crc"},
		{name: "truncated", at: -1, wantErr: "truncated"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := bytes.Clone(good)
			if tc.at < 0 {
				b = b[:len(b)-1]
			} else {
				b[tc.at] ^= 0x10
			}
			_, err := readRecords(b)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("readRecords(corrupted) error = %v; want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestTBWriterFileName(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "runs", "a") // created by NewTBWriter
	host, err := os.Hostname()
	if err != nil {
		host = "localhost"
	}
	pattern := regexp.MustCompile(`^events\.out\.tfevents\.[0-9]{10}\.` + regexp.QuoteMeta(host) + `(\.[0-9]+)?$`)
	seen := map[string]bool{}
	for i := range 3 { // three writers, most likely within one second: names must differ
		w, err := NewTBWriter(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(w.Path())
		if !pattern.MatchString(name) {
			t.Errorf("writer %d: file name %q does not match %v", i, name, pattern)
		}
		if seen[name] {
			t.Errorf("writer %d reused file name %q", i, name)
		}
		seen[name] = true
		if evs := readEventFile(t, w.Path()); len(evs) != 1 || evs[0].FileVersion != "brain.Event:2" {
			t.Errorf("empty writer's file holds %+v; want only the file_version event", evs)
		}
	}
}

func TestTBWriterErrors(t *testing.T) {
	w, err := NewTBWriter(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Scalar("", 1, 1); err == nil {
		t.Error("Scalar with an empty tag: no error")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"scalar": w.Scalar("a", 1, 1),
		"flush":  w.Flush(),
		"close":  w.Close(),
	} {
		if !errors.Is(err, os.ErrClosed) {
			t.Errorf("%s after Close: error %v; want os.ErrClosed", name, err)
		}
	}
	// A path under a regular file cannot be a directory.
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewTBWriter(filepath.Join(file, "sub")); err == nil {
		t.Error("NewTBWriter under a regular file: no error")
	}
}

func BenchmarkTBWriterScalar(b *testing.B) {
	w, err := NewTBWriter(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	b.ReportAllocs()
	var step int64
	for b.Loop() {
		step++
		if err := w.Scalar("rollout/ep_rew_mean", step, 1.5); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "scalars/s")
}

// TestTBWriterScalarAllocs: once its buffers have grown, Scalar allocates nothing, auto-flush
// included.
func TestTBWriterScalarAllocs(t *testing.T) {
	w, err := NewTBWriter(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.Clock = stepClock(time.Unix(1, 0), time.Millisecond)
	var step int64
	scalar := func() {
		step++
		if err := w.Scalar("train/value_loss", step, 0.5); err != nil {
			t.Fatal(err)
		}
	}
	for range 2000 { // grow buf past one auto-flush
		scalar()
	}
	if got := testing.AllocsPerRun(5000, scalar); got != 0 {
		t.Errorf("Scalar allocates %v times per call; want 0", got)
	}
}
