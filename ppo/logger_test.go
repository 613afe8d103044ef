package ppo

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestAppendCSVFloat(t *testing.T) {
	tests := []struct {
		name string
		v    float64
		want string // what Python's repr gives, but for integral values (Python adds ".0")
	}{
		{name: "zero", v: 0, want: "0"},
		{name: "integer", v: 2048, want: "2048"},
		{name: "negative", v: -12.5, want: "-12.5"},
		{name: "shortest", v: 0.1, want: "0.1"},
		{name: "third", v: 1.0 / 3, want: "0.3333333333333333"},
		{name: "smallest plain", v: 1e-4, want: "0.0001"},
		{name: "below plain", v: 9.9e-5, want: "9.9e-05"},
		{name: "largest plain", v: 123456789012345.6, want: "123456789012345.6"},
		{name: "above plain", v: 1e16, want: "1e+16"},
		{name: "nan", v: math.NaN(), want: "nan"},
		{name: "inf", v: math.Inf(1), want: "inf"},
		{name: "minus inf", v: math.Inf(-1), want: "-inf"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := formatFloat(tc.v); got != tc.want {
				t.Errorf("formatFloat(%v) = %q; want %q", tc.v, got, tc.want)
			}
		})
	}
}

// TestAppendCSVFloatRoundTrip: every written value parses back to the same float64.
func TestAppendCSVFloatRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		v := math.Float64frombits(r.Uint64())
		if math.IsNaN(v) {
			continue
		}
		s := formatFloat(v)
		got, err := strconv.ParseFloat(s, 64)
		if err != nil || got != v {
			t.Fatalf("formatFloat(%v) = %q parses to %v, %v; want %v", v, s, got, err, v)
		}
	}
}

func TestFormatTableValue(t *testing.T) {
	tests := []struct {
		name string
		v    float64
		want string // Python: f"{v:.3g}" for floats, str(v) for ints
	}{
		{name: "integer", v: 2048, want: "2048"},
		{name: "negative integer", v: -3, want: "-3"},
		{name: "three digits", v: 0.0123456, want: "0.0123"},
		{name: "rounds", v: -1.3749, want: "-1.37"},
		{name: "small", v: 0.00021, want: "0.00021"},
		{name: "exponent", v: 1234.5, want: "1.23e+03"},
		{name: "tiny", v: 1e-5, want: "1e-05"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := formatTableValue(tc.v); got != tc.want {
				t.Errorf("formatTableValue(%v) = %q; want %q", tc.v, got, tc.want)
			}
		})
	}
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// dumps records each map of values and dumps it at the step of its index (1-based, times
// 2048), checking after each Dump that progress.csv ends in a whole line.
func dumps(t *testing.T, l *Logger, kvs ...map[string]float64) {
	t.Helper()
	for i, kv := range kvs {
		for k, v := range kv {
			l.Record(k, v)
		}
		if err := l.Dump(int64(i+1) * 2048); err != nil {
			t.Fatal(err)
		}
		if got := readString(t, filepath.Join(l.Dir(), ProgressFile)); !strings.HasSuffix(got, "\n") {
			t.Fatalf("after dump %d progress.csv = %q; want it to end in a newline", i+1, got)
		}
	}
}

