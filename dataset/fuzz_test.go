package dataset

import (
	"bytes"
	"context"
	"encoding/json"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
)

// FuzzCSVRows: the CSV row parser accepts or counts any bytes as rows of
// any table, never panics, and keeps the counts straight (read = kept +
// dropped); a kept row has positive resources and every number in its
// column's range (ranges.go).
func FuzzCSVRows(f *testing.F) {
	for _, name := range []string{"machine_meta", "batch_task", "container_meta", "machine_usage", "container_usage"} {
		b, err := os.ReadFile(filepath.Join(fixtures, name+".sample.csv"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(0), b[:min(len(b), 600)])
	}
	f.Add(uint8(1), []byte("t1,1,j1,1,Terminated,1,2,-50,0.5\n\"a\",,,\r\n\n,,,,,,,,"))
	f.Add(uint8(2), []byte("c_1,m_1,0,app,started,400,400,1.5e308\nc_2,m_1,1e400,app,x,0,0,NaN\n"))
	// issue 28's inputs: a BOM (with and without a header), times and
	// resources out of range, duplicates and conflicts, a cut last line, a
	// negative utilisation
	f.Add(uint8(0), []byte("\ufeffm_1,0,1,a,96,100,USING\nm_2,0,1,a,96,100,USING\n"))
	f.Add(uint8(0), []byte("\ufeffmachine_id,time_stamp,failure_domain_1,failure_domain_2,cpu_num,mem_size,status\nm_1,0,1,a,96,100,USING\n"))
	f.Add(uint8(5), []byte("i_1,t_1,j_1,1,Terminated,100,10000000000,m_1,1,1,50,60,0.5,0.6\ni_2,t_1,j_1,1,Terminated,100,9000000000000000000,m_1,1,1,50,60,0.5,0.6\n"))
	f.Add(uint8(4), []byte("t1,1,j1,1,Terminated,1,2,1e300,0.5\nt2,1,j1,1,Terminated,1,2,50,1e300\n"))
	f.Add(uint8(0), []byte("m_1,0,1,a,96,1000000000000000000,USING\n"))
	f.Add(uint8(5), []byte("i_1,t_1,j_1,1,T,100,200,m_1,1,1,50,60,0.5,0.6\ni_1,t_1,j_1,1,T,100,200,m_1,1,1,50,60,0.5,0.6\n"))
	f.Add(uint8(0), []byte("m_1,0,1,a,96,100,USING\nm_1,0,1,a,64,100,USING\n"))
	f.Add(uint8(0), []byte("m_1,0,1,a,96,100,USING\nm_3,0,1,a,96,100,US"))
	f.Add(uint8(3), []byte("c_1,m_1,60,10,20,,,,,,\nc_1,m_1,120,-50,20,,,,,,\n"))
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		def := defs[Tables[int(which)%len(Tables)]]
		var ts TableSummary
		po := parseOptions{batchRows: 4, maxSamples: 3}
		var kept int64
		err := parseMembers(context.Background(), def, po, &ts, func(rec arrow.Record) error {
			if err := checkRecord(rec, def); err != nil {
				t.Fatalf("the parser built a bad record: %v", err)
			}
			kept += rec.NumRows()
			for i, c := range def.cols {
				if c.hasRange {
					for j := range int(rec.NumRows()) {
						col := rec.Column(i)
						if col.IsNull(j) {
							continue
						}
						var v float64
						switch a := col.(type) {
						case *array.Int64:
							v = float64(a.Value(j))
						case *array.Float64:
							v = a.Value(j)
						}
						if !c.rng.contains(v) {
							t.Fatalf("kept %s = %v outside %s", c.name, v, c.rng)
						}
					}
				}
				if !c.pos {
					continue
				}
				for j := range int(rec.NumRows()) {
					col := rec.Column(i)
					if col.IsNull(j) {
						continue
					}
					if v := col.GetOneForMarshal(j); strings.HasPrefix(fmtNum(v), "-") || fmtNum(v) == "0" {
						t.Fatalf("kept %s = %v", c.name, v)
					}
				}
			}
			return nil
		}, func(fn func(string, io.Reader) error) error { return fn("fuzz.csv", bytes.NewReader(data)) })
		if err != nil {
			t.Fatalf("non-strict parse failed: %v", err)
		}
		if ts.Read != ts.Kept+ts.DroppedTotal() || kept != ts.Kept {
			t.Fatalf("read %d, kept %d (%d in records), dropped %d", ts.Read, ts.Kept, kept, ts.DroppedTotal())
		}
	})
}

func fmtNum(v any) string { b, _ := json.Marshal(v); return string(b) }

// FuzzArrowReader: Load of a trace whose machine_meta.arrow holds any
// bytes returns a workload or an error naming the file, never panics. With
// recompute set, the manifest's size and checksums are recomputed over the
// corrupted bytes (as a careless tool, or a deliberate one, would), so the
// corruption reaches the decoder: the error must then name the table (and
// the column when it is one), never a recovered "runtime error".
func FuzzArrowReader(f *testing.F) {
	src := f.TempDir()
	if _, err := Convert(context.Background(), fixtures, src, ConvertOptions{BatchRows: 8, Logger: quiet}); err != nil {
		f.Fatal(err)
	}
	good, err := os.ReadFile(filepath.Join(src, MachineMeta+".arrow"))
	if err != nil {
		f.Fatal(err)
	}
	m, err := ReadManifest(src)
	if err != nil {
		f.Fatal(err)
	}
	base := *m.table(MachineMeta)
	f.Add(good, false)
	f.Add(good, true)
	f.Add(good[:len(good)/2], true)
	for _, at := range []int{8, 200, len(good) / 2, len(good) - 40} {
		b := bytes.Clone(good)
		b[at] ^= 0x5a
		f.Add(b, true)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, recompute bool) {
		path := filepath.Join(dir, MachineMeta+".arrow")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		mt := base
		mt.Batches = append([]BatchInfo(nil), base.Batches...)
		if recompute {
			mt.Bytes, mt.CRC32 = int64(len(data)), crc32.Checksum(data, crcTable)
			for i := range mt.Batches {
				b := &mt.Batches[i]
				if lo, hi := b.Offset, b.Offset+b.Bytes; lo >= 0 && hi <= int64(len(data)) && lo <= hi {
					b.CRC32 = crc32.Checksum(data[lo:hi], crcTable)
				}
			}
		}
		man := Manifest{Format: manifestFormat, Version: manifestVersion, Span: m.Span, Tables: []ManifestTable{mt}}
		b, _ := json.Marshal(&man)
		if err := os.WriteFile(filepath.Join(dir, ManifestFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(dir, LoadOptions{})
		if err == nil {
			return
		}
		msg := err.Error()
		if strings.Contains(msg, "runtime error") {
			t.Fatalf("a decoder panic surfaced: %v", err)
		}
		if !strings.Contains(msg, path) && !strings.Contains(msg, dir) {
			t.Fatalf("error %q names neither the file nor the trace", msg)
		}
	})
}
