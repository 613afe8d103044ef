package dataset

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kubesim/kubesim/sim"
)

// Window is a span [From, To) of trace time, measured from the start of the
// trace (the trace's time stamp 0). To == 0 means "to the end of the trace".
type Window struct {
	Name     string
	From, To sim.Time
}

// String formats the window as "name [from, to)".
func (w Window) String() string {
	to := "end"
	if w.To != 0 {
		to = w.To.String()
	}
	if w.Name == "" {
		return fmt.Sprintf("[%s, %s)", w.From, to)
	}
	return fmt.Sprintf("%s [%s, %s)", w.Name, w.From, to)
}

// Validate rejects negative starts and empty or inverted windows.
func (w Window) Validate() error {
	switch {
	case w.From < 0:
		return fmt.Errorf("window %s: negative start", w)
	case w.To != 0 && w.To <= w.From:
		return fmt.Errorf("window %s: end must be after start", w)
	}
	return nil
}

// end returns To, with an open end as the largest time.
func (w Window) end() sim.Time {
	if w.To == 0 {
		return sim.Time(1<<63 - 1)
	}
	return w.To
}

// Contains reports whether trace time t lies in [From, To).
func (w Window) Contains(t sim.Time) bool { return t >= w.From && t < w.end() }

// Overlaps reports whether the two half-open windows share any instant.
func (w Window) Overlaps(o Window) bool { return w.From < o.end() && o.From < w.end() }

// Windows is a trace's three disjoint splits: training windows (episodes of
// the trainer), validation windows (checkpoint selection and early stopping)
// and test windows (read once, for the tables).
type Windows struct {
	Train []Window
	Val   []Window
	Test  []Window
}

// ErrOverlap is returned (wrapped) when windows of two different splits
// overlap.
var ErrOverlap = errors.New("windows of different splits overlap")

// splits lists the splits with their names, in time order.
func (ws Windows) splits() [3]struct {
	name string
	set  []Window
} {
	return [3]struct {
		name string
		set  []Window
	}{{"train", ws.Train}, {"validation", ws.Val}, {"test", ws.Test}}
}

// Validate checks every window, that names are unique and non-empty, and
// that no two windows of different splits overlap (windows of one split may).
func (ws Windows) Validate() error {
	seen := make(map[string]bool)
	sp := ws.splits()
	for _, s := range sp {
		for _, w := range s.set {
			if w.Name == "" {
				return fmt.Errorf("window %s: no name", w)
			}
			if seen[w.Name] {
				return fmt.Errorf("window name %q used twice", w.Name)
			}
			seen[w.Name] = true
			if err := w.Validate(); err != nil {
				return err
			}
		}
	}
	for i := range sp {
		for j := i + 1; j < len(sp); j++ {
			for _, a := range sp[i].set {
				for _, b := range sp[j].set {
					if a.Overlaps(b) {
						return fmt.Errorf("%w: %s %s and %s %s", ErrOverlap, sp[i].name, a, sp[j].name, b)
					}
				}
			}
		}
	}
	return nil
}

// Lookup returns the window called name.
func (ws Windows) Lookup(name string) (Window, bool) {
	for _, s := range ws.splits() {
		for _, w := range s.set {
			if w.Name == name {
				return w, true
			}
		}
	}
	return Window{}, false
}

// Split cuts [0, span) into consecutive windows of the given length (a last
// partial window is dropped): the last test of them are the test set (test-0,
// test-1, ...), the val before those the validation set (val-0, ...), and the
// earlier ones the training set (train-0, ...). Validating and testing on
// the latest windows keeps the future out of training, and the test windows
// out of checkpoint selection.
func Split(span, length sim.Time, val, test int) (Windows, error) {
	if length <= 0 {
		return Windows{}, fmt.Errorf("split: window length %s must be positive", length)
	}
	if span/length > maxWindows {
		return Windows{}, fmt.Errorf("split: span %s holds more than %d windows of %s", span, maxWindows, length)
	}
	n := int(span / length)
	if test < 1 || val < 1 || n < test+val+1 {
		return Windows{}, fmt.Errorf("split: span %s holds %d windows of %s, need at least %d for %d test, %d validation and one training window",
			span, n, length, test+val+1, test, val)
	}
	var ws Windows
	for i := range n {
		w := Window{From: sim.Time(i) * length, To: sim.Time(i+1) * length}
		switch {
		case i < n-test-val:
			w.Name = "train-" + strconv.Itoa(i)
			ws.Train = append(ws.Train, w)
		case i < n-test:
			w.Name = "val-" + strconv.Itoa(i-(n-test-val))
			ws.Val = append(ws.Val, w)
		default:
			w.Name = "test-" + strconv.Itoa(i-(n-test))
			ws.Test = append(ws.Test, w)
		}
	}
	return ws, ws.Validate()
}

