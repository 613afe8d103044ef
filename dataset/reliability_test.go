package dataset

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/internal/atomicdir"
	"github.com/kubesim/kubesim/sim"
)

// Tests of issue 16 ("nothing lost, nothing silently wrong"), one per defect.

// snapshot returns a folder's files and contents.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := make(map[string]string)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = string(b)
	}
	return m
}

func sameFolder(t *testing.T, dir string, want map[string]string) {
	t.Helper()
	got := snapshot(t, dir)
	if len(got) != len(want) {
		t.Fatalf("%s holds %d files; want the old %d", dir, len(got), len(want))
	}
	for name, b := range want {
		if got[name] != b {
			t.Errorf("%s/%s changed", dir, name)
		}
	}
	if _, err := Load(dir, LoadOptions{}); err != nil {
		t.Errorf("the old trace no longer loads: %v", err)
	}
}

// TestConvertInterruptedKeepsOldTrace: a conversion into an existing trace
// folder that is cancelled (SIGINT) or fails half-way leaves the old trace
// whole, with no mix of tables; the old code replaced it table by table.
func TestConvertInterruptedKeepsOldTrace(t *testing.T) {
	out := filepath.Join(t.TempDir(), "trace")
	if _, err := Convert(context.Background(), fixtures, out, ConvertOptions{Logger: quiet}); err != nil {
		t.Fatal(err)
	}
	old := snapshot(t, out)

	// cancelled after the first table's first bytes: the first table is
	// complete in the temporary folder, the rest is not
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := Convert(ctx, fixtures, out, ConvertOptions{Logger: quiet, BatchRows: 2,
		Progress: func(done, total int64) { cancel() }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled conversion: %v; want context.Canceled", err)
	}
	sameFolder(t, out, old)

	// a failing input (a later table unreadable) under --strict
	in := t.TempDir()
	for _, name := range []string{"machine_meta.sample.csv", "batch_task.sample.csv"} {
		b, err := os.ReadFile(filepath.Join(fixtures, name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(in, name), b, 0o644)
	}
	os.WriteFile(filepath.Join(in, "machine_usage.csv"), []byte("m_1,zero,1,1,1,1,1,1,1\n"), 0o644)
	if _, err := Convert(context.Background(), in, out, ConvertOptions{Logger: quiet, Strict: true}); err == nil {
		t.Fatal("strict conversion of a malformed table succeeded")
	}
	sameFolder(t, out, old)
	if ents, _ := os.ReadDir(filepath.Dir(out)); len(ents) != 2 { // trace and trace.lock
		t.Errorf("parent holds %d entries; want the trace and its lock file only", len(ents))
	}
}

// TestConvertSecondWriterLocked: while one conversion writes a folder, a
// second one fails at once naming the folder and the first one's pid (the
// old code let both write, and the folder ended corrupt).
func TestConvertSecondWriterLocked(t *testing.T) {
	out := filepath.Join(t.TempDir(), "trace")
	l, err := atomicdir.Lock(out) // the first writer
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	_, err = Convert(context.Background(), fixtures, out, ConvertOptions{Logger: quiet})
	if !errors.Is(err, atomicdir.ErrLocked) || !strings.Contains(err.Error(), out) ||
		!strings.Contains(err.Error(), strconv.Itoa(os.Getpid())) {
		t.Fatalf("second conversion: %v; want ErrLocked naming %s and pid %d", err, out, os.Getpid())
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the locked conversion wrote %s", out)
	}
}

// TestConvertRefusesForeignFolder: the output folder is replaced as a
// whole, so one holding other files is refused, not emptied.
func TestConvertRefusesForeignFolder(t *testing.T) {
	out := t.TempDir()
	os.WriteFile(filepath.Join(out, "thesis.tex"), []byte("precious"), 0o644)
	_, err := Convert(context.Background(), fixtures, out, ConvertOptions{Logger: quiet})
	if err == nil || !strings.Contains(err.Error(), "thesis.tex") {
		t.Fatalf("error %v; want one naming thesis.tex", err)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "thesis.tex")); string(b) != "precious" {
		t.Error("the foreign file is gone")
	}
}

// TestConvertStrictNonPositiveResources: negative or zero machine sizes,
// requests and plans are malformed rows, counted with file and line, and
// fatal under --strict (the old code kept them and the loader dropped them
// without a word).
func TestConvertStrictNonPositiveResources(t *testing.T) {
	cases := []struct {
		name, table string
		lines       []string
		line        int64
		column      string
	}{
		// line 2 of each file is the bad one
		{"negative machine cores", MachineMeta, []string{"m_1,0,1,a,96,100,USING", "m_2,0,1,a,-96,100,USING"}, 2, "cpu_num"},
		{"zero machine memory", MachineMeta, []string{"m_1,0,1,a,96,100,USING", "m_2,0,1,a,96,0,USING"}, 2, "mem_size"},
		{"negative plan_cpu", BatchTask, []string{"t1,1,j1,1,Terminated,1,2,50,0.5", "t2,1,j1,1,Terminated,1,2,-50,0.5"}, 2, "plan_cpu"},
		{"zero cpu_request", ContainerMeta, []string{"c_1,m_1,0,app,started,400,400,1.5", "c_2,m_1,0,app,started,0,400,1.5"}, 2, "cpu_request"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := writeTrace(t, map[string][]string{tc.table: tc.lines})
			_, err := Convert(context.Background(), in, t.TempDir(), ConvertOptions{Logger: quiet, Strict: true})
			var me *MalformedError
			if !errors.As(err, &me) || me.Reason != ReasonResource || me.Line != tc.line || !strings.Contains(me.Detail, tc.column) {
				t.Fatalf("strict: %v; want a %q error at line %d naming %s", err, ReasonResource, tc.line, tc.column)
			}
			sum, err := Convert(context.Background(), in, t.TempDir(), ConvertOptions{Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			ts := sum.Tables[0]
			if ts.Kept != 1 || ts.Dropped[ReasonResource] != 1 || len(ts.Samples) != 1 ||
				!strings.Contains(ts.Samples[0], ".csv:2:") {
				t.Errorf("kept %d, dropped %v, samples %q; want 1 kept, 1 %q quoted with file:2", ts.Kept, ts.Dropped, ts.Samples, ReasonResource)
			}
		})
	}
}

// TestLoadWithoutManifestFails: a folder with Arrow tables but no manifest
// (an interrupted conversion of the old code) is not a trace; the old code
// loaded the tables present and counted the rest as empty.
func TestLoadWithoutManifestFails(t *testing.T) {
	dir := convertTrace(t, fixtures)
	if err := os.Remove(filepath.Join(dir, ManifestFile)); err != nil {
		t.Fatal(err)
	}
	for _, spec := range []string{"all", "0h-1h", "day1"} {
		if _, err := ResolveWindow(dir, spec); err == nil {
			t.Errorf("ResolveWindow(%q) on a folder without manifest succeeded", spec)
		}
	}
	_, err := Load(dir, LoadOptions{})
	if !errors.Is(err, ErrNotTrace) || !strings.Contains(err.Error(), dir) {
		t.Errorf("Load: %v; want ErrNotTrace naming %s", err, dir)
	}
	if _, _, _, err := LoadSplit(dir, Windows{Train: []Window{{Name: "train-0", To: sim.Hour}}}, LoadOptions{}); !errors.Is(err, ErrNotTrace) {
		t.Errorf("LoadSplit: %v; want ErrNotTrace", err)
	}
	os.WriteFile(filepath.Join(dir, ManifestFile), []byte("{"), 0o644)
	if _, err := Load(dir, LoadOptions{}); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("Load with a broken manifest: %v; want an error naming %s", err, dir)
	}
}

// TestLoadNoUsableMachines: a header-only machine_meta (or machines without
// sizes) is an error, not a cluster of 0 nodes where every pod is
// unschedulable.
func TestLoadNoUsableMachines(t *testing.T) {
	for name, lines := range map[string][]string{
		"header only": {"machine_id,time_stamp,failure_domain_1,failure_domain_2,cpu_num,mem_size,status"},
		"no sizes":    {"m_1,0,1,a,,,USING"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := convertTrace(t, writeTrace(t, map[string][]string{MachineMeta: lines, BatchTask: batchLines[BatchTask]}))
			if _, err := Load(dir, LoadOptions{}); !errors.Is(err, ErrNoMachines) {
				t.Errorf("Load: %v; want ErrNoMachines", err)
			}
		})
	}
}

// TestWindowEmptyOrOutsideTrace: "0h-0h" is empty (the old code read it as
// the whole trace), and windows outside the trace's span are errors (the
// old code replayed the few records there).
func TestWindowEmptyOrOutsideTrace(t *testing.T) {
	dir := convertTrace(t, writeTrace(t, batchLines)) // span: 400 s
	for _, tc := range []struct{ spec, want string }{
		{"0h-0h", "empty"},
		{"100-100", "empty"},
		{"200-100", "inverted"},
		{"1h-2h", "starts after the trace"},
		{"day2", "starts after the trace"},
		{"0-1h", "ends after the trace"},
	} {
		if _, err := ResolveWindow(dir, tc.spec); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ResolveWindow(%q): %v; want an error containing %q", tc.spec, err, tc.want)
		}
	}
	for _, ok := range []string{"all", "0-401", "100-", "0s-5m"} {
		if _, err := ResolveWindow(dir, ok); err != nil {
			t.Errorf("ResolveWindow(%q): %v", ok, err)
		}
	}
}
