package ppo

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
)

// ProgressTable is the content of a progress.csv file.
type ProgressTable struct {
	// Keys are the column names in file order.
	Keys []string
	// Rows[i][j] is row i's value of Keys[j]; an empty cell reads as NaN, as in pandas.
	Rows [][]float64
	// blank[i][j] reports that row i's cell of Keys[j] was empty.
	blank [][]bool
}

// errEmptyProgress reports a progress file without even a header.
var errEmptyProgress = errors.New("no header")

// ReadProgress reads a progress.csv. Every cell must be empty or a number (nan and inf
// included); errors name the file, line and column.
func ReadProgress(path string) (*ProgressTable, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cr := csv.NewReader(f)
	cr.ReuseRecord = true
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", path, errEmptyProgress)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	p := &ProgressTable{Keys: slices.Clone(header)}
	seen := map[string]bool{}
	for j, k := range p.Keys {
		if k == "" {
			return nil, fmt.Errorf("%s: line 1: column %d has an empty name", path, j+1)
		}
		if seen[k] {
			return nil, fmt.Errorf("%s: line 1: column %q appears twice", path, k)
		}
		seen[k] = true
	}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return p, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		line, _ := cr.FieldPos(0)
		row := make([]float64, len(rec))
		blank := make([]bool, len(rec))
		for j, cell := range rec {
			if cell == "" {
				row[j], blank[j] = math.NaN(), true
				continue
			}
			if row[j], err = strconv.ParseFloat(cell, 64); err != nil {
				return nil, fmt.Errorf("%s: line %d: column %q: %q is not a number", path, line, p.Keys[j], cell)
			}
		}
		p.Rows = append(p.Rows, row)
		p.blank = append(p.blank, blank)
	}
}

// Column returns key's values, one per row (NaN where the cell is empty), or nil and false if
// there is no such column.
func (p *ProgressTable) Column(key string) ([]float64, bool) {
	j := slices.Index(p.Keys, key)
	if j < 0 {
		return nil, false
	}
	col := make([]float64, len(p.Rows))
	for i, r := range p.Rows {
		col[i] = r[j]
	}
	return col, true
}
