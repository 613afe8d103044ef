package sweep

import (
	"strings"
	"testing"

	"github.com/kubesim/kubesim/sim"
)

// TestWriteWaste: a row is the mean over seeds of the runs' snapshots
// (alloc 94 and 96 give 95), a scheduler whose runs have none is left out,
// and with no snapshot at all there is no table.
func TestWriteWaste(t *testing.T) {
	s := &OpenbSpec{PodLists: []string{"default"}, Schedulers: []string{"fgd", "old"}}
	w := func(alloc, failed1, cpu float64) *sim.GPUWaste {
		return &sim.GPUWaste{ArrivedPct: 100, AllocPct: alloc, Failed: [sim.GPUShapes]float64{2: failed1}, FreeCPU: cpu, FreeShape: 100 - alloc - cpu}
	}
	runs := []OpenbRun{
		{PodList: "default", Seed: 1, GPUResult: sim.GPUResult{Scheduler: "fgd", Waste: w(94, 3, 2)}},
		{PodList: "default", Seed: 2, GPUResult: sim.GPUResult{Scheduler: "fgd", Waste: w(96, 1, 1)}},
		{PodList: "default", Seed: 1, GPUResult: sim.GPUResult{Scheduler: "old"}},
	}
	var b strings.Builder
	writeWaste(&b, s, runs)
	out := b.String()
	want := "| default | fgd | 95.00 | 2.00 | 0.00 | 0.00 | 2.00 | 0.00 | 0.00 | 0.00 | 0.00 | 1.50 | 3.50 |"
	if !strings.Contains(out, want) {
		t.Fatalf("no row %q in\n%s", want, out)
	}
	if strings.Contains(out, "| old |") {
		t.Errorf("a scheduler without snapshots has a row:\n%s", out)
	}
	b.Reset()
	writeWaste(&b, s, runs[2:])
	if b.Len() != 0 {
		t.Errorf("a table without snapshots:\n%s", b.String())
	}
}
