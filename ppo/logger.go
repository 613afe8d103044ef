package ppo

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kubesim/kubesim/internal/atomicfile"
)

// File names inside a run folder.
const (
	// MonitorFile holds one row per finished training episode (see Monitor).
	MonitorFile = "monitor.csv"
	// ProgressFile holds one row per update (see Logger).
	ProgressFile = "progress.csv"
)

// LoggerOptions configures NewLogger. The zero value logs quietly to new files.
type LoggerOptions struct {
	// EnvID is monitor.csv's env_id; empty means "kubesim".
	EnvID string
	// Verbose, if not nil, receives an SB3-like table of the scalars at every Dump.
	Verbose io.Writer
	// Resume continues an existing progress.csv and monitor.csv (each one that does not exist
	// is created); without it, both are replaced by new files. TensorBoard always gets a new event file,
	// which TensorBoard shows as the continuation of the old one's curves.
	Resume bool
	// DropAfter, with Resume, drops the progress.csv rows past this many
	// environment steps (time/total_timesteps): rows of updates logged
	// after the checkpoint being resumed, by a run killed between its
	// progress row and its checkpoint, which the resumed run logs again.
	// 0 drops nothing.
	DropAfter int64
	// Clock is the wall clock for monitor times and TensorBoard wall_time; nil means time.Now.
	Clock func() time.Time
}

// Logger writes a run folder's logs: monitor.csv (Episode), progress.csv and TensorBoard
// scalars (Record, then Dump once per update).
//
// progress.csv's columns are the sorted union of every key dumped so far. When a Dump brings
// a key not seen before, the file is rewritten (to a temporary file renamed over it) with the
// new column, earlier rows leaving it empty, as SB3's CSV writer does; otherwise the row is
// appended as one whole line. Values are written in their shortest round-trip form, with
// "nan", "inf", "-inf" as Python writes them; an empty cell means the key was not recorded.
//
// A Logger is not safe for concurrent use.
type Logger struct {
	dir       string
	dropAfter int64 // LoggerOptions.DropAfter
	clock     func() time.Time
	verbose   io.Writer
	monitor   *Monitor
	tb        *TBWriter
	progress  *os.File // progress.csv opened for appending
	columns   []string // progress.csv's header
	kv        map[string]float64
	keys      []string // scratch: sorted keys of kv
	line      []byte   // scratch: one progress row
	closed    bool
}

// NewLogger creates dir if needed and opens its monitor.csv, progress.csv and a new
// TensorBoard event file.
func NewLogger(dir string, opts LoggerOptions) (*Logger, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("logger: %w", err)
	}
	l := &Logger{dir: dir, dropAfter: opts.DropAfter, clock: opts.Clock, verbose: opts.Verbose, kv: map[string]float64{}}
	if l.clock == nil {
		l.clock = time.Now
	}
	envID := opts.EnvID
	if envID == "" {
		envID = "kubesim"
	}
	var err error
	defer func() {
		if err != nil {
			l.closeAll()
		}
	}()
	monitorPath := filepath.Join(dir, MonitorFile)
	if opts.Resume && exists(monitorPath) {
		l.monitor, err = ResumeMonitor(monitorPath)
	} else {
		l.monitor, err = NewMonitor(monitorPath, envID, l.clock())
	}
	if err != nil {
		return nil, err
	}
	if err = l.openProgress(opts.Resume); err != nil {
		return nil, err
	}
	if l.tb, err = NewTBWriter(dir); err != nil {
		return nil, err
	}
	l.tb.Clock = l.clock
	return l, nil
}

// Dir is the run folder.
func (l *Logger) Dir() string { return l.dir }

// Episode adds a monitor.csv row for an episode that ends now with total reward and length
// (environment steps). Rows reach the file at the next Dump.
func (l *Logger) Episode(reward float64, length int64) error {
	return l.monitor.Episode(reward, length, l.clock())
}

// Record sets key's value for the next Dump; recording a key again replaces its value.
func (l *Logger) Record(key string, v float64) { l.kv[key] = v }

// Dump writes the recorded values, in key order, as one progress.csv row and as TensorBoard
// scalars at step (environment steps), flushes monitor.csv and the event file, prints the
// table if verbose, and clears the recorded values. A Dump with nothing recorded only flushes.
// The step is not a column of its own: record time/total_timesteps for that.
func (l *Logger) Dump(step int64) error {
	if l.closed {
		return fmt.Errorf("logger %s: dump: %w", l.dir, os.ErrClosed)
	}
	l.keys = l.keys[:0]
	for k := range l.kv {
		l.keys = append(l.keys, k)
	}
	slices.Sort(l.keys)
	defer clear(l.kv)
	if len(l.keys) > 0 && l.keys[0] == "" {
		return fmt.Errorf("logger %s: dump at step %d: a value was recorded with an empty key", l.dir, step)
	}
	var errs []error
	if len(l.keys) > 0 {
		errs = append(errs, l.writeProgress())
		for _, k := range l.keys {
			if err := l.tb.Scalar(k, step, l.kv[k]); err != nil {
				errs = append(errs, err)
				break
			}
		}
	}
	errs = append(errs, l.tb.Flush(), l.monitor.Flush())
	if l.verbose != nil && len(l.keys) > 0 {
		if _, err := io.WriteString(l.verbose, l.table()); err != nil {
			errs = append(errs, fmt.Errorf("logger: printing table: %w", err))
		}
	}
	return errors.Join(errs...)
}