func TestLogger(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	var table bytes.Buffer
	l, err := NewLogger(dir, LoggerOptions{Verbose: &table, Clock: stepClock(time.Unix(5000, 0), time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Episode(7.5, 30); err != nil {
		t.Fatal(err)
	}
	dumps(t, l,
		map[string]float64{"time/total_timesteps": 2048, "train/loss": 0.5},
		// A new key widens the file: the first row gets an empty rollout/ep_rew_mean.
		map[string]float64{"time/total_timesteps": 4096, "train/loss": 0.25, "rollout/ep_rew_mean": -3},
		// A missing key leaves its cell empty.
		map[string]float64{"time/total_timesteps": 6144},
	)
	table.Reset()
	dumps(t, l, map[string]float64{}) // nothing recorded: no row, no table
	if table.Len() != 0 {
		t.Errorf("empty Dump printed %q; want nothing", table.String())
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	wantProgress := "rollout/ep_rew_mean,time/total_timesteps,train/loss\n" +
		",2048,0.5\n" +
		"-3,4096,0.25\n" +
		",6144,\n"
	if got := readString(t, filepath.Join(dir, ProgressFile)); got != wantProgress {
		t.Errorf("progress.csv =\n%s\nwant\n%s", got, wantProgress)
	}
	// The clock gave 5000 s to t_start (NewLogger), 5001 s to the episode's end.
	wantMonitor := "#{\"t_start\": 5000, \"env_id\": \"kubesim\"}\nr,l,t\n7.5,30,1\n"
	if got := readString(t, filepath.Join(dir, MonitorFile)); got != wantMonitor {
		t.Errorf("monitor.csv = %q; want %q", got, wantMonitor)
	}

	files, err := filepath.Glob(filepath.Join(dir, "events.out.tfevents.*"))
	if err != nil || len(files) != 1 {
		t.Fatalf("event files %v, %v; want one", files, err)
	}
	type scalar struct {
		step int64
		tag  string
		v    float32
	}
	var got []scalar
	for _, ev := range readEventFile(t, files[0])[1:] {
		for _, v := range ev.Values {
			got = append(got, scalar{ev.Step, v.Tag, v.Simple})
		}
	}
	want := []scalar{ // key order within a dump, step = dump number * 2048
		{2048, "time/total_timesteps", 2048}, {2048, "train/loss", 0.5},
		{4096, "rollout/ep_rew_mean", -3}, {4096, "time/total_timesteps", 4096}, {4096, "train/loss", 0.25},
		{6144, "time/total_timesteps", 6144},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("TensorBoard scalars\n got %v\nwant %v", got, want)
	}
}

func TestLoggerTable(t *testing.T) {
	var table bytes.Buffer
	l, err := NewLogger(t.TempDir(), LoggerOptions{Verbose: &table})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	dumps(t, l, map[string]float64{
		"time/total_timesteps": 4096, "train/loss": 0.25, "rollout/ep_rew_mean": -3,
		"train/policy_gradient_loss_long_name": -0.00493, "fps": 1500,
	})
	// Key column: the widest entry is "   total_timesteps" (18); the long key is cut to 20
	// characters plus "..." (23), which is wider still. Values: "-0.00493" (8).
	// Dashes: 23 + 8 + 7 = 38. "fps" has no '/' and sorts first, outside any group.
	want := strings.Join([]string{
		"--------------------------------------",
		"| fps                     | 1500     |",
		"| rollout/                |          |",
		"|    ep_rew_mean          | -3       |",
		"| time/                   |          |",
		"|    total_timesteps      | 4096     |",
		"| train/                  |          |",
		"|    loss                 | 0.25     |",
		"|    policy_gradient_l... | -0.00493 |",
		"--------------------------------------",
	}, "\n") + "\n"
	if got := table.String(); got != want {
		t.Errorf("table =\n%s\nwant\n%s", got, want)
	}
}

func TestLoggerResume(t *testing.T) {
	dir := t.TempDir()
	clock := stepClock(time.Unix(100, 0), time.Second)
	l, err := NewLogger(dir, LoggerOptions{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Episode(1, 5); err != nil { // ends at 101 s: t = 1
		t.Fatal(err)
	}
	dumps(t, l, map[string]float64{"time/total_timesteps": 2048, "train/loss": 0.5})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// A killed run left half a row behind.
	progress := filepath.Join(dir, ProgressFile)
	f, err := os.OpenFile(progress, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("4096,0."); err != nil {
		t.Fatal(err)
	}
	f.Close()

	// Resumed at 160 s: the resumed monitor does not read the clock (t_start is the file's),
	// so the episode ends at 160 s, t = 60.
	l, err = NewLogger(dir, LoggerOptions{Resume: true, Clock: stepClock(time.Unix(160, 0), time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Episode(2, 6); err != nil {
		t.Fatal(err)
	}
	l.Record("time/total_timesteps", 4096)
	l.Record("train/loss", 0.125)
	if err := l.Dump(4096); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	wantProgress := "time/total_timesteps,train/loss\n2048,0.5\n4096,0.125\n"
	if got := readString(t, progress); got != wantProgress {
		t.Errorf("resumed progress.csv = %q; want %q", got, wantProgress)
	}
	wantMonitor := "#{\"t_start\": 100, \"env_id\": \"kubesim\"}\nr,l,t\n1,5,1\n2,6,60\n"
	if got := readString(t, filepath.Join(dir, MonitorFile)); got != wantMonitor {
		t.Errorf("resumed monitor.csv = %q; want %q", got, wantMonitor)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*tfevents*")); len(files) != 2 {
		t.Errorf("event files %v; want two, one per run", files)
	}
}

func TestLoggerResumeFresh(t *testing.T) {
	// Resume in an empty folder creates the files.
	dir := t.TempDir()
	l, err := NewLogger(dir, LoggerOptions{Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	dumps(t, l, map[string]float64{"a": 1})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, filepath.Join(dir, ProgressFile)); got != "a\n1\n" {
		t.Errorf("progress.csv = %q; want %q", got, "a\n1\n")
	}
}

func TestLoggerOddKeys(t *testing.T) {
	dir := t.TempDir()
	l, err := NewLogger(dir, LoggerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dumps(t, l, map[string]float64{`a,b`: 1, `say "hi"`: math.NaN(), "z": math.Inf(-1)})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// encoding/csv quotes the header cells that need it; values never need quoting.
	want := "\"a,b\",\"say \"\"hi\"\"\",z\n1,nan,-inf\n"
	if got := readString(t, filepath.Join(dir, ProgressFile)); got != want {
		t.Errorf("progress.csv = %q; want %q", got, want)
	}
	p, err := ReadProgress(filepath.Join(dir, ProgressFile))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(p.Keys) != fmt.Sprint([]string{"a,b", `say "hi"`, "z"}) {
		t.Errorf("keys read back %q", p.Keys)
	}
}

func TestLoggerErrors(t *testing.T) {
	dir := t.TempDir()
	l, err := NewLogger(dir, LoggerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l.Record("", 1)
	l.Record("ok", 2)
	if err := l.Dump(1); err == nil || !strings.Contains(err.Error(), "empty key") {
		t.Errorf("Dump with an empty key: error %v; want one about the empty key", err)
	}
	if got := readString(t, filepath.Join(dir, ProgressFile)); got != "" {
		t.Errorf("after the failed Dump progress.csv = %q; want it empty", got)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Dump(2); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Dump after Close: error %v; want os.ErrClosed", err)
	}
	if err := l.Close(); !errors.Is(err, os.ErrClosed) {
		t.Errorf("second Close: error %v; want os.ErrClosed", err)
	}
	// Resuming a run whose progress.csv is not a progress file fails, naming the file.
	if err := os.WriteFile(filepath.Join(dir, ProgressFile), []byte("a,b\n1,x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewLogger(dir, LoggerOptions{Resume: true}); err == nil || !strings.Contains(err.Error(), ProgressFile) {
		t.Errorf("resume over a bad progress.csv: error %v; want one naming it", err)
	}
}

func TestReadProgress(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ProgressFile)
	if err := os.WriteFile(path, []byte("a,b\n1,\n,2.5\nnan,inf\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := ReadProgress(path)
	if err != nil {
		t.Fatal(err)
	}
	a, okA := p.Column("a")
	b, okB := p.Column("b")
	_, okC := p.Column("c")
	// Empty cells and nan read as NaN.
	if !okA || !okB || okC || len(a) != 3 || a[0] != 1 || !math.IsNaN(a[1]) || !math.IsNaN(a[2]) ||
		!math.IsNaN(b[0]) || b[1] != 2.5 || !math.IsInf(b[2], 1) {
		t.Errorf("columns a = %v (%v), b = %v (%v), c present %v; want [1 NaN NaN], [NaN 2.5 +Inf], no c", a, okA, b, okB, okC)
	}

	bad := []struct {
		name    string
		content string
		wantErr string
	}{
		{name: "empty", content: "", wantErr: "no header"},
		{name: "not a number", content: "a,b\n1,2\n3,x\n", wantErr: `line 3: column "b": "x" is not a number`},
		{name: "field count", content: "a,b\n1,2,3\n", wantErr: "line 2"},
		{name: "duplicate", content: "a,a\n1,2\n", wantErr: `column "a" appears twice`},
		{name: "empty name", content: "a,\n1,2\n", wantErr: "column 2 has an empty name"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".csv")
			if err := os.WriteFile(p, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadProgress(p)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), p) {
				t.Errorf("ReadProgress(%q) error = %v; want one naming the file and %q", tc.content, err, tc.wantErr)
			}
		})
	}
}

func BenchmarkLoggerDump(b *testing.B) {
	l, err := NewLogger(b.TempDir(), LoggerOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	keys := []string{"rollout/ep_rew_mean", "rollout/ep_len_mean", "train/loss", "train/policy_gradient_loss",
		"train/value_loss", "train/entropy_loss", "train/approx_kl", "train/clip_fraction",
		"train/explained_variance", "train/learning_rate", "time/fps", "time/total_timesteps"}
	b.ReportAllocs()
	var step int64
	for b.Loop() {
		step += 2048
		for i, k := range keys {
			l.Record(k, float64(step)/float64(i+1))
		}
		if err := l.Dump(step); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "dumps/s")
}

// ExampleLogger logs two updates of a run to a temporary folder and prints the table SB3 users
// know, then the resulting progress.csv.
func ExampleLogger() {
	dir, err := os.MkdirTemp("", "kubesim-run")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	l, err := NewLogger(dir, LoggerOptions{Verbose: os.Stdout})
	if err != nil {
		fmt.Println(err)
		return
	}
	for update := int64(1); update <= 2; update++ {
		steps := update * 2048
		l.Record("rollout/ep_rew_mean", -10+float64(update))
		l.Record("time/total_timesteps", float64(steps))
		l.Record("train/approx_kl", 0.0123/float64(update))
		if err := l.Dump(steps); err != nil {
			fmt.Println(err)
			return
		}
	}
	if err := l.Close(); err != nil {
		fmt.Println(err)
		return
	}
	b, err := os.ReadFile(filepath.Join(dir, ProgressFile))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(b))
	// Output:
	// -------------------------------
	// | rollout/           |        |
	// |    ep_rew_mean     | -9     |
	// | time/              |        |
	// |    total_timesteps | 2048   |
	// | train/             |        |
	// |    approx_kl       | 0.0123 |
	// -------------------------------
	// --------------------------------
	// | rollout/           |         |
	// |    ep_rew_mean     | -8      |
	// | time/              |         |
	// |    total_timesteps | 4096    |
	// | train/             |         |
	// |    approx_kl       | 0.00615 |
	// --------------------------------
	// rollout/ep_rew_mean,time/total_timesteps,train/approx_kl
	// -9,2048,0.0123
	// -8,4096,0.00615
}
