package dataset

import (
	"fmt"

	"github.com/apache/arrow/go/v15/arrow"
)

// Table names of the Alibaba cluster-trace-v2018, as in its file names.
const (
	MachineMeta    = "machine_meta"
	MachineUsage   = "machine_usage"
	ContainerMeta  = "container_meta"
	ContainerUsage = "container_usage"
	BatchTask      = "batch_task"
	BatchInstance  = "batch_instance"
)

// Tables lists the six tables in the order of the trace's schema file.
var Tables = []string{MachineMeta, MachineUsage, ContainerMeta, ContainerUsage, BatchTask, BatchInstance}

// kind is the stored type of a column.
type kind uint8

const (
	kString kind = iota + 1 // dictionary<int32, utf8>
	kInt                    // int64
	kReal                   // float64
)

// column is one column of a table, in CSV order.
type column struct {
	name string
	kind kind
	// util marks a utilisation percentage whose values -1 and 101 are the
	// trace's invalid markers: they are stored as null.
	util bool
	// time marks a time column (seconds since trace start), whose maximum
	// gives the trace span.
	time bool
	// pos marks a resource size (cores, memory, a request or plan): a value
	// that is present must be positive, else the row is malformed
	// (ReasonResource).
	pos bool
	// rng is the column's accepted values (ranges.go); hasRange is false
	// for string columns.
	rng      valueRange
	hasRange bool
}

// tableDef is the schema of one table.
type tableDef struct {
	name   string
	cols   []column
	schema *arrow.Schema
	// window is the time column the loader selects rows by (-1: none); Convert
	// records its range per record batch so that Load can skip batches.
	window int
	// key lists the columns that identify a row (tableKeys, ranges.go).
	key []int
}

// dictType is the Arrow type of every string column: ids and statuses repeat
// a lot, so each record batch carries a dictionary of its distinct values.
var dictType = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}

func newTableDef(name string, cols ...column) *tableDef {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		var t arrow.DataType
		switch c.kind {
		case kString:
			t = dictType
		case kInt:
			t = arrow.PrimitiveTypes.Int64
		case kReal:
			t = arrow.PrimitiveTypes.Float64
		}
		fields[i] = arrow.Field{Name: c.name, Type: t, Nullable: true}
	}
	md := arrow.NewMetadata([]string{"kubesim.table"}, []string{name})
	return &tableDef{name: name, cols: cols, schema: arrow.NewSchema(fields, &md), window: -1}
}

func str(name string) column     { return column{name: name, kind: kString} }
func i64(name string) column     { return column{name: name, kind: kInt} }
func f64(name string) column     { return column{name: name, kind: kReal} }
func tInt(name string) column    { return column{name: name, kind: kInt, time: true} }
func tReal(name string) column   { return column{name: name, kind: kReal, time: true} }
func posInt(name string) column  { return column{name: name, kind: kInt, pos: true} }
func posReal(name string) column { return column{name: name, kind: kReal, pos: true} }
func utilInt(name string) column {
	return column{name: name, kind: kInt, util: true}
}
func utilReal(name string) column {
	return column{name: name, kind: kReal, util: true}
}

// Column indices, in the order of schema.txt. Loader code refers to columns
// through these names only.
const (
	mmMachine = iota
	mmTime
	mmDomain1
	mmDomain2
	mmCPU
	mmMem
	mmStatus
)

const (
	muMachine = iota
	muTime
	muCPU
	muMem
)

const (
	cmContainer = iota
	cmMachine
	cmTime
	cmApp
	cmStatus
	cmCPURequest
	cmCPULimit
	cmMem
)

const (
	cuContainer = iota
	cuMachine
	cuTime
	cuCPU
	cuMem
)

const (
	btTask = iota
	btInstances
	btJob
	btType
	btStatus
	btStart
	btEnd
	btCPU
	btMem
)

const (
	biInstance = iota
	biTask
	biJob
	biType
	biStatus
	biStart
	biEnd
	biMachine
	biSeq
	biTotalSeq
	biCPUAvg
	biCPUMax
	biMemAvg
	biMemMax
)

// defs holds the six table schemas, keyed by table name. Types follow
// schema.txt: bigint is int64, double is float64, string is dictionary
// encoded. The utilisation percentages (cpu_util_percent, mem_util_percent,
// disk_io_percent) turn their invalid markers -1 and 101 into null.
var defs = map[string]*tableDef{
	MachineMeta: newTableDef(MachineMeta,
		str("machine_id"), tInt("time_stamp"), i64("failure_domain_1"), str("failure_domain_2"),
		posInt("cpu_num"), posInt("mem_size"), str("status")),
	MachineUsage: newTableDef(MachineUsage,
		str("machine_id"), tReal("time_stamp"), utilInt("cpu_util_percent"), utilInt("mem_util_percent"),
		f64("mem_gps"), i64("mkpi"), f64("net_in"), f64("net_out"), utilReal("disk_io_percent")),
	ContainerMeta: newTableDef(ContainerMeta,
		str("container_id"), str("machine_id"), tInt("time_stamp"), str("app_du"), str("status"),
		posInt("cpu_request"), posInt("cpu_limit"), posReal("mem_size")),
	ContainerUsage: newTableDef(ContainerUsage,
		str("container_id"), str("machine_id"), tReal("time_stamp"), utilInt("cpu_util_percent"),
		utilInt("mem_util_percent"), f64("cpi"), f64("mem_gps"), i64("mpki"), f64("net_in"), f64("net_out"),
		utilReal("disk_io_percent")),
	BatchTask: newTableDef(BatchTask,
		str("task_name"), i64("instance_num"), str("job_name"), str("task_type"), str("status"),
		tInt("start_time"), tInt("end_time"), posReal("plan_cpu"), posReal("plan_mem")),
	BatchInstance: newTableDef(BatchInstance,
		str("instance_name"), str("task_name"), str("job_name"), str("task_type"), str("status"),
		tInt("start_time"), tInt("end_time"), str("machine_id"), i64("seq_no"), i64("total_seq_no"),
		f64("cpu_avg"), f64("cpu_max"), f64("mem_avg"), f64("mem_max")),
}

func init() {
	defs[MachineUsage].window = muTime
	defs[ContainerUsage].window = cuTime
	defs[BatchTask].window = btStart
	defs[BatchInstance].window = biStart
}

// Schema returns the Arrow schema of a table, or an error for an unknown name.
func Schema(table string) (*arrow.Schema, error) {
	d, ok := defs[table]
	if !ok {
		return nil, fmt.Errorf("unknown table %q (want one of %v)", table, Tables)
	}
	return d.schema, nil
}
