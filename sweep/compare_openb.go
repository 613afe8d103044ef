package sweep

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// OpenbCurvesCSV is the file of an openb sweep's output that RunOpenb
// writes (writeCurvesCSV) and Compare reads.
const OpenbCurvesCSV = "curves.csv"

// openbMetric is a metric of an openb output: a curve of curves.csv
// (gpu_alloc, gpu_frag) read at one arrived level ("gpu_alloc@100") or
// averaged over the integer levels lo..hi ("gpu_alloc@50-130", the
// objective: curve of training).
type openbMetric struct {
	curve  string
	lo, hi int
}

// parseOpenbMetric reads CURVE@LEVEL or CURVE@LO-HI.
func parseOpenbMetric(m string) (openbMetric, error) {
	curve, at, ok := strings.Cut(m, "@")
	if !ok || curve == "" {
		return openbMetric{}, fmt.Errorf("metric %q: an openb output's metric is CURVE@LEVEL or CURVE@LO-HI (gpu_alloc@100, gpu_alloc@50-130)", m)
	}
	los, his, isRange := strings.Cut(at, "-")
	lo, err1 := strconv.Atoi(los)
	hi, err2 := lo, error(nil)
	if isRange {
		hi, err2 = strconv.Atoi(his)
	}
	if err1 != nil || err2 != nil || lo < 0 || hi < lo {
		return openbMetric{}, fmt.Errorf("metric %q: the level %q is not an arrived %% or a range lo-hi of them", m, at)
	}
	return openbMetric{curve: curve, lo: lo, hi: hi}, nil
}

// openbCurvesPath is the curves.csv of an openb output given as its
// folder or the file, or "" when path is not one (a sweep's cells.csv or
// its folder).
func openbCurvesPath(path string) string {
	if filepath.Base(path) == OpenbCurvesCSV {
		return path
	}
	if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
		return ""
	}
	if _, err := os.Stat(filepath.Join(path, CellsCSV)); err == nil {
		return ""
	}
	if _, err := os.Stat(filepath.Join(path, OpenbCurvesCSV)); err == nil {
		return filepath.Join(path, OpenbCurvesCSV)
	}
	return ""
}

// IsOpenbOutput says whether path is an openb sweep's output (a folder
// with curves.csv and no cells.csv, or that file), whose Compare metric is
// CURVE@LEVEL rather than a column of cells.csv.
func IsOpenbOutput(path string) bool { return openbCurvesPath(path) != "" }

// DefaultOpenbMetric is Compare's metric for openb outputs when none is
// given: the GPU allocation at 100% arrived, issue 27's measure.
const DefaultOpenbMetric = "gpu_alloc@100"

// readOpenbSide reads the metric of the side's scheduler from curves.csv:
// one cell per pod list (in file order), one value per seed (the run's one
// workload). A level that a run's curve lacks (an empty bin) is an error
// naming the line.
func readOpenbSide(s Side, path, metric string) (*sideValues, error) {
	if s.Where != "" {
		return nil, fmt.Errorf("compare: %s: an openb output has no grid points (where %q)", path, s.Where)
	}
	m, err := parseOpenbMetric(metric)
	if err != nil {
		return nil, fmt.Errorf("compare: %s: %w", path, err)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("compare: %w", err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	head, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("compare: %s: header: %w", path, err)
	}
	col := func(name string) int { return slices.Index(head, name) }
	iList, iSched, iSeed, iCurve := col("pod_list"), col("scheduler"), col("seed"), col("curve")
	if iList < 0 || iSched < 0 || iSeed < 0 || iCurve < 0 {
		return nil, fmt.Errorf("compare: %s: no pod_list, scheduler, seed and curve columns: not an openb sweep's curves.csv", path)
	}
	levels := make([]int, 0, m.hi-m.lo+1)
	for k := m.lo; k <= m.hi; k++ {
		i := col(strconv.Itoa(k))
		if i < 0 {
			return nil, fmt.Errorf("compare: %s: no column for %d%% arrived (metric %s)", path, k, metric)
		}
		levels = append(levels, i)
	}
	out := newSideValues()
	out.meanTotal = true
	for line := 2; ; line++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("compare: %s: %w", path, err)
		}
		if len(rec) != len(head) {
			return nil, fmt.Errorf("compare: %s line %d: %d fields, the header has %d", path, line, len(rec), len(head))
		}
		if rec[iSched] != s.Scheduler || rec[iCurve] != m.curve {
			continue
		}
		var sum float64
		for _, i := range levels {
			v, err := strconv.ParseFloat(rec[i], 64)
			if err != nil || math.IsNaN(v) {
				return nil, fmt.Errorf("compare: %s line %d: %s at %s%% arrived = %q: not a number", path, line, m.curve, head[i], rec[i])
			}
			sum += v
		}
		// a run is one workload of its seed
		if cell := "pod_list=" + rec[iList]; !out.add(cell, rec[iSeed], "0", sum/float64(len(levels))) {
			return nil, fmt.Errorf("compare: %s line %d: a second %s row for %s seed %s", path, line, s.Scheduler, cell, rec[iSeed])
		}
	}
	if len(out.cells) == 0 {
		return nil, fmt.Errorf("compare: no %s rows of %s", m.curve, s)
	}
	return out, nil
}
