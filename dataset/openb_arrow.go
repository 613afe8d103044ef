package dataset

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/kubesim/kubesim/internal/atomicdir"
	"github.com/kubesim/kubesim/sim"
)

// Converted openb traces: two Arrow IPC streams, one record batch each, and
// the manifest (the v2018 tables' Manifest type, with its own format name)
// listing their sizes and CRC-32 checksums, written last into a folder
// replaced as a whole (internal/atomicdir).

// openb table names and the manifest format.
const (
	OpenbNodes    = "openb_nodes"
	OpenbPods     = "openb_pods"
	openbFormat   = "kubesim-openb-arrow"
	openbVersion  = 1
	openbNameKey  = "openb_pod_list" // schema metadata: the pod list's name
	openbNullTime = -1
)

var openbNodeSchema = arrow.NewSchema([]arrow.Field{
	{Name: "sn", Type: arrow.BinaryTypes.String},
	{Name: "cpu_milli", Type: arrow.PrimitiveTypes.Int64},
	{Name: "memory_mib", Type: arrow.PrimitiveTypes.Int64},
	{Name: "gpu", Type: arrow.PrimitiveTypes.Int64},
	{Name: "model", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

func openbPodSchema(name string) *arrow.Schema {
	md := arrow.NewMetadata([]string{openbNameKey}, []string{name})
	return arrow.NewSchema([]arrow.Field{
		{Name: "name", Type: arrow.BinaryTypes.String},
		{Name: "cpu_milli", Type: arrow.PrimitiveTypes.Int64},
		{Name: "memory_mib", Type: arrow.PrimitiveTypes.Int64},
		{Name: "num_gpu", Type: arrow.PrimitiveTypes.Int64},
		{Name: "gpu_milli", Type: arrow.PrimitiveTypes.Int64},
		{Name: "gpu_spec", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "qos", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "pod_phase", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "creation_time", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "deletion_time", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "scheduled_time", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, &md)
}

// optString appends s, or null when empty.
func optString(b *array.StringBuilder, s string) {
	if s == "" {
		b.AppendNull()
		return
	}
	b.Append(s)
}

// optInt appends v, or null when it is openbNullTime.
func optInt(b *array.Int64Builder, v int64) {
	if v == openbNullTime {
		b.AppendNull()
		return
	}
	b.Append(v)
}

func (t *OpenbTrace) nodeRecord() arrow.Record {
	b := array.NewRecordBuilder(memory.DefaultAllocator, openbNodeSchema)
	defer b.Release()
	for _, n := range t.Nodes {
		b.Field(0).(*array.StringBuilder).Append(n.Name)
		b.Field(1).(*array.Int64Builder).Append(n.CPUMilli)
		b.Field(2).(*array.Int64Builder).Append(n.MemMiB)
		b.Field(3).(*array.Int64Builder).Append(n.GPUs)
		optString(b.Field(4).(*array.StringBuilder), n.Model)
	}
	return b.NewRecord()
}

func (t *OpenbTrace) podRecord() arrow.Record {
	b := array.NewRecordBuilder(memory.DefaultAllocator, openbPodSchema(t.Name))
	defer b.Release()
	for _, p := range t.Pods {
		b.Field(0).(*array.StringBuilder).Append(p.Name)
		b.Field(1).(*array.Int64Builder).Append(p.CPUMilli)
		b.Field(2).(*array.Int64Builder).Append(p.MemMiB)
		b.Field(3).(*array.Int64Builder).Append(p.NumGPU)
		b.Field(4).(*array.Int64Builder).Append(p.GPUMilli)
		optString(b.Field(5).(*array.StringBuilder), p.GPUSpec)
		optString(b.Field(6).(*array.StringBuilder), p.QoS)
		optString(b.Field(7).(*array.StringBuilder), p.Phase)
		optInt(b.Field(8).(*array.Int64Builder), p.Creation)
		optInt(b.Field(9).(*array.Int64Builder), p.Deletion)
		optInt(b.Field(10).(*array.Int64Builder), p.Scheduled)
	}
	return b.NewRecord()
}

// writeRecord writes rec as an Arrow IPC stream to path (atomically) and
// returns its manifest entry.
func writeRecord(path, table, input string, rec arrow.Record) (ManifestTable, error) {
	mt := ManifestTable{Table: table, File: table + ".arrow", Rows: rec.NumRows(), Read: rec.NumRows()}
	err := writeAtomic(path, func(w io.Writer) error {
		hw := &hashingWriter{w: w, crc: crc32.New(crcTable)}
		aw := ipc.NewWriter(hw, ipc.WithSchema(rec.Schema()), ipc.WithAllocator(memory.DefaultAllocator))
		hw.part = 0
		if err := aw.Write(rec); err != nil {
			aw.Close()
			return fmt.Errorf("%s: writing record batch of %s: %w", path, input, err)
		}
		bi := BatchInfo{Offset: 0, Rows: rec.NumRows()}
		if err := aw.Close(); err != nil {
			return fmt.Errorf("%s: closing arrow stream: %w", path, err)
		}
		bi.Bytes, bi.CRC32 = hw.n, hw.part
		mt.Batches = []BatchInfo{bi}
		mt.Bytes, mt.CRC32 = hw.n, hw.crc.Sum32()
		return nil
	})
	return mt, err
}

// ConvertOpenb reads an openb node list and pod list (ReadOpenbCSV: every
// malformed row is an error naming file, line and column) and writes
// outDir/openb_nodes.arrow, outDir/openb_pods.arrow and outDir/manifest.json,
// replacing outDir as a whole, as Convert does for the v2018 tables.
func ConvertOpenb(ctx context.Context, nodesPath, podsPath, outDir string) (Summary, error) {
	t, err := ReadOpenbCSV(nodesPath, podsPath)
	if err != nil {
		return Summary{}, err
	}
	if err := ctx.Err(); err != nil {
		return Summary{}, fmt.Errorf("converting into %s: %w", outDir, err)
	}
	if err := replaceableOpenb(outDir); err != nil {
		return Summary{}, err
	}
	lock, err := atomicdir.Lock(outDir)
	if err != nil {
		return Summary{}, fmt.Errorf("converting into %s: %w", outDir, err)
	}
	defer lock.Unlock()
	var sum Summary
	err = atomicdir.Replace(outDir, func(tmp string) error {
		m := Manifest{Format: openbFormat, Version: openbVersion}
		for _, tb := range []struct {
			table, input string
			rec          arrow.Record
		}{
			{OpenbNodes, nodesPath, t.nodeRecord()},
			{OpenbPods, podsPath, t.podRecord()},
		} {
			mt, err := writeRecord(filepath.Join(tmp, tb.table+".arrow"), tb.table, tb.input, tb.rec)
			tb.rec.Release()
			if err != nil {
				return err
			}
			m.Tables = append(m.Tables, mt)
			sum.Tables = append(sum.Tables, TableSummary{Table: tb.table, Input: tb.input, Output: filepath.Join(outDir, mt.File),
				Read: mt.Read, Kept: mt.Rows, Bytes: mt.Bytes, CRC32: mt.CRC32, Batches: mt.Batches})
		}
		b, err := json.MarshalIndent(&m, "", "  ")
		if err != nil {
			return fmt.Errorf("encoding manifest: %w", err)
		}
		return writeFileAtomic(filepath.Join(tmp, ManifestFile), append(b, '\n'))
	})
	return sum, err
}

// replaceableOpenb refuses an output folder holding anything but a
// converted openb trace's files.
func replaceableOpenb(dir string) error {
	return replaceable(dir, "a converted openb trace", "the conversion replaces the whole folder, so give an empty or new folder (or a converted openb trace)",
		func(e fs.DirEntry) bool { n := e.Name(); return n == OpenbNodes+".arrow" || n == OpenbPods+".arrow" })
}

// IsOpenb reports whether dir holds a converted openb trace (its manifest
// names the openb format).
func IsOpenb(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return false
	}
	var head struct {
		Format string `json:"format"`
	}
	return json.Unmarshal(b, &head) == nil && head.Format == openbFormat
}

// readOpenbManifest reads and checks an openb manifest.
func readOpenbManifest(dir string) (*Manifest, error) {
	p := filepath.Join(dir, ManifestFile)
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("reading manifest: %w", err)
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if m.Format != openbFormat || m.Version != openbVersion {
		return nil, fmt.Errorf("%s: format %q version %d, want %q version %d: convert the trace again", p, m.Format, m.Version, openbFormat, openbVersion)
	}
	if len(m.Tables) != 2 || m.Tables[0].Table != OpenbNodes || m.Tables[1].Table != OpenbPods {
		return nil, fmt.Errorf("%s: want the tables %s and %s", p, OpenbNodes, OpenbPods)
	}
	for _, t := range m.Tables {
		if t.File != t.Table+".arrow" {
			return nil, fmt.Errorf("%s: table %s: file %q, want %q", p, t.Table, t.File, t.Table+".arrow")
		}
	}
	return &m, nil
}

// readVerified reads a table's file and checks its size and checksum
// against the manifest.
func readVerified(dir string, t ManifestTable) ([]byte, error) {
	p := filepath.Join(dir, t.File)
	b, err := os.ReadFile(p)
	switch {
	case err != nil:
		return nil, fmt.Errorf("reading trace: %w", err)
	case int64(len(b)) != t.Bytes:
		return nil, fmt.Errorf("%s: %d bytes, manifest says %d: truncated or replaced", p, len(b), t.Bytes)
	case crc32.Checksum(b, crcTable) != t.CRC32:
		return nil, fmt.Errorf("%s: checksum %08x, manifest says %08x: file is corrupt", p, crc32.Checksum(b, crcTable), t.CRC32)
	}
	return b, nil
}

// readStream decodes the single record batch of an Arrow stream, checking
// the schema's field names and types.
func readStream(path string, b []byte, want *arrow.Schema, fn func(rec arrow.Record) error) error {
	r, err := ipc.NewReader(bytes.NewReader(b), ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer r.Release()
	got := r.Schema()
	if len(got.Fields()) != len(want.Fields()) {
		return fmt.Errorf("%s: %d columns, want %d", path, len(got.Fields()), len(want.Fields()))
	}
	for i, f := range want.Fields() {
		if g := got.Field(i); g.Name != f.Name || !arrow.TypeEqual(g.Type, f.Type) {
			return fmt.Errorf("%s: column %d is %s %s, want %s %s", path, i, g.Name, g.Type, f.Name, f.Type)
		}
	}
	for r.Next() {
		if err := fn(r.Record()); err != nil {
			return err
		}
	}
	if err := r.Err(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// LoadOpenbTrace reads a converted openb trace, verifying sizes and
// checksums against the manifest.
func LoadOpenbTrace(dir string) (*OpenbTrace, error) {
	m, err := readOpenbManifest(dir)
	if err != nil {
		return nil, err
	}
	t := &OpenbTrace{}
	nb, err := readVerified(dir, m.Tables[0])
	if err != nil {
		return nil, err
	}
	np := filepath.Join(dir, m.Tables[0].File)
	err = readStream(np, nb, openbNodeSchema, func(rec arrow.Record) error {
		sn, cpu, mem := rec.Column(0).(*array.String), rec.Column(1).(*array.Int64), rec.Column(2).(*array.Int64)
		gpu, model := rec.Column(3).(*array.Int64), rec.Column(4).(*array.String)
		for i := range int(rec.NumRows()) {
			t.Nodes = append(t.Nodes, OpenbNode{Name: sn.Value(i), CPUMilli: cpu.Value(i), MemMiB: mem.Value(i), GPUs: gpu.Value(i), Model: model.Value(i)})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	pb, err := readVerified(dir, m.Tables[1])
	if err != nil {
		return nil, err
	}
	pp := filepath.Join(dir, m.Tables[1].File)
	r, err := ipc.NewReader(bytes.NewReader(pb))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", pp, err)
	}
	if v, ok := r.Schema().Metadata().GetValue(openbNameKey); ok {
		t.Name = v
	}
	r.Release()
	err = readStream(pp, pb, openbPodSchema(t.Name), func(rec arrow.Record) error {
		str := func(c int) *array.String { return rec.Column(c).(*array.String) }
		i64 := func(c int) *array.Int64 { return rec.Column(c).(*array.Int64) }
		tm := func(c, i int) int64 {
			if rec.Column(c).IsNull(i) {
				return openbNullTime
			}
			return i64(c).Value(i)
		}
		for i := range int(rec.NumRows()) {
			t.Pods = append(t.Pods, OpenbPod{Name: str(0).Value(i), CPUMilli: i64(1).Value(i), MemMiB: i64(2).Value(i),
				NumGPU: i64(3).Value(i), GPUMilli: i64(4).Value(i), GPUSpec: str(5).Value(i), QoS: str(6).Value(i),
				Phase: str(7).Value(i), Creation: tm(8, i), Deletion: tm(9, i), Scheduled: tm(10, i)})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if int64(len(t.Nodes)) != m.Tables[0].Rows || int64(len(t.Pods)) != m.Tables[1].Rows {
		return nil, fmt.Errorf("%s: %d nodes and %d pods, manifest says %d and %d", dir, len(t.Nodes), len(t.Pods), m.Tables[0].Rows, m.Tables[1].Rows)
	}
	return t, nil
}

// LoadOpenb reads a converted openb trace as a sim.GPUWorkload (checked
// again: a converted file is input too).
func LoadOpenb(dir string) (*sim.GPUWorkload, error) {
	t, err := LoadOpenbTrace(dir)
	if err != nil {
		return nil, err
	}
	w, err := t.Workload()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return w, nil
}
