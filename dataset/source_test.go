package dataset

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"

	"github.com/kubesim/kubesim/sim"
)

func TestTimeRangeKeeps(t *testing.T) {
	w := window(100*sim.Second, 200*sim.Second)
	cases := []struct {
		name string
		b    BatchInfo
		want bool
	}{
		{"inside", BatchInfo{Timed: true, MinTime: 120, MaxTime: 150}, true},
		{"overlaps the start", BatchInfo{Timed: true, MinTime: 50, MaxTime: 100}, true},
		{"ends before", BatchInfo{Timed: true, MinTime: 50, MaxTime: 99.999}, false},
		// [100 s, 200 s) excludes 200 s
		{"starts at the end", BatchInfo{Timed: true, MinTime: 200, MaxTime: 300}, false},
		{"no times", BatchInfo{}, true},
		{"some null times", BatchInfo{Timed: true, MinTime: 500, MaxTime: 600, NullTimes: 1}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := w.keeps(&tc.b); got != tc.want {
				t.Errorf("keeps(%+v) = %v; want %v", tc.b, got, tc.want)
			}
			if !allRows.keeps(&tc.b) {
				t.Error("allRows skipped a batch")
			}
		})
	}
}

// convertBatches converts the CSV trace in dir into dir/arrow with record
// batches of the given number of rows.
func convertBatches(t *testing.T, dir string, rows int) string {
	t.Helper()
	out := filepath.Join(dir, "arrow")
	if _, err := Convert(context.Background(), dir, out, ConvertOptions{BatchRows: rows, Logger: quiet}); err != nil {
		t.Fatal(err)
	}
	return out
}

