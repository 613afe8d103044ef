package sweep

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/kubesim/kubesim/sim"
)

// FrontierRow is one cell (grid point and size) of the oracle frontier of
// round 5's admission study (results/admission-round5/): how few pods any
// admission rule could leave pending against the cell's best heuristic,
// with the oracle of sim.AdmissionOracle on each workload.
type FrontierRow struct {
	// Cell names the grid point and size as Compare does
	// ("trace.load_factor=1.3 nodes=100").
	Cell string
	// Reference is the heuristic with the fewest pods left pending in the
	// cell, summed over its workloads (never a variant, see reference).
	Reference string
	// Workloads is the cell's workloads: evaluation seeds times windows.
	Workloads int
	// Count is the reference's pods left pending, summed over the workloads.
	Count float64
	// AtMem, AtMem90 and AtMinMem are the oracle's counts summed over the
	// workloads, each workload held to the reference's high-priority
	// censored p95 and to at least, in pending memory, the reference's
	// (AtMem), 0.9 times it (AtMem90), or the least any scheduler of the
	// sweep left pending on that workload (AtMinMem). -1 when some workload
	// has no such pending set.
	AtMem, AtMem90, AtMinMem int
	// BreakEven is the largest factor f in [0.5, 1.2] such that, with at
	// least f times the reference's pending memory on each workload, the
	// oracle's sum is at most 0.9 Count: a rule that gains 10% on the
	// reference must leave at most f times its memory pending.
	BreakEven float64
}

// frontier metrics: the columns of cells.csv the frontier reads.
const (
	colUnsched = "unschedulable"
	colP95     = "high_prio_pending_p95_censored_ms"
	colMemGiB  = "unschedulable_mem_gib"
)

// frontierWorkload is one workload of a cell: its oracle pods and end, and
// the reference's p95 and pending memory on it, and the least pending
// memory any scheduler left.
type frontierWorkload struct {
	pods        []sim.OraclePod
	end, p95    sim.Time
	mem, minMem float64 // MiB
}

// Frontier computes the oracle frontier of every cell of the sweep output
// dir (its cells.csv), replayed from spec: each cell's workloads are loaded
// again (the measured pods do not depend on the scheduler) and held to the
// reference heuristic's figures on each. It reads the same columns as the
// tables, so the reference of a cell is the best heuristic of its
// unschedulable column (summed rather than averaged: the same choice).
func Frontier(ctx context.Context, spec *Spec, dir string) ([]FrontierRow, error) {
	points, err := spec.Expand()
	if err != nil {
		return nil, err
	}
	scheds, err := Schedulers(points[0], "")
	if err != nil {
		return nil, err
	}
	// vals[scheduler][column] from cells.csv
	vals := map[string]map[string]*sideValues{}
	for _, s := range scheds {
		vals[s.Name] = map[string]*sideValues{}
		for _, col := range []string{colUnsched, colP95, colMemGiB} {
			v, err := readSide(Side{Path: dir, Scheduler: s.Name}, col)
			if err != nil {
				return nil, fmt.Errorf("frontier: %w", err)
			}
			vals[s.Name][col] = v
		}
	}
	value := func(name, col, cell string, c Case) (float64, error) {
		v, ok := vals[name][col].vals[cell+"|"+strconv.FormatUint(c.Seed, 10)+"|"+c.Workload]
		if !ok {
			return 0, fmt.Errorf("frontier: %s: no %s row for %s seed %d workload %s", dir, name, cell, c.Seed, c.Workload)
		}
		return v, nil
	}
	var out []FrontierRow
	for _, p := range points {
		if p.Trace == nil || p.Suite != nil {
			return nil, fmt.Errorf("frontier: the spec must replay windows of one trace (no suite, not synthetic)")
		}
		ws, err := p.ResolveWindows()
		if err != nil {
			return nil, err
		}
		cases, err := Cases(p, ws.Test, 1)
		if err != nil {
			return nil, err
		}
		var settings []string
		for _, s := range p.Settings {
			settings = append(settings, s.Key+"="+s.Value)
		}
		for start := 0; start < len(cases); {
			n := cases[start].Nodes
			end := start
			for end < len(cases) && cases[end].Nodes == n {
				end++
			}
			cell := strings.Join(append(settings, "nodes="+strconv.Itoa(n)), " ")
			row, err := frontierCell(ctx, cell, cases[start:end], scheds, value)
			if err != nil {
				return nil, err
			}
			out = append(out, row)
			start = end
		}
	}
	return out, nil
}