// Close flushes and closes every file; values recorded since the last Dump are dropped.
func (l *Logger) Close() error {
	if l.closed {
		return fmt.Errorf("logger %s: close: %w", l.dir, os.ErrClosed)
	}
	return l.closeAll()
}

// closeAll closes whatever is open.
func (l *Logger) closeAll() error {
	l.closed = true
	var errs []error
	if l.monitor != nil && l.monitor.f != nil {
		errs = append(errs, l.monitor.Close())
	}
	if l.tb != nil && l.tb.f != nil {
		errs = append(errs, l.tb.Close())
	}
	if l.progress != nil {
		if err := l.progress.Close(); err != nil {
			errs = append(errs, fmt.Errorf("logger: closing %s: %w", l.progress.Name(), err))
		}
		l.progress = nil
	}
	return errors.Join(errs...)
}

// openProgress opens progress.csv for appending: a new empty file, or with resume an
// existing one whose header becomes the column list.
func (l *Logger) openProgress(resume bool) error {
	path := filepath.Join(l.dir, ProgressFile)
	if resume && exists(path) {
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("logger: %w", err)
		}
		if err := cutPartialLine(path, b); err != nil {
			return fmt.Errorf("logger: %w", err)
		}
		if err := dropRowsAfter(path, l.dropAfter); err != nil {
			return fmt.Errorf("logger: %w", err)
		}
		p, err := ReadProgress(path)
		switch {
		case errors.Is(err, errEmptyProgress):
		case err != nil:
			return fmt.Errorf("logger: resuming: %w", err)
		default:
			l.columns = p.Keys
		}
	} else if err := writeFileAtomic(path, nil); err != nil {
		return fmt.Errorf("logger: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("logger: %w", err)
	}
	l.progress = f
	return nil
}

// writeProgress appends the row of l.keys to progress.csv, or rewrites the file with the
// widened header when some key is new.
func (l *Logger) writeProgress() error {
	if l.progress == nil { // an earlier rewrite could not reopen the file
		return fmt.Errorf("logger: %s is not open", filepath.Join(l.dir, ProgressFile))
	}
	widened := false
	for _, k := range l.keys {
		if !slices.Contains(l.columns, k) {
			widened = true
			break
		}
	}
	if !widened {
		l.line = l.appendRow(l.line[:0], l.columns)
		if _, err := l.progress.Write(l.line); err != nil {
			return fmt.Errorf("logger: writing %s: %w", l.progress.Name(), err)
		}
		return nil
	}
	path := l.progress.Name()
	old, err := ReadProgress(path)
	if err != nil && !errors.Is(err, errEmptyProgress) {
		return fmt.Errorf("logger: widening: %w", err)
	}
	columns := slices.Clone(l.columns)
	for _, k := range l.keys {
		if !slices.Contains(columns, k) {
			columns = append(columns, k)
		}
	}
	slices.Sort(columns)
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	if err := cw.Write(columns); err != nil {
		return fmt.Errorf("logger: header of %s: %w", path, err)
	}
	cw.Flush()
	if old != nil {
		var line []byte
		for i, row := range old.Rows {
			line = line[:0]
			for j, c := range columns {
				if j > 0 {
					line = append(line, ',')
				}
				if k := slices.Index(old.Keys, c); k >= 0 && !old.blank[i][k] {
					line = appendCSVFloat(line, row[k])
				}
			}
			buf.Write(append(line, '\n'))
		}
	}
	buf.Write(l.appendRow(nil, columns))
	if err := l.progress.Close(); err != nil {
		return fmt.Errorf("logger: closing %s: %w", path, err)
	}
	l.progress = nil
	werr := writeFileAtomic(path, buf.Bytes())
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return errors.Join(werr, fmt.Errorf("logger: reopening: %w", err))
	}
	l.progress = f
	if werr != nil {
		return fmt.Errorf("logger: %w", werr)
	}
	l.columns = columns
	return nil
}

// appendRow appends the recorded values in columns' order as one CSV line.
func (l *Logger) appendRow(b []byte, columns []string) []byte {
	for j, c := range columns {
		if j > 0 {
			b = append(b, ',')
		}
		if v, ok := l.kv[c]; ok {
			b = appendCSVFloat(b, v)
		}
	}
	return append(b, '\n')
}

