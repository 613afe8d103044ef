package dataset

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// benchTrace generates a synthetic CSV trace once per benchmark run and
// returns its directory and total size.
func benchTrace(b *testing.B, opts SynthOptions) (string, int64) {
	b.Helper()
	dir := b.TempDir()
	if err := Synth(context.Background(), opts, dir); err != nil {
		b.Fatal(err)
	}
	var size int64
	for _, t := range Tables {
		info, err := os.Stat(filepath.Join(dir, t+".csv"))
		if err != nil {
			b.Fatal(err)
		}
		size += info.Size()
	}
	return dir, size
}

// BenchmarkConvert reports conversion throughput in MB/s of CSV input: a
// synthetic trace of every table (written to disk), and generated
// batch_instance rows streamed straight to a discarded output, which also
// reports the peak heap (MiB) to show that memory does not grow with input.
func BenchmarkConvert(b *testing.B) {
	for _, comp := range []string{"none", "lz4", "zstd"} {
		b.Run("input=synth/compression="+comp, func(b *testing.B) {
			dir, size := benchTrace(b, SynthOptions{Machines: 100, Days: 1, Seed: 1, BatchConcurrency: 2})
			out := b.TempDir()
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Convert(context.Background(), dir, out, ConvertOptions{Compression: comp, Logger: quiet}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	for _, size := range []int64{64 << 20, 1 << 30} {
		b.Run(fmt.Sprintf("input=generated/size=%dMiB", size>>20), func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			var peak uint64
			for b.Loop() {
				_, p := convertGenerated(b, size)
				peak = max(peak, p)
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
	}
}

// BenchmarkLoad loads a workload on a tenth of the machines of a two-day
// synthetic trace from the converted Arrow files and by re-parsing the CSV,
// in the same iteration, and reports both as rows/s (rows of the tables the
// loader consults, the same count for both) and their ratio. window=day2
// lets the Arrow reader skip batches by their time statistics; window=all
// reads every batch. Each load opens its source, as Load and LoadCSV do, and
// starts from a collected heap, as in a fresh process: without that, the
// garbage one path leaves is collected during the other's timed load (the
// Arrow load, which follows the CSV load of the previous iteration, paid for
// up to a fifth of its time).
func BenchmarkLoad(b *testing.B) {
	for _, m := range []int{100, 300} {
		for _, win := range []string{"day2", "all"} {
			b.Run(fmt.Sprintf("machines=%d/window=%s", m, win), func(b *testing.B) {
				dir, _ := benchTrace(b, SynthOptions{Machines: m, Days: 2, Seed: 1, BatchConcurrency: 2})
				arrowDir := b.TempDir()
				if _, err := Convert(context.Background(), dir, arrowDir, ConvertOptions{Logger: quiet}); err != nil {
					b.Fatal(err)
				}
				w, err := ParseWindow(win)
				if err != nil {
					b.Fatal(err)
				}
				opts := LoadOptions{Window: w, Machines: m / 10, DAG: true, Seed: 1}
				var rows int64
				var ta, tc time.Duration
				b.ReportAllocs()
				for b.Loop() {
					runtime.GC()
					t0 := time.Now()
					asrc, err := openArrowSource(arrowDir)
					if err != nil {
						b.Fatal(err)
					}
					wa, _, err := load(context.Background(), asrc, opts)
					if err != nil {
						b.Fatal(err)
					}
					ta += time.Since(t0)
					na := len(wa.Pods)
					wa = nil // collected before the CSV load starts
					runtime.GC()
					t1 := time.Now()
					csrc, err := openCSVSource(dir)
					if err != nil {
						b.Fatal(err)
					}
					wc, st, err := load(context.Background(), csrc, opts)
					if err != nil {
						b.Fatal(err)
					}
					tc += time.Since(t1)
					rows = st.rows
					if na != len(wc.Pods) || na == 0 {
						b.Fatalf("arrow gave %d pods, csv %d", na, len(wc.Pods))
					}
				}
				n := float64(b.N)
				b.ReportMetric(float64(rows)*n/ta.Seconds(), "arrow-rows/s")
				b.ReportMetric(float64(rows)*n/tc.Seconds(), "csv-rows/s")
				b.ReportMetric(tc.Seconds()/ta.Seconds(), "arrow-speedup")
			})
		}
	}
}
