package dataset

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"

	"github.com/kubesim/kubesim/sim"
)

// Arrivals counts the pods that arrive in each bin of trace time of the
// converted trace in dir: every batch instance at its start_time, and every
// container at its first container_meta record. Records at time stamp 0
// ("before the trace") are not arrivals: they are the running state a
// window starts from. counts[i] covers [i*bin, (i+1)*bin); the slice ends
// at the trace's span (the manifest's largest time stamp).
//
// Arrivals are a property of the whole trace (every machine, load factor
// 1): the suite uses them to find each trace's heaviest window, which must
// not depend on the machines or the load an evaluation samples.
func Arrivals(ctx context.Context, dir string, bin sim.Time) ([]int64, error) {
	if bin <= 0 {
		return nil, fmt.Errorf("arrivals of %s: bin %s must be positive", dir, bin)
	}
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	// ReadManifest refuses a span outside [0, MaxTraceSeconds], which bounds the bins
	span := sim.Time(m.Span) * sim.Second
	counts := make([]int64, int(span/bin)+1)
	add := func(ts int64) {
		if ts <= 0 || ts > m.Span {
			return
		}
		counts[int(traceTime(ts)/bin)]++
	}
	src, err := openArrowSource(dir)
	if err != nil {
		return nil, err
	}
	if src.has(BatchInstance) {
		err := src.scan(ctx, BatchInstance, allRows, func(rec arrow.Record) error {
			start := intColumn(rec, biStart)
			for i := range int(rec.NumRows()) {
				if s, ok := start.get(i); ok {
					add(s)
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("arrivals of %s: %w", dir, err)
		}
	}
	if src.has(ContainerMeta) {
		first := map[string]int64{}
		err := src.scan(ctx, ContainerMeta, allRows, func(rec arrow.Record) error {
			id, tm := strColumn(rec, cmContainer), intColumn(rec, cmTime)
			for i := range int(rec.NumRows()) {
				name, ok := id.value(i)
				ts, ok2 := tm.get(i)
				if !ok || !ok2 {
					continue
				}
				if t, seen := first[name]; !seen || ts < t {
					if !seen {
						name = strings.Clone(name)
					}
					first[name] = ts
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("arrivals of %s: %w", dir, err)
		}
		for _, ts := range first { // a sum: the order does not matter
			add(ts)
		}
	}
	return counts, nil
}

// HeaviestWindow returns the window of the given length that holds the most
// arrivals (counts as Arrivals returns them, bins of length bin), among
// windows that start on a bin boundary and end within the counted span;
// the earliest wins a tie. It is named "heaviest". The length must be a
// positive multiple of bin that fits the span.
func HeaviestWindow(counts []int64, bin, length sim.Time) (Window, int64, error) {
	if bin <= 0 || length <= 0 || length%bin != 0 {
		return Window{}, 0, fmt.Errorf("heaviest window: length %s must be a positive multiple of the bin %s", length, bin)
	}
	k := int(length / bin)
	if k > len(counts) {
		return Window{}, 0, fmt.Errorf("heaviest window: %s is longer than the trace's %s", length, sim.Time(len(counts))*bin)
	}
	var sum int64
	for _, c := range counts[:k] {
		sum += c
	}
	best, at := sum, 0
	for i := k; i < len(counts); i++ {
		sum += counts[i] - counts[i-k]
		if sum > best {
			best, at = sum, i-k+1
		}
	}
	from := sim.Time(at) * bin
	return Window{Name: HeaviestName, From: from, To: from + length}, best, nil
}

// HeaviestName is the name of the window HeaviestWindow finds.
const HeaviestName = "heaviest"

// WindowArrivals sums the arrivals (counts in bins of length bin) in
// window w; bins the window covers in part count in full.
func WindowArrivals(counts []int64, bin sim.Time, w Window) int64 {
	lo := int(w.From / bin)
	hi := len(counts)
	if w.To != 0 {
		hi = min(hi, int(math.Ceil(float64(w.To)/float64(bin))))
	}
	var s int64
	for i := max(lo, 0); i < hi; i++ {
		s += counts[i]
	}
	return s
}
