package ppo

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
)

// runLogs writes the progress.csv and validation.csv of a TrainGPU,
// TrainGPUES or TrainES run, one flushed row at a time.
type runLogs struct {
	pf, vf *os.File
	p, v   *csv.Writer
}

// newRunLogs opens progress.csv and validation.csv in dir, with the
// headers header and valHeader unless resuming (then it appends).
func newRunLogs(dir string, resume bool, header, valHeader []string) (*runLogs, error) {
	flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if resume {
		flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND
	}
	l := &runLogs{}
	var err error
	if l.pf, err = os.OpenFile(filepath.Join(dir, "progress.csv"), flags, 0o644); err != nil {
		return nil, fmt.Errorf("progress log: %w", err)
	}
	if l.vf, err = os.OpenFile(filepath.Join(dir, "validation.csv"), flags, 0o644); err != nil {
		l.pf.Close()
		return nil, fmt.Errorf("validation log: %w", err)
	}
	l.p, l.v = csv.NewWriter(l.pf), csv.NewWriter(l.vf)
	if !resume {
		l.p.Write(header)
		l.v.Write(valHeader)
	}
	return l, nil
}

// progressRow writes one row of progress.csv and flushes it.
func (l *runLogs) progressRow(fields ...string) error {
	if err := writeRow(l.p, fields); err != nil {
		return fmt.Errorf("progress log: %w", err)
	}
	return nil
}

// validationRow writes one row of validation.csv and flushes it.
func (l *runLogs) validationRow(fields ...string) error {
	if err := writeRow(l.v, fields); err != nil {
		return fmt.Errorf("validation log: %w", err)
	}
	return nil
}

func writeRow(w *csv.Writer, fields []string) error {
	w.Write(fields)
	w.Flush()
	return w.Error()
}

// close closes both files; a second call does nothing.
func (l *runLogs) close() {
	if l.pf != nil {
		l.pf.Close()
		l.vf.Close()
		l.pf, l.vf = nil, nil
	}
}

func meanOf(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// fmtG formats a log value in 6 significant digits.
func fmtG(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