// With small record batches a window reads only the batches it needs, and
// the workload is still exactly the one from the CSV.
func TestLoadSkipsBatches(t *testing.T) {
	dir := synthTrace(t, SynthOptions{Machines: 20, Days: 1, Seed: 6, BatchConcurrency: 1})
	out := convertBatches(t, dir, 500)
	src, err := openArrowSource(out)
	if err != nil {
		t.Fatal(err)
	}
	var read, total int64
	err = src.scan(context.Background(), BatchInstance, window(6*sim.Hour, 7*sim.Hour), func(rec arrow.Record) error {
		read += rec.NumRows()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	total = src.man.table(BatchInstance).Rows
	// instances start in job order, so one hour of 24 needs a small share
	// of the batches
	if read == 0 || read > total/4 {
		t.Errorf("read %d of %d rows for one hour; want a few batches only", read, total)
	}
	opts := LoadOptions{Window: Window{From: 6 * sim.Hour, To: 7 * sim.Hour}, Machines: 10, Seed: 2, DAG: true}
	wa, err := Load(out, opts)
	if err != nil {
		t.Fatal(err)
	}
	wc, err := LoadCSV(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(wa, wc) || len(wa.Pods) == 0 {
		t.Errorf("Load gave %d pods, LoadCSV %d; want the same workload", len(wa.Pods), len(wc.Pods))
	}
}

// Compressed files go through the Arrow library's reader and give the same
// workload.
func TestLoadCompressed(t *testing.T) {
	dir := synthTrace(t, SynthOptions{Machines: 10, Days: 0.5, Seed: 7, BatchConcurrency: 1})
	opts := LoadOptions{Window: Window{From: sim.Hour, To: 9 * sim.Hour}, DAG: true, Machines: 5, Seed: 3}
	var want *sim.Workload
	for _, comp := range []string{"none", "lz4", "zstd"} {
		out := filepath.Join(dir, comp)
		if _, err := Convert(context.Background(), dir, out, ConvertOptions{Compression: comp, BatchRows: 1000, Logger: quiet}); err != nil {
			t.Fatal(err)
		}
		w, err := Load(out, opts)
		if err != nil {
			t.Fatalf("%s: %v", comp, err)
		}
		if want == nil {
			want = w
		} else if !reflect.DeepEqual(w, want) {
			t.Errorf("%s: %d pods; want the uncompressed workload's %d", comp, len(w.Pods), len(want.Pods))
		}
	}
}

// A corrupt batch is found by its checksum when the window reads it; a
// window that skips it does not read its bytes.
func TestCorruptBatchChecksum(t *testing.T) {
	dir := synthTrace(t, SynthOptions{Machines: 10, Days: 1, Seed: 8, BatchConcurrency: 1})
	out := convertBatches(t, dir, 500)
	m, err := ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	bi := m.table(BatchInstance).Batches
	last := bi[len(bi)-1]
	path := filepath.Join(out, BatchInstance+".arrow")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// change a byte in the body of the last batch (its last bytes are data)
	b[last.Offset+last.Bytes-16] ^= 0xff
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	early := Window{From: 0, To: sim.Time(bi[0].MaxTime*1000) + 1}
	if last.MinTime*1000 < float64(early.To) {
		t.Fatalf("test set-up: the last batch (from %v s) overlaps the early window", last.MinTime)
	}
	// on one scanning goroutine and on a pool of them
	for _, procs := range []int{1, 4} {
		prev := runtime.GOMAXPROCS(procs)
		if _, err := Load(out, LoadOptions{Window: early}); err != nil {
			t.Errorf("GOMAXPROCS=%d: a window that skips the corrupt batch failed: %v", procs, err)
		}
		_, err = Load(out, LoadOptions{})
		runtime.GOMAXPROCS(prev)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "checksum") {
			t.Errorf("GOMAXPROCS=%d: error %v; want a checksum error naming %s", procs, err, path)
		}
	}
}

// A load scans record batches on as many goroutines as GOMAXPROCS allows
// (up to maxScanWorkers), and gives the same workload with one or several.
func TestLoadConcurrentScanIsDeterministic(t *testing.T) {
	dir := synthTrace(t, SynthOptions{Machines: 20, Days: 1, Seed: 6, BatchConcurrency: 2})
	out := convertBatches(t, dir, 300)
	opts := LoadOptions{Window: Window{From: 2 * sim.Hour, To: 20 * sim.Hour}, Machines: 7, Seed: 3, DAG: true}
	var ws []*sim.Workload
	for _, procs := range []int{1, 4, 3} {
		prev := runtime.GOMAXPROCS(procs)
		w, err := Load(out, opts)
		runtime.GOMAXPROCS(prev)
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
	}
	if len(ws[0].Pods) == 0 {
		t.Fatal("no pods")
	}
	for i, procs := range []int{4, 3} {
		if !reflect.DeepEqual(ws[0], ws[i+1]) {
			t.Errorf("with %d scanning goroutines: a different workload (%d pods, one goroutine %d)", procs, len(ws[i+1].Pods), len(ws[0].Pods))
		}
	}
}

// Errors and panics on the scanning goroutines stop the scan and come back
// as the error of the earliest failing batch, every time.
func TestScanConcurrentErrors(t *testing.T) {
	dir := synthTrace(t, SynthOptions{Machines: 10, Days: 1, Seed: 6, BatchConcurrency: 1})
	out := convertBatches(t, dir, 200)
	src, err := openArrowSource(out)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(src.man.table(BatchInstance).Batches); n < 10 {
		t.Fatalf("%d batches; want at least 10", n)
	}
	var mu sync.Mutex
	seen := map[int]bool{}
	err = src.scanConcurrent(context.Background(), BatchInstance, allRows, 3, func(w, k int, rec arrow.Record) error {
		if w < 0 || w >= 3 {
			t.Errorf("worker %d", w)
		}
		mu.Lock()
		seen[k] = true
		mu.Unlock()
		return nil
	})
	if err != nil || len(seen) != len(src.man.table(BatchInstance).Batches) {
		t.Fatalf("scanned %d batches, error %v; want every batch once", len(seen), err)
	}
	for range 5 {
		err := src.scanConcurrent(context.Background(), BatchInstance, allRows, 3, func(w, k int, rec arrow.Record) error {
			switch k {
			case 4:
				return fmt.Errorf("failed on batch %d", k)
			case 2:
				var m map[int]int
				m[k]++ // a panic, as corrupt data would cause
			}
			return nil
		})
		if err == nil || !strings.Contains(err.Error(), "record batch 2") {
			t.Fatalf("error %v; want the panic on batch 2", err)
		}
	}
}

// Cancelling the context stops a concurrent scan with the context's error.
func TestScanConcurrentCancel(t *testing.T) {
	dir := synthTrace(t, SynthOptions{Machines: 10, Days: 1, Seed: 6, BatchConcurrency: 1})
	src, err := openArrowSource(convertBatches(t, dir, 200))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls atomic.Int64
	err = src.scanConcurrent(ctx, BatchInstance, allRows, 2, func(w, k int, rec arrow.Record) error {
		if k == 1 {
			cancel()
		}
		calls.Add(1)
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v; want context.Canceled", err)
	}
	if n, all := calls.Load(), len(src.man.table(BatchInstance).Batches); n >= int64(all) {
		t.Errorf("%d calls for %d batches; want the scan to stop early", n, all)
	}
}
