package dataset

import (
	"fmt"
	"math"
)

// The values a converted trace may hold, one range per numeric column,
// checked as each row enters (Convert). A row with a value outside its
// column's range is dropped (ReasonRange; ReasonResource for a resource
// that is zero or negative) and named with its file and line, so that
// nothing that converts can later fail a replay or change it silently: a
// time of 1e10 s no longer stretches the trace span to centuries, and a
// memory size of 1e300 no longer becomes MinInt64 MiB.
//
// The bounds are physical ceilings, well above anything the v2018 trace
// (or the synthetic trace) holds: CPU in the trace's unit (100 = one core)
// up to 4,096 cores; memory normalised (100 = the largest machine) up to
// ten times the largest machine; times within MaxTraceSeconds.

// MaxTraceSeconds is the longest trace accepted: 400 days (the published
// trace spans 8 days, `kubesim synth` makes at most 366). Every time stamp
// must lie in [0, MaxTraceSeconds], and so does a manifest's span.
const MaxTraceSeconds = 400 * 24 * 3600

// valueRange is the accepted values of one numeric column: [Min, Max], or
// (0, Max] for a resource (Positive). Utilisation columns also accept the
// trace's invalid markers -1 and 101, stored as null.
type valueRange struct {
	Min, Max float64
	Positive bool
}

func (r valueRange) String() string {
	if r.Positive {
		return fmt.Sprintf("(0, %g]", r.Max)
	}
	return fmt.Sprintf("[%g, %g]", r.Min, r.Max)
}

// contains reports whether v is in the range (NaN never is).
func (r valueRange) contains(v float64) bool {
	if r.Positive && !(v > 0) {
		return false
	}
	return v >= r.Min && v <= r.Max
}

// Ceilings shared by several columns.
const (
	maxCPU     = 4096 * 100 // 4,096 cores, in the trace's unit (100 = 1 core)
	maxMemNorm = 1000       // ten times the largest machine (100)
	maxCount   = 1_000_000  // instances of a task, sequence numbers
	maxMetric  = 1e9        // counters no loader reads (mem_gps, mpki, net_in, ...)
)

var (
	traceTimes  = valueRange{Min: 0, Max: MaxTraceSeconds}
	utilPercent = valueRange{Min: 0, Max: 100}
	cpuSize     = valueRange{Positive: true, Max: maxCPU}
	memSize     = valueRange{Positive: true, Max: maxMemNorm}
	metricValue = valueRange{Min: 0, Max: maxMetric}
)

// columnRanges is the one table of ranges: every int64 and float64 column
// of every table has its entry (TestEveryNumericColumnHasARange).
var columnRanges = map[string]map[string]valueRange{
	MachineMeta: {
		"time_stamp":       traceTimes,
		"failure_domain_1": {Min: 0, Max: math.MaxInt32},
		"cpu_num":          {Positive: true, Max: 4096}, // cores
		"mem_size":         memSize,
	},
	MachineUsage: {
		"time_stamp":       traceTimes,
		"cpu_util_percent": utilPercent,
		"mem_util_percent": utilPercent,
		"mem_gps":          metricValue,
		"mkpi":             metricValue,
		"net_in":           metricValue,
		"net_out":          metricValue,
		"disk_io_percent":  utilPercent,
	},
	ContainerMeta: {
		"time_stamp":  traceTimes,
		"cpu_request": cpuSize,
		"cpu_limit":   cpuSize,
		"mem_size":    memSize,
	},
	ContainerUsage: {
		"time_stamp":       traceTimes,
		"cpu_util_percent": utilPercent,
		"mem_util_percent": utilPercent,
		"cpi":              metricValue,
		"mem_gps":          metricValue,
		"mpki":             metricValue,
		"net_in":           metricValue,
		"net_out":          metricValue,
		"disk_io_percent":  utilPercent,
	},
	BatchTask: {
		"instance_num": {Min: 0, Max: maxCount},
		"start_time":   traceTimes,
		"end_time":     traceTimes,
		"plan_cpu":     cpuSize,
		"plan_mem":     memSize,
	},
	BatchInstance: {
		"start_time":   traceTimes,
		"end_time":     traceTimes,
		"seq_no":       {Min: 0, Max: maxCount},
		"total_seq_no": {Min: 0, Max: maxCount},
		"cpu_avg":      {Min: 0, Max: maxCPU},
		"cpu_max":      {Min: 0, Max: maxCPU},
		"mem_avg":      {Min: 0, Max: maxMemNorm},
		"mem_max":      {Min: 0, Max: maxMemNorm},
	},
}

// tableKeys names the columns that identify a row of each table: a second
// row with the same key is a duplicate (the same values: ReasonDuplicate)
// or a conflict (other values: ReasonConflict), and is dropped; the first
// is kept. A status event and a usage sample are identified by their
// subject and time (a machine or container may change status twice in one
// second, so the status is part of those keys), a task by its job and name,
// an instance by its job, task, name and run (seq_no).
var tableKeys = map[string][]string{
	MachineMeta:    {"machine_id", "time_stamp", "status"},
	MachineUsage:   {"machine_id", "time_stamp"},
	ContainerMeta:  {"container_id", "time_stamp", "status"},
	ContainerUsage: {"container_id", "machine_id", "time_stamp"},
	BatchTask:      {"job_name", "task_name"},
	BatchInstance:  {"job_name", "task_name", "instance_name", "seq_no"},
}

// init puts each column's range and each table's key into its tableDef.
// A missing entry is a programming error, caught by the tests.
func init() {
	for name, def := range defs {
		for i := range def.cols {
			c := &def.cols[i]
			if r, ok := columnRanges[name][c.name]; ok {
				c.rng, c.hasRange = r, true
			}
		}
		for _, k := range tableKeys[name] {
			for i, c := range def.cols {
				if c.name == k {
					def.key = append(def.key, i)
				}
			}
		}
	}
}
