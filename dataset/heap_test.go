package dataset

import (
	"runtime/metrics"
	"time"
)

var heapSample = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}

// heapInUse returns the bytes of heap objects, live or not yet swept.
func heapInUse() uint64 {
	metrics.Read(heapSample)
	return heapSample[0].Value.Uint64()
}

func sleepMillisecond() { time.Sleep(time.Millisecond) }