// frontierCell is Frontier's row of one cell, whose cases are given.
func frontierCell(ctx context.Context, cell string, cases []Case, scheds []Scheduler,
	value func(name, col, cell string, c Case) (float64, error)) (FrontierRow, error) {
	row := FrontierRow{Cell: cell, Workloads: len(cases), Count: math.Inf(1)}
	for _, s := range scheds {
		if !reference(s.Name) {
			continue
		}
		var sum float64
		for _, c := range cases {
			v, err := value(s.Name, colUnsched, cell, c)
			if err != nil {
				return row, err
			}
			sum += v
		}
		if sum < row.Count {
			row.Reference, row.Count = s.Name, sum
		}
	}
	if row.Reference == "" {
		return row, fmt.Errorf("frontier: %s: no heuristic to take as the reference (eval.schedulers has variants only)", cell)
	}
	wls := make([]frontierWorkload, len(cases))
	for i, c := range cases {
		if err := ctx.Err(); err != nil {
			return row, err
		}
		w, cfg, err := c.load()
		if err != nil {
			return row, err
		}
		pods, err := sim.OraclePods(w, cfg)
		if err != nil {
			return row, fmt.Errorf("frontier: %s: %w", cell, err)
		}
		p95, err := value(row.Reference, colP95, cell, c)
		if err != nil {
			return row, err
		}
		mem, err := value(row.Reference, colMemGiB, cell, c)
		if err != nil {
			return row, err
		}
		minMem := mem
		for _, s := range scheds {
			if v, err := value(s.Name, colMemGiB, cell, c); err == nil {
				minMem = min(minMem, v)
			}
		}
		wls[i] = frontierWorkload{pods: pods, end: w.End, p95: sim.Time(math.Round(p95)), mem: mem * 1024, minMem: minMem * 1024}
	}
	total := func(memOf func(frontierWorkload) float64) (int, bool) {
		var sum int
		for _, wl := range wls {
			k, ok := sim.AdmissionOracle(wl.pods, wl.end, wl.p95, memOf(wl))
			if !ok {
				return 0, false
			}
			sum += k
		}
		return sum, true
	}
	count := func(memOf func(frontierWorkload) float64) int {
		if k, ok := total(memOf); ok {
			return k
		}
		return -1
	}
	row.AtMem = count(func(wl frontierWorkload) float64 { return wl.mem })
	row.AtMem90 = count(func(wl frontierWorkload) float64 { return 0.9 * wl.mem })
	row.AtMinMem = count(func(wl frontierWorkload) float64 { return wl.minMem })
	// the oracle's sum grows with f: bisect for the largest f that still
	// reaches 0.9 Count (30 halvings of [0.5, 1.2], as round 5's script)
	lo, hi := 0.5, 1.2
	for range 30 {
		f := (lo + hi) / 2
		if k, ok := total(func(wl frontierWorkload) float64 { return f * wl.mem }); ok && float64(k) <= 0.9*row.Count {
			lo = f
		} else {
			hi = f
		}
	}
	row.BreakEven = lo
	return row, nil
}

// WriteFrontier writes the rows as the Markdown table of
// results/admission-round5/README.md.
func WriteFrontier(w io.Writer, rows []FrontierRow) error {
	var b strings.Builder
	b.WriteString("| cell | reference | reference count (sum) | 0.9 × | oracle min at M | at 0.9 M | at min M seen | largest memory factor f that still allows 0.9 × |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	n := func(k int) string {
		if k < 0 {
			return "none"
		}
		return strconv.Itoa(k)
	}
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %.0f (%d workloads) | %.0f | %s | %s | %s | %.3f |\n", r.Cell, r.Reference, r.Count,
			r.Workloads, 0.9*r.Count, n(r.AtMem), n(r.AtMem90), n(r.AtMinMem), r.BreakEven)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
