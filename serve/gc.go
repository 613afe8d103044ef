package serve

import (
	"os"
	"runtime/debug"
)

// GCPercent is the garbage collector's target that LowLatencyGC sets. A
// /prioritize request at 100 nodes decodes about 56 KB of JSON into
// upstream Node objects and allocates about 700 KB, so the collector runs
// often at Go's default of 100 and its pauses and assist work land in the
// tail. At 400 the service's heap (a policy pool and caches, tens of MB)
// grows at most fivefold between collections. Measured with
// BenchmarkPrioritize/nodes=100 at -cpu 1 on the project's 2-core VM, two
// runs each: p50 1.13-1.68 ms and p99 4.2-5.2 ms at 100; 0.95-0.99 ms and
// 2.6-3.6 ms at 400.
const GCPercent = 400

// LowLatencyGC sets GCPercent, unless the GOGC environment variable chooses
// the collector's target itself, and reports whether it did.
func LowLatencyGC() bool {
	if _, set := os.LookupEnv("GOGC"); set {
		return false
	}
	debug.SetGCPercent(GCPercent)
	return true
}
