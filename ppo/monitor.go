package ppo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"time"
)

// monitorHeader is the column line of monitor.csv: episode reward, episode length in
// environment steps, wall-clock seconds from t_start to the episode's end.
const monitorHeader = "r,l,t"

// monitorAutoFlush is the buffered size above which Episode writes its pending rows.
const monitorAutoFlush = 32 << 10

// Monitor writes monitor.csv in Stable-Baselines3's format, so SB3's and rl-zoo's readers
// (results_plotter.load_results) read it:
//
//	#{"t_start": 1700000000.25, "env_id": "kubesim"}
//	r,l,t
//	-12.5,200,3.75
//
// Rows are buffered in memory and written as whole lines by Flush (and by Episode once 32 KiB
// are pending), so the file never ends in a partial row unless a write fails. A Monitor is
// not safe for concurrent use.
type Monitor struct {
	path    string
	f       *os.File
	tStart  time.Time
	pending []byte
}

// NewMonitor creates (or replaces, atomically) the monitor file at path with its comment line
// and header; start is t_start, from which each row's t is measured.
func NewMonitor(path, envID string, start time.Time) (*Monitor, error) {
	id, err := json.Marshal(envID)
	if err != nil {
		return nil, fmt.Errorf("monitor %s: env id: %w", path, err)
	}
	head := fmt.Sprintf("#{\"t_start\": %s, \"env_id\": %s}\n%s\n", formatFloat(unixSeconds(start)), id, monitorHeader)
	if err := writeFileAtomic(path, []byte(head)); err != nil {
		return nil, fmt.Errorf("monitor: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, fmt.Errorf("monitor: %w", err)
	}
	return &Monitor{path: path, f: f, tStart: start}, nil
}

// ResumeMonitor opens an existing monitor file to append rows to it, for a resumed run. Row
// times stay measured from the file's t_start. A partial last line (a run killed mid-write)
// is cut off, with a warning through slog.
func ResumeMonitor(path string) (*Monitor, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("monitor: %w", err)
	}
	comment, rest, ok := bytes.Cut(b, []byte{'\n'})
	if !ok || len(comment) == 0 || comment[0] != '#' {
		return nil, fmt.Errorf("monitor %s: line 1: want a #{\"t_start\": ...} comment line", path)
	}
	var meta struct {
		TStart *float64 `json:"t_start"`
	}
	if err := json.Unmarshal(comment[1:], &meta); err != nil {
		return nil, fmt.Errorf("monitor %s: line 1: %w", path, err)
	}
	if meta.TStart == nil {
		return nil, fmt.Errorf("monitor %s: line 1: no t_start", path)
	}
	if header, _, ok := bytes.Cut(rest, []byte{'\n'}); !ok || string(header) != monitorHeader {
		return nil, fmt.Errorf("monitor %s: line 2: header %q, want %q", path, header, monitorHeader)
	}
	if err := cutPartialLine(path, b); err != nil {
		return nil, fmt.Errorf("monitor: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, fmt.Errorf("monitor: %w", err)
	}
	sec, frac := math.Modf(*meta.TStart)
	start := time.Unix(int64(sec), int64(math.Round(frac*1e6))*1e3)
	return &Monitor{path: path, f: f, tStart: start}, nil
}

// Path is the monitor file's path.
func (m *Monitor) Path() string { return m.path }

// Start is t_start, the instant row times are measured from.
func (m *Monitor) Start() time.Time { return m.tStart }

// Episode adds the row of an episode that ended at end with total reward and length
// (environment steps). Reward and time are rounded to 6 decimals, as SB3 does.
func (m *Monitor) Episode(reward float64, length int64, end time.Time) error {
	if m.f == nil {
		return fmt.Errorf("monitor %s: episode: %w", m.path, os.ErrClosed)
	}
	m.pending = strconv.AppendFloat(m.pending, round6(reward), 'f', -1, 64)
	m.pending = append(m.pending, ',')
	m.pending = strconv.AppendInt(m.pending, length, 10)
	m.pending = append(m.pending, ',')
	m.pending = strconv.AppendFloat(m.pending, round6(end.Sub(m.tStart).Seconds()), 'f', -1, 64)
	m.pending = append(m.pending, '\n')
	if len(m.pending) >= monitorAutoFlush {
		return m.Flush()
	}
	return nil
}

// Flush writes the pending rows.
func (m *Monitor) Flush() error {
	if m.f == nil {
		return fmt.Errorf("monitor %s: flush: %w", m.path, os.ErrClosed)
	}
	if len(m.pending) == 0 {
		return nil
	}
	_, err := m.f.Write(m.pending)
	m.pending = m.pending[:0]
	if err != nil {
		return fmt.Errorf("monitor: writing %s: %w", m.path, err)
	}
	return nil
}

// Close flushes and closes the file.
func (m *Monitor) Close() error {
	if m.f == nil {
		return fmt.Errorf("monitor %s: close: %w", m.path, os.ErrClosed)
	}
	ferr := m.Flush()
	cerr := m.f.Close()
	m.f = nil
	if ferr != nil {
		return ferr
	}
	if cerr != nil {
		return fmt.Errorf("monitor: closing %s: %w", m.path, cerr)
	}
	return nil
}
