package dataset

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kubesim/kubesim/sim"
)

func TestEnsureDefault(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "default")
	// a default trace as EnsureDefault made it before the stamp: 40
	// machines, no DefaultStampFile
	old := DefaultSynthOptions()
	old.Machines = 40
	csvDir := t.TempDir()
	if err := Synth(context.Background(), old, csvDir); err != nil {
		t.Fatal(err)
	}
	if _, err := Convert(context.Background(), csvDir, dir, ConvertOptions{Compression: "lz4", Logger: quiet}); err != nil {
		t.Fatal(err)
	}
	if !complete(dir) || stamped(dir, currentStamp()) {
		t.Fatal("the old default trace should be complete and unstamped")
	}
	// EnsureDefault makes it again, with the machines of DefaultSynthOptions
	if err := EnsureDefault(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	if !stamped(dir, currentStamp()) {
		t.Error("no current stamp after EnsureDefault")
	}
	m, err := ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	var size int64
	for _, tb := range m.Tables {
		size += tb.Bytes
	}
	if len(m.Tables) != len(Tables) || size > 48<<20 {
		t.Errorf("%d tables, %d bytes; want all %d tables in at most 48 MiB", len(m.Tables), size, len(Tables))
	}
	// every machine is up at time 0
	if wl, err := Load(dir, LoadOptions{Window: Window{From: 0, To: sim.Hour}}); err != nil || len(wl.Nodes) != 400 {
		t.Fatalf("the default trace has %d machines at 0 (error %v); want 400", len(wl.Nodes), err)
	}
	// a second call finds the trace complete and current and rewrites nothing
	info, _ := os.Stat(filepath.Join(dir, ManifestFile))
	time.Sleep(10 * time.Millisecond)
	if err := EnsureDefault(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	again, _ := os.Stat(filepath.Join(dir, ManifestFile))
	if !again.ModTime().Equal(info.ModTime()) {
		t.Error("EnsureDefault rewrote a complete trace")
	}
	// a stamp of another generator version makes it again
	stale := currentStamp()
	stale.Version--
	b, _ := json.Marshal(stale)
	if err := os.WriteFile(filepath.Join(dir, DefaultStampFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := EnsureDefault(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.Stat(filepath.Join(dir, ManifestFile)); again.ModTime().Equal(info.ModTime()) || !stamped(dir, currentStamp()) {
		t.Error("EnsureDefault kept a trace stamped with another version")
	}
	// the default trace spans two days, split into hours: 30 training, 6
	// validation and 12 test hours, so test-0 is the 37th hour
	w, err := ResolveWindow(dir, "test-0")
	if err != nil {
		t.Fatal(err)
	}
	if w != (Window{Name: "test-0", From: 36 * sim.Hour, To: 37 * sim.Hour}) {
		t.Errorf("test-0 = %v; want [36h, 37h)", w)
	}
	wl, err := Load(dir, LoadOptions{Window: w, Machines: 20, DAG: true, LoadFactor: 1.5, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(wl.Nodes) == 0 || len(wl.Pods) == 0 || wl.End != sim.Hour {
		t.Errorf("%d nodes, %d pods, end %s; want some nodes and pods over one hour", len(wl.Nodes), len(wl.Pods), wl.End)
	}
	// a missing table file makes the trace incomplete: it is regenerated
	if err := os.Remove(filepath.Join(dir, BatchTask+".arrow")); err != nil {
		t.Fatal(err)
	}
	if err := EnsureDefault(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	if !complete(dir) {
		t.Error("trace still incomplete after EnsureDefault")
	}
}
