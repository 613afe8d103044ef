package serve

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"slices"
	"testing"
	"time"
)

// BenchmarkPrioritize measures one /prioritize request through the handler
// (decoding the JSON of n real node objects, the view, the shipped policy's
// forward pass, the answer), one at a time. It reports requests/s and the
// p50 and p99 latency in ms; run with -cpu 1 for the one-core figure. The
// collector runs at GCPercent, as in kubesim serve (GOGC overrides it).
func BenchmarkPrioritize(b *testing.B) {
	if LowLatencyGC() { // as kubesim serve runs
		defer debug.SetGCPercent(100)
	}
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			s := newTestServer(b, Config{Workers: 1, Budget: time.Second}, shipped(b))
			body := requestBody(b, 0, clusterNodes(n))
			serveOnce := func() {
				rec := httptest.NewRecorder()
				s.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/prioritize", bytes.NewReader(body)))
				if rec.Code != 200 {
					b.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
			}
			serveOnce() // buffers sized to the cluster
			var lat []time.Duration
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			start := time.Now()
			for b.Loop() {
				t0 := time.Now()
				serveOnce()
				lat = append(lat, time.Since(t0))
			}
			el := time.Since(start)
			slices.Sort(lat)
			b.ReportMetric(float64(len(lat))/el.Seconds(), "requests/s")
			b.ReportMetric(float64(percentile(lat, 0.50))/1e6, "p50-ms")
			b.ReportMetric(float64(percentile(lat, 0.99))/1e6, "p99-ms")
		})
	}
}
