package sweep

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// CompareRow is one cell of a comparison: the mean of a metric over
// evaluation seeds under A and under B (each seed's value the mean over the
// cell's workloads, as in the tables) and their paired difference A - B.
type CompareRow struct {
	// Cell names the grid point and size ("trace.load_factor=1.3 nodes=100"),
	// or "total" for the sum over every cell.
	Cell    string
	A, B, D Interval
}

// Side is one side of a comparison: a sweep output (its folder or its
// cells.csv), the scheduler whose rows count ("ppo" for the learned
// policy) and, optionally, one grid setting that selects a grid point,
// "key=value" ("ppo.seed=2"): only rows with that value count, and the key
// no longer names the cells, so that two points of one sweep pair up.
type Side struct {
	Path, Scheduler, Where string
}

// Compare pairs the rows of two sweep outputs that replayed the same cells
// (same grid points, sizes, evaluation seeds and workloads): for every cell,
// the metric of a's scheduler against b's, paired by evaluation seed, and a
// last row "total" whose per-seed value is the sum over the cells. It is
// the validation rule's margin (docs/ppo.md): a candidate whose total
// interval does not exclude zero is no better than the incumbent. A cell of
// one side that the other lacks is an error that names it.
func Compare(a, b Side, metric string) ([]CompareRow, error) {
	va, err := readSide(a, metric)
	if err != nil {
		return nil, err
	}
	vb, err := readSide(b, metric)
	if err != nil {
		return nil, err
	}
	if va.meanTotal != vb.meanTotal {
		return nil, fmt.Errorf("compare: %s and %s: one is an openb output (curves.csv), the other a sweep's cells.csv", a.Path, b.Path)
	}
	// with the same rows on both sides, every cell has the same seeds on both
	if err := missing(a, va, b, vb); err != nil {
		return nil, err
	}
	if err := missing(b, vb, a, va); err != nil {
		return nil, err
	}
	var rows []CompareRow
	var totA, totB []float64
	for _, cell := range va.cells {
		ma, mb := va.perSeed(cell), vb.perSeed(cell)
		if totA == nil {
			totA, totB = make([]float64, len(ma)), make([]float64, len(mb))
		}
		if len(ma) != len(totA) {
			return nil, fmt.Errorf("compare: cell %s has %d evaluation seeds, the first cell %d: no total", cell, len(ma), len(totA))
		}
		for i := range ma {
			totA[i] += ma[i]
			totB[i] += mb[i]
		}
		rows = append(rows, CompareRow{Cell: cell, A: MeanCI(ma), B: MeanCI(mb), D: PairedCI(ma, mb)})
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("compare: no rows of %s", a)
	}
	if va.meanTotal {
		// an openb output's lists are not summed: their mean, per seed
		for i := range totA {
			totA[i] /= float64(len(rows))
			totB[i] /= float64(len(rows))
		}
		return append(rows, CompareRow{Cell: "mean", A: MeanCI(totA), B: MeanCI(totB), D: PairedCI(totA, totB)}), nil
	}
	rows = append(rows, CompareRow{Cell: "total", A: MeanCI(totA), B: MeanCI(totB), D: PairedCI(totA, totB)})
	return rows, nil
}

// missing reports a row that other has (want) and side lacks (have),
// naming both files.
func missing(side Side, have *sideValues, other Side, want *sideValues) error {
	for k := range want.vals {
		if _, ok := have.vals[k]; !ok {
			return fmt.Errorf("compare: %s has no %s row for %s (%s)", side.Path, side.Scheduler, k, other.Path)
		}
	}
	return nil
}