// maxWindows bounds the windows Split makes: a trace of MaxTraceSeconds
// holds 400 whole days, or 9,600 hours; more is a span or a length gone
// wrong, refused before anything is allocated (and before Validate compares
// the windows of each pair of splits).
const maxWindows = 10_000

// Day is 24 hours of trace time.
const Day = 24 * sim.Hour

// DefaultWindows is the split used when a window is named train-i, val-i or
// test-i: whole days when the trace spans at least four days (the full
// 8-day trace gives train-0..train-4, val-0 and test-0, test-1), otherwise
// whole hours (a 2-day trace: 30 training, 6 validation and 12 test hours);
// a quarter of the windows (at least one) are test windows and an eighth
// (at least one) validation windows.
//
// The span is first rounded up to a whole hour, since the last time stamp of
// a trace falls just short of its nominal end.
func DefaultWindows(span sim.Time) (Windows, error) {
	span = (span + sim.Hour - 1) / sim.Hour * sim.Hour
	length := Day
	if span < 4*Day {
		length = sim.Hour
	}
	n := int(span / length)
	return Split(span, length, max(1, n/8), max(1, n/4))
}

// ParseWindow parses a window written as
//   - "all": the whole trace;
//   - "dayN": the N-th day, N >= 1 ("day1" is [0h, 24h));
//   - "FROM-TO" or "FROM-": Go durations ("30h-36h") or whole seconds
//     ("108000-129600"); an empty TO means to the end of the trace.
func ParseWindow(spec string) (Window, error) {
	s := strings.TrimSpace(spec)
	switch {
	case s == "all":
		return Window{Name: s}, nil
	case strings.HasPrefix(s, "day"):
		n, err := strconv.Atoi(s[3:])
		if err != nil || n < 1 {
			return Window{}, fmt.Errorf("window %q: want dayN with N >= 1", spec)
		}
		return Window{Name: s, From: sim.Time(n-1) * Day, To: sim.Time(n) * Day}, nil
	}
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return Window{}, fmt.Errorf("window %q: want all, dayN, train-N, val-N, test-N or FROM-TO", spec)
	}
	from, err := parseTraceTime(a)
	if err != nil {
		return Window{}, fmt.Errorf("window %q: start: %w", spec, err)
	}
	var to sim.Time
	if b != "" {
		if to, err = parseTraceTime(b); err != nil {
			return Window{}, fmt.Errorf("window %q: end: %w", spec, err)
		}
		// an explicit end is never "to the end of the trace" (To == 0):
		// "0h-0h" is empty, not the whole trace
		if to <= from {
			return Window{}, fmt.Errorf("window %q: empty or inverted: the end must be after the start", spec)
		}
	}
	w := Window{Name: s, From: from, To: to}
	return w, w.Validate()
}

// parseTraceTime reads whole seconds ("3600") or a Go duration ("1h").
func parseTraceTime(s string) (sim.Time, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 0 || n > 1<<40 {
			return 0, fmt.Errorf("%d seconds out of range", n)
		}
		return sim.Time(n) * sim.Second, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("want seconds or a duration such as 36h: %w", err)
	}
	if d < 0 {
		return 0, fmt.Errorf("negative time %s", d)
	}
	return sim.Time(d.Milliseconds()), nil
}

// ResolveWindow turns a window name into a window of the converted trace in
// dir: train-N, val-N and test-N come from DefaultWindows over the trace span in the
// manifest; other forms are as in ParseWindow. dir must hold a trace (a
// valid manifest), and a window that is not inside the trace is an error:
// it would replay nothing, or a fraction of what its length promises.
func ResolveWindow(dir, spec string) (Window, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return Window{}, fmt.Errorf("window %q needs the trace span: %w", spec, err)
	}
	span := sim.Time(m.Span) * sim.Second
	if strings.HasPrefix(spec, "train-") || strings.HasPrefix(spec, "val-") || strings.HasPrefix(spec, "test-") {
		ws, err := DefaultWindows(span)
		if err != nil {
			return Window{}, fmt.Errorf("window %q: %w", spec, err)
		}
		w, ok := ws.Lookup(spec)
		if !ok {
			return Window{}, fmt.Errorf("window %q: the trace has %d training, %d validation and %d test windows",
				spec, len(ws.Train), len(ws.Val), len(ws.Test))
		}
		return w, nil
	}
	w, err := ParseWindow(spec)
	if err != nil {
		return Window{}, err
	}
	// the span is the last time stamp: the trace covers [0, span+1s)
	switch end := span + sim.Second; {
	case w.From >= end:
		return Window{}, fmt.Errorf("window %q starts after the trace, which ends at %s", spec, end)
	case w.To > end:
		return Window{}, fmt.Errorf("window %q ends after the trace, which ends at %s (FROM- reads to its end)", spec, end)
	}
	return w, nil
}
