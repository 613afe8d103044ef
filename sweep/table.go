package sweep

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/kubesim/kubesim/sim"
)

// WriteTable renders single replays as a text table, one row per result in
// the order given: the scheduler, its pods, and the metrics (Focused, or
// MetricsFor's; every metric is in WriteJSONLines' output). With Focused it
// fits 120 characters.
func WriteTable(w io.Writer, results []*sim.Result, metrics []Metric) error {
	header := []string{"scheduler", "pods"}
	for _, m := range metrics {
		header = append(header, m.Header)
	}
	rows := make([][]string, len(results))
	for i, r := range results {
		rows[i] = []string{r.Scheduler, strconv.FormatInt(r.Pods, 10)}
		for _, m := range metrics {
			rows[i] = append(rows[i], formatIV(Interval{Mean: m.Value(r), Half: math.NaN()}, m.Digits, false))
		}
	}
	var b strings.Builder
	if err := writeAligned(&b, header, rows); err != nil {
		return err
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("writing table: %w", err)
	}
	return nil
}

// WriteJSONLines writes one JSON object per result, one per line.
func WriteJSONLines(w io.Writer, results []*sim.Result) error {
	enc := json.NewEncoder(w)
	for _, r := range results {
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("writing JSON: %w", err)
		}
	}
	return nil
}

// WriteSamplesCSV writes the metric time series of every result, one row
// per sample with the scheduler in the first column, for plots.
func WriteSamplesCSV(w io.Writer, results []*sim.Result) error {
	cw := csv.NewWriter(w)
	header := []string{"scheduler", "at_s", "nodes", "pending", "cpu_alloc", "mem_alloc", "cpu_util", "mem_util",
		"fragmentation", "stranded_cpu", "stranded_mem", "node_cpu_var", "node_cpu_std"}
	if err := cw.Write(header); err != nil {
		return fmt.Errorf("writing samples: %w", err)
	}
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 8, 64) }
	for _, r := range results {
		for _, s := range r.Samples {
			row := []string{r.Scheduler, g(s.At.Seconds()), strconv.Itoa(s.Nodes), strconv.Itoa(s.Pending),
				g(s.CPUAlloc), g(s.MemAlloc), g(s.CPUUtil), g(s.MemUtil), g(s.Fragmentation),
				g(s.StrandedCPU), g(s.StrandedMem), g(s.NodeCPUVar), g(s.NodeCPUStd)}
			if err := cw.Write(row); err != nil {
				return fmt.Errorf("writing samples: %w", err)
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("writing samples: %w", err)
	}
	return nil
}
