package ppo

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// TensorBoard event files are TFRecord files: a sequence of records, each
//
//	uint64 length (little-endian)
//	uint32 masked CRC32C of the 8 length bytes
//	byte   data[length]
//	uint32 masked CRC32C of data
//
// whose data are serialised tensorflow.Event protocol buffers. No maintained, small Go library
// writes them (the Go packages found depend on TensorFlow's Go bindings or are unmaintained),
// so the few protobuf fields needed are encoded here by hand:
//
//	Event         { double wall_time = 1; int64 step = 2; string file_version = 3; Summary summary = 5; }
//	Summary       { repeated Value value = 1; }
//	Summary.Value { string tag = 1; float simple_value = 2; }   // simple_value is in a oneof
//
// The first record of a file holds file_version "brain.Event:2", which TensorBoard checks.

// tfFileVersion is the file_version of the first event of every event file.
const tfFileVersion = "brain.Event:2"

// tbAutoFlush is the buffered size above which Scalar writes its pending records.
const tbAutoFlush = 64 << 10

// crcMaskDelta is added to the rotated CRC by maskCRC.
const crcMaskDelta = 0xa282ead8

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maskCRC returns TFRecord's masked CRC32C of b: the CRC rotated right by 15 bits plus
// crcMaskDelta (modulo 2^32). Masking keeps a CRC stored inside CRC'd data from being trivial.
func maskCRC(b []byte) uint32 {
	c := crc32.Checksum(b, castagnoli)
	return ((c >> 15) | (c << 17)) + crcMaskDelta
}

// TBWriter writes scalar summaries to one TensorBoard event file, named
// events.out.tfevents.<unix seconds>.<hostname> (TensorBoard reads every file whose name
// contains "tfevents"), in the directory given to NewTBWriter.
//
// Records are buffered in memory and written whole by Flush (and by Scalar when the buffer
// passes 64 KiB), so a reader never sees a torn record unless the write itself fails. A
// TBWriter is not safe for concurrent use.
type TBWriter struct {
	// Clock gives each event's wall_time; nil means time.Now. Set it before the first Scalar,
	// Flush or Close: the file_version event is stamped lazily by the first of those.
	Clock func() time.Time

	path    string
	f       *os.File
	buf     []byte // whole records not yet written to f
	ev      []byte // scratch: the Event being encoded
	sum     []byte // scratch: the Summary inside it
	started bool   // the file_version event is in buf or f
}

// NewTBWriter creates dir if needed and a new event file in it. If a file of the same name
// already exists (two writers in the same second), a numeric suffix .1, .2, ... is added.
func NewTBWriter(dir string) (*TBWriter, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("tensorboard: creating %s: %w", dir, err)
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	base := filepath.Join(dir, "events.out.tfevents."+strconv.FormatInt(time.Now().Unix(), 10)+"."+host)
	path := base
	for i := 1; ; i++ {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			return &TBWriter{path: path, f: f}, nil
		}
		if !errors.Is(err, os.ErrExist) || i > 1000 {
			return nil, fmt.Errorf("tensorboard: creating event file: %w", err)
		}
		path = base + "." + strconv.Itoa(i)
	}
}

// Path is the event file's path.
func (w *TBWriter) Path() string { return w.path }

