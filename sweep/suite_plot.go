package sweep

import (
	"fmt"
	"math"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// SuitePlot is the file name of the suite's plot in a sweep's plots
// folder (suite-regimes-K.png for the K-th report of a sweep with several).
const SuitePlot = "suite-regimes.png"

// plotSuite draws the suite report as grouped bars: per scheduler, its
// total unschedulable pods over the best single heuristic's, one bar per
// regime (burst, calm, all); the dashed line at 1 is the best single
// heuristic. The intervals are in the tables beside it.
func plotSuite(dir, title, file string, rep SuiteReport) error {
	if len(rep.Tables) == 0 {
		return nil
	}
	var names []string
	for _, ln := range rep.Tables[0].Lines {
		if ln.Scheduler != AdmissionBound {
			names = append(names, ln.Scheduler)
		}
	}
	p := plot.New()
	p.Title.Text = title + ": unschedulable pods, x the best single heuristic (" + rep.BestSingle + ")"
	p.Title.TextStyle.Font.Size = vg.Points(9)
	p.Y.Label.Text = "total / best single heuristic's total"
	p.Legend.Top = true
	w := vg.Points(min(36/float64(len(rep.Tables)), 10))
	for k, t := range rep.Tables {
		vals := make(plotter.Values, len(names))
		for i, name := range names {
			for _, ln := range t.Lines {
				if ln.Scheduler == name {
					if !math.IsNaN(ln.Ratio) && !math.IsInf(ln.Ratio, 0) {
						vals[i] = ln.Ratio // 0/0 when nothing was left unschedulable: no bar
					}
				}
			}
		}
		b, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return fmt.Errorf("suite plot: %w", err)
		}
		b.Color = palette[k%len(palette)]
		b.LineStyle.Width = 0
		b.Offset = w * vg.Length(float64(k)-float64(len(rep.Tables)-1)/2)
		p.Add(b)
		name := t.Regime + " windows"
		if t.Regime == "" {
			name = "all windows"
		}
		p.Legend.Add(name, b)
	}
	one, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: 1}, {X: float64(len(names)) - 0.5, Y: 1}})
	if err == nil {
		one.Dashes = plotutil.Dashes(1)
		p.Add(one)
	}
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = 0.6
	p.X.Tick.Label.XAlign = -0.9
	p.Y.Min = 0
	p.Y.Max += 0.25 * max(p.Y.Max-p.Y.Min, 1)
	return savePlot(p, filepath.Join(dir, file))
}