// table renders the recorded values like SB3's stdout output: keys grouped by the prefix
// before their first '/', keys and values cut to 23 characters, integers without a decimal
// point and other values with 3 significant digits.
func (l *Logger) table() string {
	type row struct{ key, val string }
	var rows []row
	group := ""
	for _, k := range l.keys {
		if prefix, rest, ok := strings.Cut(k, "/"); ok && prefix != "" {
			if prefix+"/" != group {
				group = prefix + "/"
				rows = append(rows, row{truncate(group), ""})
			}
			rows = append(rows, row{truncate("   " + rest), truncate(formatTableValue(l.kv[k]))})
			continue
		}
		group = ""
		rows = append(rows, row{truncate(k), truncate(formatTableValue(l.kv[k]))})
	}
	kw, vw := 0, 0
	for _, r := range rows {
		kw = max(kw, utf8.RuneCountInString(r.key))
		vw = max(vw, utf8.RuneCountInString(r.val))
	}
	var sb strings.Builder
	dashes := strings.Repeat("-", kw+vw+7)
	sb.WriteString(dashes + "\n")
	for _, r := range rows {
		fmt.Fprintf(&sb, "| %s%s | %s%s |\n", r.key, strings.Repeat(" ", kw-utf8.RuneCountInString(r.key)),
			r.val, strings.Repeat(" ", vw-utf8.RuneCountInString(r.val)))
	}
	sb.WriteString(dashes + "\n")
	return sb.String()
}

// truncate cuts s to 23 characters, the last three being "...", as SB3's table does.
func truncate(s string) string {
	const maxLen = 23
	if utf8.RuneCountInString(s) <= maxLen {
		return s
	}
	r := []rune(s)
	return string(r[:maxLen-3]) + "..."
}

// formatTableValue prints integers (as floats) without a fraction, others like Python's
// "%.3g".
func formatTableValue(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// appendCSVFloat appends v in its shortest round-trip form, in plain notation between 1e-4
// and 1e16 and in exponent notation outside, like Python's repr; nan, inf and -inf as Python
// prints them.
func appendCSVFloat(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(b, "nan"...)
	case math.IsInf(v, 1):
		return append(b, "inf"...)
	case math.IsInf(v, -1):
		return append(b, "-inf"...)
	}
	if a := math.Abs(v); a == 0 || (a >= 1e-4 && a < 1e16) {
		return strconv.AppendFloat(b, v, 'f', -1, 64)
	}
	return strconv.AppendFloat(b, v, 'e', -1, 64)
}

// formatFloat is appendCSVFloat as a string.
func formatFloat(v float64) string { return string(appendCSVFloat(nil, v)) }

// round6 rounds to 6 decimals, like Python's round(x, 6) for the values logged here.
func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }

// unixSeconds is t in seconds since the Unix epoch.
func unixSeconds(t time.Time) float64 { return float64(t.Unix()) + float64(t.Nanosecond())/1e9 }

// exists reports whether path exists.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// cutPartialLine truncates the file at path, whose content is b, after its last newline.
func cutPartialLine(path string, b []byte) error {
	if len(b) == 0 || b[len(b)-1] == '\n' {
		return nil
	}
	keep := bytes.LastIndexByte(b, '\n') + 1
	slog.Warn("cutting a partial last line", "file", path, "bytes", len(b)-keep)
	if err := os.Truncate(path, int64(keep)); err != nil {
		return fmt.Errorf("cutting the partial last line of %s: %w", path, err)
	}
	return nil
}

// writeFileAtomic replaces path with data (internal/atomicfile).
func writeFileAtomic(path string, data []byte) error { return atomicfile.WriteBytes(path, data) }

// dropRowsAfter rewrites the progress file at path without the rows whose
// time/total_timesteps exceeds steps (0: keeps every row); a file without
// such rows is left as it is.
func dropRowsAfter(path string, steps int64) error {
	if steps <= 0 {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	lines := strings.SplitAfter(string(b), "\n")
	if len(lines) < 2 {
		return nil
	}
	col := slices.Index(strings.Split(strings.TrimRight(lines[0], "\r\n"), ","), keyTimesteps)
	if col < 0 {
		return nil
	}
	kept := lines[:1]
	for _, l := range lines[1:] {
		f := strings.Split(strings.TrimRight(l, "\r\n"), ",")
		if col < len(f) {
			if v, err := strconv.ParseFloat(f[col], 64); err == nil && v > float64(steps) {
				continue
			}
		}
		kept = append(kept, l)
	}
	if len(kept) == len(lines) {
		return nil
	}
	slog.Warn("dropping progress rows logged after the checkpoint being resumed", "file", path, "rows", len(lines)-len(kept), "after_steps", steps)
	return writeFileAtomic(path, []byte(strings.Join(kept, "")))
}
