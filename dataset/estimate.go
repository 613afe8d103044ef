package dataset

import "math"

// EstimateSize estimates the nodes and pods of loading win of the trace
// m describes on k machines (0: all) under load factor lf, from row counts
// alone: machine_meta rows stand for machines (a machine has one or more),
// and container_meta rows plus the batch_instance rows of the record
// batches that overlap the window stand for pods (a container has one or
// more records), kept in the share k / machines and scaled by lf. Without
// batch_instance, batch_task rows stand in (each task gives instance_num
// pods: an underestimate).
func (m *Manifest) EstimateSize(win Window, k int, lf float64) (nodes, pods uint64) {
	var machines, rows float64
	for _, t := range m.Tables {
		switch t.Table {
		case "machine_meta":
			machines = float64(t.Rows)
		case "container_meta":
			rows += float64(t.Rows)
		case "batch_instance":
			rows += windowRows(t, win)
		case "batch_task":
			if !m.Has("batch_instance") {
				rows += windowRows(t, win)
			}
		}
	}
	nodes = uint64(machines)
	share := 1.0
	if k > 0 {
		nodes = uint64(k)
		if machines > 0 {
			share = min(1, float64(k)/machines)
		}
	}
	return nodes, satFloat(rows * share * lf)
}

// windowRows counts the rows of t's record batches whose time range meets
// win (every row of an untimed batch).
func windowRows(t ManifestTable, win Window) float64 {
	from, to := win.From.Seconds(), win.To.Seconds()
	var n float64
	for _, b := range t.Batches {
		if !b.Timed || b.NullTimes > 0 || (b.MaxTime >= from && (win.To == 0 || b.MinTime < to)) {
			n += float64(b.Rows)
		}
	}
	return n
}

// satFloat converts a non-negative count to uint64, saturating.
func satFloat(x float64) uint64 {
	if x >= math.MaxUint64 {
		return math.MaxUint64
	}
	return uint64(x)
}
