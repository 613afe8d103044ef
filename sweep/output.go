package sweep

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kubesim/kubesim/internal/atomicfile"
	"gopkg.in/yaml.v3"
)

// writeJSON writes v as indented JSON, atomically.
func writeJSON(path string, v any) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", " ")
		return enc.Encode(v)
	})
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// writeSpec writes spec.yaml: every grid point's spec as expanded, with the
// build and the data manifests' hashes.
func (p *Plan) writeSpec(path string) error {
	type point struct {
		Settings []Setting `yaml:"settings,omitempty"`
		Spec     *Spec     `yaml:"spec"`
	}
	doc := struct {
		Name      string            `yaml:"name"`
		Build     Build             `yaml:"build"`
		Manifests map[string]string `yaml:"data_manifest_sha256,omitempty"`
		Points    []point           `yaml:"points"`
	}{Name: p.Spec.Name, Build: p.Build, Manifests: p.Manifests}
	for _, s := range p.Points {
		doc.Points = append(doc.Points, point{Settings: s.Settings, Spec: s})
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		enc := yaml.NewEncoder(w)
		enc.SetIndent(2)
		if err := enc.Encode(doc); err != nil {
			return err
		}
		return enc.Close()
	})
}

// pointRow is a replay's row with the grid point it belongs to.
type pointRow struct {
	point int
	Row
}

// suiteColumnKeys are the grid keys that a suite report spreads over its
// columns; any other grid key (eval.checkpoint, ppo.seed, ...) makes a
// report of its own, so that one report holds one policy.
var suiteColumnKeys = map[string]bool{"eval.nodes": true, "trace.load_factor": true}

// writeSuites writes the suite section of summary.md: one report (and
// plot) per family of grid points that differ only in suiteColumnKeys.
func writeSuites(b *strings.Builder, plots string, pf *planFile, rows []pointRow) error {
	var families []string
	byFamily := map[string][]SuiteObs{}
	for _, r := range rows {
		var fam, col []Setting
		for _, s := range pf.Points[r.point].Settings {
			switch {
			case s.Key == "eval.nodes":
			case suiteColumnKeys[s.Key]:
				col = append(col, s)
			default:
				fam = append(fam, s)
			}
		}
		f := Point(fam)
		if _, ok := byFamily[f]; !ok {
			families = append(families, f)
		}
		byFamily[f] = append(byFamily[f], SuiteObs{Group: Point(col), Row: r.Row})
	}
	for i, f := range families {
		rep := SummariseSuite(byFamily[f])
		title, file := pf.Name, SuitePlot
		if f != "" {
			title += " " + f
			file = fmt.Sprintf("suite-regimes-%d.png", i+1)
			fmt.Fprintf(b, "\n# Suite report %d: %s\n", i+1, f)
		}
		if err := WriteSuite(b, rep); err != nil {
			return err
		}
		fmt.Fprintf(b, "\n![totals per regime against the best single heuristic](%s/%s)\n", PlotsDir, file)
		if err := plotSuite(plots, title, file, rep); err != nil {
			return err
		}
	}
	return nil
}

// writeTables reads the rows of every cell of the plan from the cell
// folders of dirs and writes cells.csv, summary.md and the plots into out
// (and the summary to summary, when not nil). The learning curves come
// from the training folders of dirs.
func writeTables(out string, pf *planFile, dirs []string, summary io.Writer) error {
	var rows []pointRow
	cache := map[string][]Row{}
	for _, c := range pf.Cells {
		cr, ok := cache[c.Hash]
		if !ok {
			var err error
			found := false
			for _, d := range dirs {
				p := cellPath(d, c.Hash)
				if !exists(p) {
					continue
				}
				if err = readJSON(p, &cr); err != nil {
					return err
				}
				if err := checkCellRows(cr, c.Hash, c.Nodes, c.Seed, c.Workload); err != nil {
					return fmt.Errorf("%s is not the result of cell %s: %w (delete it to run the cell again)", p, c.Hash, err)
				}
				found = true
				break
			}
			if !found {
				return fmt.Errorf("cell %s (%s, %d nodes, seed %d) is in no folder of %s: a shard has not finished",
					c.Hash, c.Workload, c.Nodes, c.Seed, strings.Join(dirs, ", "))
			}
			cache[c.Hash] = cr
		}
		for _, r := range cr {
			rows = append(rows, pointRow{c.Point, r})
		}
	}
	plain := make([]Row, len(rows))
	for i, r := range rows {
		plain[i] = r.Row
	}
	err := atomicfile.Write(filepath.Join(out, CellsCSV), func(w io.Writer) error {
		return writeRowsCSV(w, pf.Keys, func(i int) []string {
			var v []string
			for _, s := range pf.Points[rows[i].point].Settings {
				v = append(v, s.Value)
			}
			return v
		}, plain)
	})
	if err != nil {
		return err
	}
	// one summary per grid point without its eval.nodes (sizes are the
	// tables of a summary)
	var groups []string
	byGroup := map[string][]Row{}
	firstPoint := map[string]int{}
	for _, r := range rows {
		var ss []Setting
		for _, s := range pf.Points[r.point].Settings {
			if s.Key != "eval.nodes" {
				ss = append(ss, s)
			}
		}
		g := Point(ss)
		if _, ok := byGroup[g]; !ok {
			groups = append(groups, g)
			firstPoint[g] = r.point
		}
		byGroup[g] = append(byGroup[g], r.Row)
	}
	plots := filepath.Join(out, PlotsDir)
	if err := os.MkdirAll(plots, 0o755); err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n", pf.Name)
	for _, g := range groups {
		pt := pf.Points[firstPoint[g]]
		title := pf.Name
		if g != "" {
			title += " " + g
		}
		fmt.Fprintf(&b, "\n## %s\n\n```\n", title)
		if pt.Compaction != nil {
			if err := WriteCompaction(&b, title, SummariseCompaction(byGroup[g]), pt.Compaction.Threshold); err != nil {
				return err
			}
			b.WriteString("```\n")
			continue
		}
		outside := func(n int) bool { return n < pt.MinNodes || n > pt.MaxNodes }
		metrics := MetricsFor(pt.Grace)
		tables := Summarise(byGroup[g], metrics)
		if err := WriteSummary(&b, title, tables, metrics, outside); err != nil {
			return err
		}
		b.WriteString("```\n")
		if err := plotSizes(plots, title, g, tables); err != nil {
			return err
		}
		if err := plotBars(plots, title, g, tables); err != nil {
			return err
		}
	}
	if slices.ContainsFunc(rows, func(r pointRow) bool { return r.Regime != "" }) {
		if err := writeSuites(&b, plots, pf, rows); err != nil {
			return err
		}
	}
	if err := plotLearning(filepath.Join(plots, "learning-curves.png"), pf.Train, dirs); err != nil {
		return err
	}
	if err := atomicfile.WriteBytes(filepath.Join(out, SummaryFile), []byte(b.String())); err != nil {
		return err
	}
	if summary != nil {
		if _, err := io.WriteString(summary, b.String()); err != nil {
			return err
		}
	}
	return nil
}