// WriteComparison prints rows as an aligned table, marking with ! a
// difference whose interval excludes zero. With family k > 1 the
// differences' intervals are Bonferroni intervals for k comparisons judged
// together (Interval.Widen), as a validation rule with k candidates needs;
// the means and the A and B columns are unchanged.
func WriteComparison(w io.Writer, a, b Side, metric string, rows []CompareRow, family int) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	// an openb metric (gpu_alloc@100) is in points of %: two decimals, and
	// for the allocation the share of B's unallocated GPUs that A allocates
	_, level, openb := strings.Cut(metric, "@")
	alloc := openb && strings.HasPrefix(metric, "gpu_alloc@")
	prec := 1
	if openb {
		prec = 2
	}
	if alloc {
		fmt.Fprintf(tw, "%s\tA\tB\tA - B\tof B's unallocated\t\n", metric)
	} else {
		fmt.Fprintf(tw, "%s\tA\tB\tA - B\t\n", metric)
	}
	for _, r := range rows {
		r.D = r.D.Widen(family)
		mark := ""
		if r.D.Excludes0() {
			mark = "!"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s%s\t", r.Cell, fmtIv(r.A, false, prec), fmtIv(r.B, false, prec), fmtIv(r.D, true, prec), mark)
		if alloc {
			fmt.Fprintf(tw, "%+.1f%%\t", 100*r.D.Mean/(100-r.B.Mean))
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	ci := "95% CI"
	if family > 1 {
		ci = fmt.Sprintf("%.4g%% CI for A - B (Bonferroni over %d comparisons; A and B 95%%)", 100-5/float64(family), family)
	}
	if openb {
		what := level + "% arrived"
		if strings.Contains(level, "-") {
			what = "the mean over " + level + "% arrived"
		}
		_, err := fmt.Fprintf(w, "A = %s, B = %s; %s, per pod list; mean ± %s over seeds, paired (! the interval excludes 0)\n", a, b, what, ci)
		return err
	}
	_, err := fmt.Fprintf(w, "A = %s, B = %s; mean ± %s over evaluation seeds, paired (! the interval excludes 0)\n", a, b, ci)
	return err
}

// String names the side as the comparison's footer does.
func (s Side) String() string {
	if s.Where != "" {
		return fmt.Sprintf("%s in %s where %s", s.Scheduler, s.Path, s.Where)
	}
	return s.Scheduler + " in " + s.Path
}

func fmtIv(iv Interval, sign bool, prec int) string {
	f := "%.*f±%.*f"
	if sign {
		f = "%+.*f±%.*f"
	}
	return fmt.Sprintf(f, prec, iv.Mean, prec, iv.Half)
}

// sideValues holds one side's metric by cell, seed and workload.
type sideValues struct {
	cells []string                        // in file order
	vals  map[string]float64              // cell|seed|workload -> value
	seeds map[string]map[string][]float64 // cell -> seed -> values over workloads
	// meanTotal: the last row is the mean over cells, not their sum (an
	// openb output's pod lists)
	meanTotal bool
}

func newSideValues() *sideValues {
	return &sideValues{vals: map[string]float64{}, seeds: map[string]map[string][]float64{}}
}

// add records v for the cell, seed and workload; false when that row was
// already recorded.
func (s *sideValues) add(cell, seed, workload string, v float64) bool {
	key := cell + "|" + seed + "|" + workload
	if _, dup := s.vals[key]; dup {
		return false
	}
	s.vals[key] = v
	if s.seeds[cell] == nil {
		s.seeds[cell] = map[string][]float64{}
		s.cells = append(s.cells, cell)
	}
	s.seeds[cell][seed] = append(s.seeds[cell][seed], v)
	return true
}

// perSeed is the cell's per-seed means over workloads, by seed number.
func (s *sideValues) perSeed(cell string) []float64 {
	bySeed := s.seeds[cell]
	keys := make([]string, 0, len(bySeed))
	for k := range bySeed {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y string) int {
		a, _ := strconv.Atoi(x)
		b, _ := strconv.Atoi(y)
		return a - b
	})
	out := make([]float64, len(keys))
	for i, k := range keys {
		var sum float64
		for _, v := range bySeed[k] {
			sum += v
		}
		out[i] = sum / float64(len(bySeed[k]))
	}
	return out
}

// readSide reads the metric column of the side's scheduler rows. The
// columns before "seed" (grid settings and nodes) name the cell.
func readSide(s Side, metric string) (*sideValues, error) {
	if p := openbCurvesPath(s.Path); p != "" {
		return readOpenbSide(s, p, metric)
	}
	path := s.Path
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, CellsCSV)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("compare: %w", err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	head, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("compare: %s: header: %w", path, err)
	}
	col := func(name string) int { return slices.Index(head, name) }
	iSeed, iWork, iSched, iMetric := col("seed"), col("workload"), col("scheduler"), col(metric)
	switch {
	case iSeed < 0 || iWork < 0 || iSched < 0:
		return nil, fmt.Errorf("compare: %s: no seed, workload and scheduler columns: not a sweep's cells.csv", path)
	case iMetric < 0:
		return nil, fmt.Errorf("compare: %s: no column %q", path, metric)
	}
	iWhere, want := -1, ""
	if s.Where != "" {
		key, value, ok := strings.Cut(s.Where, "=")
		if iWhere, want = col(key), value; !ok || iWhere < 0 || iWhere >= iSeed {
			return nil, fmt.Errorf("compare: %s: where %q: want key=value with key a grid setting of its columns %v", path, s.Where, head[:iSeed])
		}
	}
	out := newSideValues()
	for line := 2; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("compare: %s: %w", path, err)
		}
		if rec[iSched] != s.Scheduler || iWhere >= 0 && rec[iWhere] != want {
			continue
		}
		v, err := strconv.ParseFloat(rec[iMetric], 64)
		if err != nil || math.IsNaN(v) {
			return nil, fmt.Errorf("compare: %s line %d: %s = %q: not a number", path, line, metric, rec[iMetric])
		}
		parts := make([]string, 0, iSeed)
		for i := range iSeed {
			if i != iWhere {
				parts = append(parts, head[i]+"="+rec[i])
			}
		}
		cell := strings.Join(parts, " ")
		if !out.add(cell, rec[iSeed], rec[iWork], v) {
			return nil, fmt.Errorf("compare: %s line %d: a second %s row for %s seed %s workload %s", path, line, s.Scheduler, cell, rec[iSeed], rec[iWork])
		}
	}
	if len(out.cells) == 0 {
		return nil, fmt.Errorf("compare: no rows of %s", s)
	}
	return out, nil
}
