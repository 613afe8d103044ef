package sweep

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"

	"github.com/kubesim/kubesim/sim"
)

// writeRowsCSV writes one line per row with every metric: the columns lead
// (row i's values leadOf(i)), then nodes, seed, workload, scheduler, then
// every key of sim.Result's JSON form in sorted order (nested objects
// flattened as "pending_latency.p95_ms"); a statistic without a sample is
// empty, and so is every column of an AdmissionBound row but pods and the
// metrics it bounds (boundColumns).
func writeRowsCSV(w io.Writer, lead []string, leadOf func(i int) []string, rows []Row) error {
	flat := make([]map[string]string, len(rows))
	keys := map[string]bool{}
	for i, row := range rows {
		m, err := flatten(row.Result)
		if err != nil {
			return err
		}
		delete(m, "scheduler")
		if row.Result.Scheduler == AdmissionBound {
			m = boundColumns(m)
		}
		flat[i] = m
		for k := range m {
			keys[k] = true
		}
	}
	cols := slices.Sorted(maps.Keys(keys))
	compaction := slices.ContainsFunc(rows, func(r Row) bool { return r.Needed > 0 })
	suite := slices.ContainsFunc(rows, func(r Row) bool { return r.Regime != "" })
	cw := csv.NewWriter(w)
	header := append(slices.Clone(lead), "nodes", "seed", "workload", "scheduler")
	if suite {
		header = append(header, "regime")
	}
	if compaction {
		header = append(header, "nodes_needed")
	}
	if err := cw.Write(append(header, cols...)); err != nil {
		return fmt.Errorf("writing CSV: %w", err)
	}
	for i, row := range rows {
		var rec []string
		if leadOf != nil {
			rec = leadOf(i)
		}
		rec = append(rec, strconv.Itoa(row.Nodes), strconv.FormatUint(row.Seed, 10), row.Workload, row.Result.Scheduler)
		if suite {
			rec = append(rec, row.Regime)
		}
		if compaction {
			rec = append(rec, strconv.Itoa(row.Needed))
		}
		for _, k := range cols {
			rec = append(rec, flat[i][k])
		}
		if err := cw.Write(rec); err != nil {
			return fmt.Errorf("writing CSV: %w", err)
		}
	}
	cw.Flush()
	return cw.Error()
}

// flatten turns a result into key -> formatted value through its JSON form.
func flatten(res *sim.Result) (map[string]string, error) {
	data, err := json.Marshal(res)
	if err != nil {
		return nil, fmt.Errorf("encoding result: %w", err)
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("encoding result: %w", err)
	}
	out := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(prefix+k+".", e)
			}
		case nil:
			out[prefix[:len(prefix)-1]] = ""
		default:
			out[prefix[:len(prefix)-1]] = fmt.Sprint(x)
		}
	}
	walk("", m)
	return out, nil
}

// boundColumns keeps, of an AdmissionBound row's flattened result m, the pod
// count and the Focused metrics that the bound gives (Metric.Lower, the
// rule the tables follow too); its other fields are not measured.
func boundColumns(m map[string]string) map[string]string {
	out := map[string]string{"pods": m["pods"]}
	for _, mt := range Focused {
		if gives(AdmissionBound, mt) {
			out[mt.Key] = m[mt.Key]
		}
	}
	return out
}
