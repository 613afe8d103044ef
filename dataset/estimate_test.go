package dataset

import (
	"testing"

	"github.com/kubesim/kubesim/sim"
)

func TestEstimateSize(t *testing.T) {
	m := &Manifest{Tables: []ManifestTable{
		{Table: "machine_meta", Rows: 10},
		{Table: "container_meta", Rows: 100},
		{Table: "batch_instance", Rows: 70, Batches: []BatchInfo{
			{Rows: 40, Timed: true, MinTime: 0, MaxTime: 3599},     // meets [1h, 2h)? no: ends before it
			{Rows: 20, Timed: true, MinTime: 3000, MaxTime: 5000},  // overlaps
			{Rows: 10, Timed: true, MinTime: 7200, MaxTime: 9000}}, // starts at its end: no
		},
	}}
	win := Window{From: sim.Hour, To: 2 * sim.Hour}
	// 5 of 10 machines, load factor 2: (100 containers + 20 instances) x 0.5 x 2 = 120
	if n, p := m.EstimateSize(win, 5, 2); n != 5 || p != 120 {
		t.Errorf("EstimateSize(5 machines, x2) = %d nodes, %d pods; want 5, 120", n, p)
	}
	// all machines, load factor 1: 10 nodes, 120 pods
	if n, p := m.EstimateSize(win, 0, 1); n != 10 || p != 120 {
		t.Errorf("EstimateSize(all, x1) = %d nodes, %d pods; want 10, 120", n, p)
	}
}