// Scalar records value v of tag at step (TensorBoard's x axis; kubesim uses environment
// steps). TensorBoard stores scalars as float32, so v is rounded to the nearest float32.
func (w *TBWriter) Scalar(tag string, step int64, v float64) error {
	if w.f == nil {
		return fmt.Errorf("tensorboard: scalar %q: %w", tag, os.ErrClosed)
	}
	if tag == "" {
		return errors.New("tensorboard: scalar with an empty tag")
	}
	w.start()
	w.sum = w.sum[:0]
	// Summary.value (field 1, length-delimited) holding one Value.
	valueLen := 1 + varintLen(uint64(len(tag))) + len(tag) + 1 + 4
	w.sum = appendTag(w.sum, 1, wireBytes)
	w.sum = binary.AppendUvarint(w.sum, uint64(valueLen))
	w.sum = appendTag(w.sum, 1, wireBytes) // Value.tag
	w.sum = binary.AppendUvarint(w.sum, uint64(len(tag)))
	w.sum = append(w.sum, tag...)
	w.sum = appendTag(w.sum, 2, wireFixed32) // Value.simple_value, always written (oneof)
	w.sum = binary.LittleEndian.AppendUint32(w.sum, math.Float32bits(float32(v)))

	w.ev = w.beginEvent(step)
	w.ev = appendTag(w.ev, 5, wireBytes) // Event.summary
	w.ev = binary.AppendUvarint(w.ev, uint64(len(w.sum)))
	w.ev = append(w.ev, w.sum...)
	w.buf = appendRecord(w.buf, w.ev)
	if len(w.buf) >= tbAutoFlush {
		return w.Flush()
	}
	return nil
}

// Flush writes every buffered record to the file.
func (w *TBWriter) Flush() error {
	if w.f == nil {
		return fmt.Errorf("tensorboard: flush: %w", os.ErrClosed)
	}
	w.start()
	if len(w.buf) == 0 {
		return nil
	}
	_, err := w.f.Write(w.buf)
	w.buf = w.buf[:0]
	if err != nil {
		return fmt.Errorf("tensorboard: writing %s: %w", w.path, err)
	}
	return nil
}

// Close flushes and closes the file. Calls after the first return an error wrapping
// os.ErrClosed.
func (w *TBWriter) Close() error {
	if w.f == nil {
		return fmt.Errorf("tensorboard: close: %w", os.ErrClosed)
	}
	ferr := w.Flush()
	cerr := w.f.Close()
	w.f = nil
	if ferr != nil {
		return ferr
	}
	if cerr != nil {
		return fmt.Errorf("tensorboard: closing %s: %w", w.path, cerr)
	}
	return nil
}

// start buffers the file_version event if it is not written yet.
func (w *TBWriter) start() {
	if w.started {
		return
	}
	w.started = true
	w.ev = w.beginEvent(0)
	w.ev = appendTag(w.ev, 3, wireBytes) // Event.file_version
	w.ev = binary.AppendUvarint(w.ev, uint64(len(tfFileVersion)))
	w.ev = append(w.ev, tfFileVersion...)
	w.buf = appendRecord(w.buf, w.ev)
}

// beginEvent resets the event scratch buffer to an Event holding wall_time (now, in seconds
// since the Unix epoch) and step; a zero step is omitted as proto3 serialisers do.
func (w *TBWriter) beginEvent(step int64) []byte {
	now := time.Now
	if w.Clock != nil {
		now = w.Clock
	}
	t := now()
	wall := float64(t.Unix()) + float64(t.Nanosecond())/1e9
	ev := w.ev[:0]
	ev = appendTag(ev, 1, wireFixed64) // Event.wall_time
	ev = binary.LittleEndian.AppendUint64(ev, math.Float64bits(wall))
	if step != 0 {
		ev = appendTag(ev, 2, wireVarint) // Event.step; negative steps take 10 bytes
		ev = binary.AppendUvarint(ev, uint64(step))
	}
	return ev
}

// Protocol-buffer wire types.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// appendTag appends the key of field num with wire type typ.
func appendTag(b []byte, num, typ int) []byte {
	return binary.AppendUvarint(b, uint64(num)<<3|uint64(typ))
}

// varintLen is the length of x as a protobuf varint.
func varintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

// appendRecord appends data framed as one TFRecord record.
func appendRecord(b, data []byte) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(len(data)))
	b = binary.LittleEndian.AppendUint32(b, maskCRC(b[len(b)-8:]))
	b = append(b, data...)
	return binary.LittleEndian.AppendUint32(b, maskCRC(data))
}
