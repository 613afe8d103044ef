package dataset

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/sim"
)

// Tests of issue 28 ("no silent wrong result from any input"), one per
// defect, named after it.

// dropCase is one bad row: the table's lines, the line at fault, and what
// its drop must say.
type dropCase struct {
	name, table string
	lines       []string
	line        int64
	reason      string
	detail      string // a part of the message: the column, the key
}

// checkDropped converts tc's table twice: under --strict the bad line is
// a *MalformedError naming it; otherwise it is dropped, counted under its
// reason and quoted with file:line, and every other row is kept.
func checkDropped(t *testing.T, tc dropCase) {
	t.Helper()
	in := writeTrace(t, map[string][]string{tc.table: tc.lines})
	_, err := Convert(context.Background(), in, t.TempDir(), ConvertOptions{Logger: quiet, Strict: true})
	var me *MalformedError
	if !errors.As(err, &me) || me.Reason != tc.reason || me.Line != tc.line || !strings.Contains(me.Error(), tc.detail) {
		t.Fatalf("strict: %v; want a %q error at line %d containing %q", err, tc.reason, tc.line, tc.detail)
	}
	sum, err := Convert(context.Background(), in, t.TempDir(), ConvertOptions{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ts := sum.Tables[0]
	if ts.Dropped[tc.reason] != 1 || ts.DroppedTotal() != 1 || ts.Kept != ts.Read-1 {
		t.Errorf("read %d, kept %d, dropped %v; want only one %q drop", ts.Read, ts.Kept, ts.Dropped, tc.reason)
	}
	at := ".csv:" + strconv.FormatInt(tc.line, 10) + ":"
	if len(ts.Samples) != 1 || !strings.Contains(ts.Samples[0], at) || !strings.Contains(ts.Samples[0], tc.detail) {
		t.Errorf("samples %q; want the row quoted with %q and %q", ts.Samples, at, tc.detail)
	}
	if !strings.Contains(sum.String(), tc.reason+"=1") {
		t.Errorf("summary\n%s\nwants %s=1", sum, tc.reason)
	}
}

// machineRows are two good machine_meta rows.
var machineRows = []string{"m_1,0,1,a,96,100,USING", "m_2,0,1,a,96,100,USING"}

// TestBOMStrippedFromFirstID (issue 28, defect 1): a UTF-8 byte order mark
// at the start of a CSV stayed in the first ID ("\ufeffm_1"), which added a
// machine and changed the seeded sample; with a header row after it, the
// header was not recognised.
func TestBOMStrippedFromFirstID(t *testing.T) {
	for _, tc := range []struct {
		name    string
		lines   []string
		headers int64
	}{
		{"no header", machineRows, 0},
		// the header line is recognised once the BOM is gone: read = 2 rows
		{"header", append([]string{"machine_id,time_stamp,failure_domain_1,failure_domain_2,cpu_num,mem_size,status"}, machineRows...), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines := append([]string(nil), tc.lines...)
			lines[0] = "\ufeff" + lines[0]
			in := writeTrace(t, map[string][]string{MachineMeta: lines})
			out := t.TempDir()
			sum, err := Convert(context.Background(), in, out, ConvertOptions{Logger: quiet, Strict: true})
			if err != nil {
				t.Fatal(err)
			}
			if ts := sum.Tables[0]; ts.Headers != tc.headers || ts.Kept != 2 {
				t.Fatalf("headers %d, kept %d; want %d and 2", ts.Headers, ts.Kept, tc.headers)
			}
			rows := readTable(t, filepath.Join(out, MachineMeta+".arrow"), MachineMeta)
			if rows[0][mmMachine] != "m_1" {
				t.Errorf("first machine id %q; want \"m_1\" without the BOM", rows[0][mmMachine])
			}
		})
	}
}

// TestHugeTimeDropped (issue 28, defect 2): one end_time of 1e10 moved the
// test windows to year 237 (341 pods instead of 4,857); at 1e12 a window
// lookup hung, at 1e14 it ran out of memory, at 9e18 the span overflowed.
// A time outside [0, MaxTraceSeconds] is now a dropped row, so the span
// stays the trace's.
func TestHugeTimeDropped(t *testing.T) {
	inst := "i_1,t_1,j_1,1,Terminated,100,200,m_1,1,1,50,60,0.5,0.6"
	for _, tc := range []dropCase{
		{"end_time 1e10", BatchInstance, []string{inst, "i_2,t_1,j_1,1,Terminated,100,10000000000,m_1,1,1,50,60,0.5,0.6"}, 2, ReasonRange, "end_time"},
		{"end_time 9e18", BatchInstance, []string{inst, "i_2,t_1,j_1,1,Terminated,100,9000000000000000000,m_1,1,1,50,60,0.5,0.6"}, 2, ReasonRange, "end_time"},
		{"negative start_time", BatchInstance, []string{inst, "i_2,t_1,j_1,1,Terminated,-5,200,m_1,1,1,50,60,0.5,0.6"}, 2, ReasonRange, "start_time"},
		{"usage time 1e12", MachineUsage, []string{"m_1,300,40,90,,,1,1,5", "m_1,1e12,40,90,,,1,1,5"}, 2, ReasonRange, "time_stamp"},
	} {
		t.Run(tc.name, func(t *testing.T) { checkDropped(t, tc) })
	}

	// the span of the kept rows only: 200 s
	in := writeTrace(t, map[string][]string{MachineMeta: machineRows,
		BatchInstance: {inst, "i_2,t_1,j_1,1,Terminated,100,10000000000,m_1,1,1,50,60,0.5,0.6"}})
	out := convertTrace(t, in)
	m, err := ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	if m.Span != 200 {
		t.Errorf("span %d s; want 200 (the kept rows' largest time)", m.Span)
	}

	// a manifest edited to a span beyond MaxTraceSeconds is refused, and
	// no window is cut from it
	b, _ := os.ReadFile(filepath.Join(out, ManifestFile))
	b = []byte(strings.Replace(string(b), `"span_seconds": 200`, `"span_seconds": 1000000000000`, 1))
	os.WriteFile(filepath.Join(out, ManifestFile), b, 0o644)
	if _, err := ResolveWindow(out, "test-0"); err == nil || !strings.Contains(err.Error(), "span_seconds") {
		t.Errorf("window of a 1e12 s span: %v; want an error naming span_seconds", err)
	}
	// and Split refuses to make more windows than any trace holds:
	// 1e12 s in 1 ms windows
	if _, err := Split(sim.Time(1e15), 1, 1, 1); err == nil {
		t.Error("Split into 1e15 windows succeeded; want an error before allocating them")
	}
}

// TestHugeResourceDropped (issue 28, defect 3): 1e300 in mem_size or
// plan_cpu became MinInt64 MiB at replay (not naming the row), and a
// machine mem_size of 1e18 overflowed the node's memory.
func TestHugeResourceDropped(t *testing.T) {
	task := "t1,1,j1,1,Terminated,1,2,50,0.5"
	for _, tc := range []dropCase{
		{"plan_cpu 1e300", BatchTask, []string{task, "t2,1,j1,1,Terminated,1,2,1e300,0.5"}, 2, ReasonRange, "plan_cpu"},
		{"plan_mem 1e300", BatchTask, []string{task, "t2,1,j1,1,Terminated,1,2,50,1e300"}, 2, ReasonRange, "plan_mem"},
		{"container mem_size 1e300", ContainerMeta, []string{"c_1,m_1,0,app,started,400,400,1.5", "c_2,m_1,0,app,started,400,400,1e300"}, 2, ReasonRange, "mem_size"},
		{"machine mem_size 1e18", MachineMeta, []string{machineRows[0], "m_2,0,1,a,96,1000000000000000000,USING"}, 2, ReasonRange, "mem_size"},
		{"instance_num 1e12", BatchTask, []string{task, "t2,1000000000000,j1,1,Terminated,1,2,50,0.5"}, 2, ReasonRange, "instance_num"},
		{"cpu_avg negative", BatchInstance, []string{"i_1,t_1,j_1,1,Terminated,100,200,m_1,1,1,50,60,0.5,0.6", "i_2,t_1,j_1,1,Terminated,100,200,m_1,1,1,-50,60,0.5,0.6"}, 2, ReasonRange, "cpu_avg"},
	} {
		t.Run(tc.name, func(t *testing.T) { checkDropped(t, tc) })
	}
}

// TestDuplicateRowsDropped (issue 28, defect 4): duplicated batch_instance
// rows doubled the batch pods without a word, and machine_meta rows with
// one key and other values silently picked one. The first row of a key is
// kept; a repeat is a duplicate (same values) or a conflict (other values).
func TestDuplicateRowsDropped(t *testing.T) {
	inst := "i_1,t_1,j_1,1,Terminated,100,200,m_1,1,1,50,60,0.5,0.6"
	for _, tc := range []dropCase{
		{"batch_instance repeated", BatchInstance, []string{inst, "i_2,t_1,j_1,1,Terminated,100,200,m_1,1,1,50,60,0.5,0.6", inst}, 3, ReasonDuplicate, "(j_1, t_1, i_1, 1)"},
		// CRLF does not make a repeated row different
		{"batch_task repeated with CRLF", BatchTask, []string{"t1,1,j1,1,Terminated,1,2,50,0.5", "t1,1,j1,1,Terminated,1,2,50,0.5\r"}, 2, ReasonDuplicate, "(j1, t1)"},
		{"machine_meta conflict", MachineMeta, []string{machineRows[0], machineRows[1], "m_1,0,1,a,64,100,USING"}, 3, ReasonConflict, "(m_1, 0, USING)"},
		{"container_usage conflict", ContainerUsage, []string{"c_1,m_1,60,10,20,,,,,,", "c_1,m_1,60,30,20,,,,,,"}, 2, ReasonConflict, "(c_1, m_1, 60)"},
	} {
		t.Run(tc.name, func(t *testing.T) { checkDropped(t, tc) })
	}

	// the same instances twice (the file concatenated with itself) load
	// as the pods of one copy: 2, not 4
	rows := []string{inst, "i_2,t_1,j_1,1,Terminated,100,200,m_1,1,1,50,60,0.5,0.6"}
	in := writeTrace(t, map[string][]string{MachineMeta: machineRows, BatchInstance: append(rows, rows...)})
	w, err := Load(convertTrace(t, in), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Pods) != 2 {
		t.Errorf("%d pods; want 2 (one per distinct instance)", len(w.Pods))
	}

	// a dropped conflict does not move the span: its end_time of 500,000 s
	// is in range, but the row is not kept, so the span stays 200 s
	in = writeTrace(t, map[string][]string{MachineMeta: machineRows,
		BatchInstance: {inst, "i_1,t_1,j_1,1,Terminated,100,500000,m_1,1,1,50,60,0.5,0.6"}})
	if m, err := ReadManifest(convertTrace(t, in)); err != nil || m.Span != 200 {
		t.Errorf("span after a dropped conflict: %v, %v; want 200 s", m, err)
	}

	// two statuses of one machine in one second are two events, not a
	// conflict: the status is part of the key
	in = writeTrace(t, map[string][]string{MachineMeta: {"m_1,0,1,a,96,100,IMPORT_INSTALLING", "m_1,0,1,a,96,100,USING"}})
	sum, err := Convert(context.Background(), in, t.TempDir(), ConvertOptions{Logger: quiet, Strict: true})
	if err != nil || sum.Tables[0].Kept != 2 {
		t.Errorf("two statuses at one time: %v, %+v; want both kept", err, sum)
	}
}

// TestTruncatedLastLineDropped (issue 28, defect 5): a file cut inside its
// last line, so that the line still has its columns ("...,100,US"), was
// accepted even with --strict. A last line without its end of line is now
// a dropped row.
func TestTruncatedLastLineDropped(t *testing.T) {
	in := t.TempDir()
	data := machineRows[0] + "\n" + machineRows[1] + "\n" + "m_3,0,1,a,96,100,US"
	if err := os.WriteFile(filepath.Join(in, MachineMeta+".csv"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Convert(context.Background(), in, t.TempDir(), ConvertOptions{Logger: quiet, Strict: true})
	var me *MalformedError
	if !errors.As(err, &me) || me.Reason != ReasonTruncated || me.Line != 3 {
		t.Fatalf("strict: %v; want %q at line 3", err, ReasonTruncated)
	}
	sum, err := Convert(context.Background(), in, t.TempDir(), ConvertOptions{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if ts := sum.Tables[0]; ts.Kept != 2 || ts.Dropped[ReasonTruncated] != 1 {
		t.Errorf("kept %d, dropped %v; want 2 kept and the cut line dropped", ts.Kept, ts.Dropped)
	}
}

// TestNegativeUtilDroppedAtConvert (issue 28, defect 16): a
// container_usage cpu_util_percent of -50 converted, then failed the whole
// replay ("usage point 0 invalid"). It is now dropped at convert, with its
// line named, and the trace loads.
func TestNegativeUtilDroppedAtConvert(t *testing.T) {
	usage := []string{"c_1,m_1,60,10,20,,,,,,", "c_1,m_1,120,-50,20,,,,,,", "c_1,m_1,180,-1,101,,,,,,"}
	checkDropped(t, dropCase{"cpu_util -50", ContainerUsage, usage, 2, ReasonRange, "cpu_util_percent"})
	in := writeTrace(t, map[string][]string{MachineMeta: machineRows,
		ContainerMeta: {"c_1,m_1,0,app,started,400,400,1.5"}, ContainerUsage: usage})
	if _, err := Load(convertTrace(t, in), LoadOptions{}); err != nil {
		t.Errorf("load after dropping the bad sample: %v", err)
	}
}

// TestEveryNumericColumnHasARange: the range table (ranges.go) covers
// every number of every table, and each table has a key.
func TestEveryNumericColumnHasARange(t *testing.T) {
	for _, name := range Tables {
		def := defs[name]
		for _, c := range def.cols {
			if c.kind != kString && !c.hasRange {
				t.Errorf("%s.%s has no range", name, c.name)
			}
		}
		if len(def.key) != len(tableKeys[name]) || len(def.key) == 0 {
			t.Errorf("%s: key columns %v; want %v", name, def.key, tableKeys[name])
		}
	}
}
