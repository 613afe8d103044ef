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
)

// FuzzCSVRows: the CSV row parser accepts or counts any bytes as rows of
// any table, never panics, and keeps the counts straight (read = kept +
// dropped); a kept row has positive resources.
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
