package ppo

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMonitor(t *testing.T) {
	path := filepath.Join(t.TempDir(), MonitorFile)
	start := time.Unix(1_700_000_000, 250_000_000)
	m, err := NewMonitor(path, "kubesim/test", start)
	if err != nil {
		t.Fatal(err)
	}
	head := "#{\"t_start\": 1700000000.25, \"env_id\": \"kubesim/test\"}\nr,l,t\n"
	if got := readString(t, path); got != head {
		t.Fatalf("new monitor file = %q; want %q", got, head)
	}
	// Row 1: reward -12.5 over 200 steps, ending 3.75 s after t_start.
	// Row 2: 1.0000004 rounds to 1 at 6 decimals; 1.6 us rounds to 0.000002 s.
	if err := m.Episode(-12.5, 200, start.Add(3750*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if err := m.Episode(1.0000004, 1, start.Add(1600*time.Nanosecond)); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, path); got != head {
		t.Errorf("before Flush the file = %q; want only the header %q", got, head)
	}
	if err := m.Flush(); err != nil {
		t.Fatal(err)
	}
	want := head + "-12.5,200,3.75\n1,1,0.000002\n"
	if got := readString(t, path); got != want {
		t.Errorf("after Flush the file = %q; want %q", got, want)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	// The comment line is the JSON SB3's load_results parses.
	var meta struct {
		TStart float64 `json:"t_start"`
		EnvID  string  `json:"env_id"`
	}
	line, _, _ := strings.Cut(want, "\n")
	if err := json.Unmarshal([]byte(line[1:]), &meta); err != nil || meta.TStart != 1_700_000_000.25 || meta.EnvID != "kubesim/test" {
		t.Errorf("comment line decodes to %+v, %v; want t_start 1700000000.25 and env_id kubesim/test", meta, err)
	}
	if err := m.Episode(1, 1, start); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Episode after Close: error %v; want os.ErrClosed", err)
	}
}

func TestMonitorAutoFlush(t *testing.T) {
	path := filepath.Join(t.TempDir(), MonitorFile)
	start := time.Unix(100, 0)
	m, err := NewMonitor(path, "x", start)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	// Each row "1,1,1\n" is 6 bytes, so 32 KiB are passed at row 5462 and the file then
	// holds every row so far, ending in a whole line.
	for range 6000 {
		if err := m.Episode(1, 1, start.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	got := readString(t, path)
	rows := strings.Count(got, "1,1,1\n")
	if rows != 5462 || !strings.HasSuffix(got, "\n") {
		t.Errorf("file holds %d rows (last byte %q); want 5462 whole rows", rows, got[len(got)-1])
	}
}

func TestResumeMonitor(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, MonitorFile)
	start := time.Unix(1000, 0)
	m, err := NewMonitor(path, "x", start)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Episode(2, 10, start.Add(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	// A killed run left half a row behind.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("3.5,1"); err != nil {
		t.Fatal(err)
	}
	f.Close()

	m, err = ResumeMonitor(path)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Start().Equal(start) {
		t.Errorf("resumed t_start %v; want %v", m.Start(), start)
	}
	// Resumed 60 s after t_start: t keeps counting from the file's t_start.
	if err := m.Episode(4, 20, start.Add(60*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	want := "#{\"t_start\": 1000, \"env_id\": \"x\"}\nr,l,t\n2,10,5\n4,20,60\n"
	if got := readString(t, path); got != want {
		t.Errorf("resumed file = %q; want %q", got, want)
	}

	bad := []struct {
		name    string
		content string
		wantErr string
	}{
		{name: "no comment", content: "r,l,t\n", wantErr: "line 1"},
		{name: "bad json", content: "#{t_start: 1}\nr,l,t\n", wantErr: "line 1"},
		{name: "no t_start", content: "#{\"env_id\": \"x\"}\nr,l,t\n", wantErr: "no t_start"},
		{name: "wrong header", content: "#{\"t_start\": 1}\nr,l,t,extra\n", wantErr: "line 2"},
		{name: "no header", content: "#{\"t_start\": 1}\n", wantErr: "line 2"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".csv")
			if err := os.WriteFile(p, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ResumeMonitor(p)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), p) {
				t.Errorf("ResumeMonitor(%q) error = %v; want one naming the file and %q", tc.content, err, tc.wantErr)
			}
		})
	}
	if _, err := ResumeMonitor(filepath.Join(dir, "missing.csv")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ResumeMonitor(missing) error = %v; want os.ErrNotExist", err)
	}
}

// TestMonitorEpisodeAllocs: once its buffer has grown, Episode allocates nothing, auto-flush
// included.
func TestMonitorEpisodeAllocs(t *testing.T) {
	start := time.Unix(100, 0)
	m, err := NewMonitor(filepath.Join(t.TempDir(), MonitorFile), "x", start)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	episode := func() {
		if err := m.Episode(-1.25, 17, start.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	for range 4000 { // grow pending past one auto-flush
		episode()
	}
	if got := testing.AllocsPerRun(10000, episode); got != 0 {
		t.Errorf("Episode allocates %v times per call; want 0", got)
	}
}

func BenchmarkMonitorEpisode(b *testing.B) {
	start := time.Unix(100, 0)
	m, err := NewMonitor(filepath.Join(b.TempDir(), MonitorFile), "x", start)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	b.ReportAllocs()
	for b.Loop() {
		if err := m.Episode(-1.25, 17, start.Add(time.Second)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "episodes/s")
}
