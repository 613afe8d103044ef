package dataset

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
)

// synthWriters holds the six CSV files being written, each to a temporary
// name renamed into place by commit.
type synthWriters struct {
	files []*os.File
	bufs  map[string]*bufio.Writer
	dir   string
}

func newSynthWriters(dir string) (*synthWriters, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating synth output: %w", err)
	}
	sw := &synthWriters{bufs: make(map[string]*bufio.Writer), dir: dir}
	for _, t := range Tables {
		f, err := os.CreateTemp(dir, "."+t+".csv.*.tmp")
		if err != nil {
			sw.abort()
			return nil, fmt.Errorf("creating synth output: %w", err)
		}
		sw.files = append(sw.files, f)
		sw.bufs[t] = bufio.NewWriterSize(f, 1<<18)
	}
	return sw, nil
}

func (sw *synthWriters) abort() {
	for _, f := range sw.files {
		f.Close()
		os.Remove(f.Name())
	}
}

func (sw *synthWriters) commit() error {
	for i, t := range Tables {
		f := sw.files[i]
		if err := sw.bufs[t].Flush(); err != nil {
			sw.abort()
			return fmt.Errorf("writing %s: %w", t, err)
		}
		if err := f.Chmod(0o644); err != nil {
			sw.abort()
			return fmt.Errorf("writing %s: %w", t, err)
		}
		if err := f.Close(); err != nil {
			sw.abort()
			return fmt.Errorf("writing %s: %w", t, err)
		}
	}
	for i, t := range Tables {
		if err := os.Rename(sw.files[i].Name(), filepath.Join(sw.dir, t+".csv")); err != nil {
			sw.abort()
			return fmt.Errorf("writing %s: %w", t, err)
		}
	}
	return nil
}

// row builds one CSV line.
type row struct {
	b []byte
	n int // fields so far
}

func (r *row) reset() *row { r.b, r.n = r.b[:0], 0; return r }
func (r *row) sep() {
	if r.n > 0 {
		r.b = append(r.b, ',')
	}
	r.n++
}
func (r *row) s(v string) *row { r.sep(); r.b = append(r.b, v...); return r }
func (r *row) i(v int64) *row  { r.sep(); r.b = strconv.AppendInt(r.b, v, 10); return r }
func (r *row) empty() *row     { r.sep(); return r }

// f writes v rounded to two decimals, as the trace does.
func (r *row) f(v float64) *row {
	r.sep()
	r.b = strconv.AppendFloat(r.b, math.Round(v*100)/100, 'f', -1, 64)
	return r
}
func (r *row) to(w io.Writer) error { r.b = append(r.b, '\n'); _, err := w.Write(r.b); return err }
