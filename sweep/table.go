package sweep

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/kubesim/kubesim/sim"
)

// column is one metric of the comparison table.
type column struct {
	header string
	value  func(r *sim.Result) string
}

func f3(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
func i64(v int64) string  { return strconv.FormatInt(v, 10) }
func secs(ms float64) string {
	return strconv.FormatFloat(ms/1000, 'f', 1, 64)
}

var columns = []column{
	{"scheduler", func(r *sim.Result) string { return r.Scheduler }},
	{"pods", func(r *sim.Result) string { return i64(r.Pods) }},
	{"unsched", func(r *sim.Result) string { return i64(r.Unschedulable) }},
	{"frag mean", func(r *sim.Result) string { return f3(r.FragmentationMean) }},
	{"frag@peak", func(r *sim.Result) string { return f3(r.FragmentationAtPeak) }},
	{"strand cpu", func(r *sim.Result) string { return f3(r.StrandedCPU) }},
	{"strand mem", func(r *sim.Result) string { return f3(r.StrandedMem) }},
	{"node cpu std", func(r *sim.Result) string { return f3(r.NodeCPUStdMean) }},
	{"pend mean s", func(r *sim.Result) string { return secs(r.PendingLatencyMeanMs) }},
	{"pend p95 s", func(r *sim.Result) string { return secs(r.PendingLatencyP95Ms) }},
	{"pend p99 s", func(r *sim.Result) string { return secs(r.PendingLatencyP99Ms) }},
	{"high p95 s", func(r *sim.Result) string { return secs(r.HighPrioPendingP95Ms) }},
	{"sla/1k", func(r *sim.Result) string { return f1(r.SLAViolationsPer1k) }},
	{"evict", func(r *sim.Result) string { return i64(r.Evictions) }},
	{"preempt", func(r *sim.Result) string { return i64(r.Preemptions) }},
	{"node-h", func(r *sim.Result) string { return f1(r.NodeHours) }},
	{"cpu util", func(r *sim.Result) string { return f3(r.MeanCPUUtil) }},
	{"mem util", func(r *sim.Result) string { return f3(r.MeanMemUtil) }},
}

// WriteTable renders results as a text table, one row per result, in the
// order given.
func WriteTable(w io.Writer, results []*sim.Result) error {
	t := tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off))
	header := make([]string, len(columns))
	for i, c := range columns {
		header[i] = c.header
	}
	t.Header(header)
	for _, r := range results {
		row := make([]string, len(columns))
		for i, c := range columns {
			row[i] = c.value(r)
		}
		if err := t.Append(row); err != nil {
			return fmt.Errorf("writing table: %w", err)
		}
	}
	if err := t.Render(); err != nil {
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
