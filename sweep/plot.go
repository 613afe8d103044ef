package sweep

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/kubesim/kubesim/internal/atomicfile"
	"github.com/kubesim/kubesim/ppo"
)

// PlotsDir is the folder of a sweep's PNG plots, in its output folder.
const PlotsDir = "plots"

// Headline are the metrics (keys of Focused) plotted against cluster size
// and in the bar charts.
var Headline = []string{"unschedulable", "high_prio_pending_p95_censored_ms", "frag_exp_cpu", "node_cpu_var_mean"}

// palette is Okabe-Ito's colour-blind-safe palette (ppo/plot.go's blue and
// vermilion first), then grey.
var palette = []color.RGBA{
	{0x00, 0x72, 0xb2, 0xff}, {0xd5, 0x5e, 0x00, 0xff}, {0x00, 0x9e, 0x73, 0xff}, {0xcc, 0x79, 0xa7, 0xff},
	{0xe6, 0x9f, 0x00, 0xff}, {0x56, 0xb4, 0xe9, 0xff}, {0xf0, 0xe4, 0x42, 0xff}, {0x00, 0x00, 0x00, 0xff},
	{0x99, 0x99, 0x99, 0xff},
}

// Size of every sweep plot: 6 x 4 inches, as ppo's learning curve.
const (
	plotW = 6 * vg.Inch
	plotH = 4 * vg.Inch
)

// slug makes a file-name part of a grid point label.
func slug(s string) string {
	if s == "" {
		return "all"
	}
	r := strings.NewReplacer(" ", "_", "=", "-", "/", "-", "[", "", "]", "", ",", "-")
	return r.Replace(s)
}

// metricIndex finds a Focused metric by key.
func metricIndex(key string) int {
	for i, m := range Focused {
		if m.Key == key {
			return i
		}
	}
	return -1
}

// savePlot renders p as a PNG at path, atomically.
func savePlot(p *plot.Plot, path string) error {
	wt, err := p.WriterTo(plotW, plotH, "png")
	if err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	var buf bytes.Buffer
	if _, err := wt.WriteTo(&buf); err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return atomicfile.WriteBytes(path, buf.Bytes())
}

// plotSizes draws each headline metric against cluster size for one group
// of tables (one grid point without eval.nodes): one line per scheduler,
// its 95% interval over seeds as a band. Groups with one size get no
// plot.
func plotSizes(dir, title, group string, tables []SizeSummary) error {
	if len(tables) < 2 {
		return nil
	}
	names := tables[0].Schedulers
	for _, key := range Headline {
		m := metricIndex(key)
		p := plot.New()
		p.Title.Text = title
		p.X.Label.Text = "cluster size (nodes)"
		p.Y.Label.Text = Focused[m].Header + " (mean, 95% CI over seeds)"
		p.Add(plotter.NewGrid())
		p.Legend.Top = true
		drawn := false
		for s, name := range names {
			var mid, lo, hi plotter.XYs
			for _, t := range tables {
				k := index(t.Schedulers, name)
				if k < 0 {
					continue
				}
				iv := t.Cells[k][m].Interval
				if math.IsNaN(iv.Mean) {
					continue
				}
				half := iv.Half
				if math.IsNaN(half) {
					half = 0
				}
				x := float64(t.Nodes)
				mid = append(mid, plotter.XY{X: x, Y: iv.Mean})
				lo = append(lo, plotter.XY{X: x, Y: iv.Mean - half})
				hi = append(hi, plotter.XY{X: x, Y: iv.Mean + half})
			}
			if len(mid) == 0 {
				continue
			}
			c := palette[s%len(palette)]
			band := append(lo, reverse(hi)...)
			poly, err := plotter.NewPolygon(band)
			if err != nil {
				return fmt.Errorf("plot %s: %w", key, err)
			}
			poly.Color = color.NRGBA{c.R, c.G, c.B, 0x38}
			poly.LineStyle.Width = 0
			line, pts, err := plotter.NewLinePoints(mid)
			if err != nil {
				return fmt.Errorf("plot %s: %w", key, err)
			}
			line.Color, line.Width = c, vg.Points(1.5)
			pts.Color, pts.Shape, pts.Radius = c, draw.CircleGlyph{}, vg.Points(2.5)
			p.Add(poly, line, pts)
			p.Legend.Add(name, line, pts)
			drawn = true
		}
		if !drawn {
			continue
		}
		if err := savePlot(p, filepath.Join(dir, slug(group)+"-"+key+".png")); err != nil {
			return err
		}
	}
	return nil
}

// plotBars draws, for one group (one load level when the load is a grid
// key), the first headline metric as bars: one bar per scheduler at each
// cluster size.
func plotBars(dir, title, group string, tables []SizeSummary) error {
	if len(tables) == 0 {
		return nil
	}
	key := Headline[0]
	m := metricIndex(key)
	names := tables[0].Schedulers
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = Focused[m].Header + " (mean over seeds)"
	p.Legend.Top = true
	w := vg.Points(min(60/float64(len(names)), 12))
	labels := make([]string, len(tables))
	for i, t := range tables {
		labels[i] = fmt.Sprintf("%d nodes", t.Nodes)
	}
	for s, name := range names {
		vals := make(plotter.Values, len(tables))
		for i, t := range tables {
			if k := index(t.Schedulers, name); k >= 0 && !math.IsNaN(t.Cells[k][m].Mean) {
				vals[i] = t.Cells[k][m].Mean
			}
		}
		b, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return fmt.Errorf("bar chart: %w", err)
		}
		b.Color = palette[s%len(palette)]
		b.LineStyle.Width = 0
		b.Offset = w * vg.Length(float64(s)-float64(len(names)-1)/2)
		p.Add(b)
		p.Legend.Add(name, b)
	}
	p.NominalX(labels...)
	// headroom above the bars for the legend, one line per scheduler
	p.Y.Max += float64(len(names)) * 0.07 * max(p.Y.Max-p.Y.Min, 1)
	return savePlot(p, filepath.Join(dir, slug(group)+"-bars.png"))
}

// plotLearning draws every training cell's validation reward against
// environment steps, read from the progress.csv of its run folder (the
// first of dirs that has it); labels name the cells. Cells without a
// progress file or a validation value are left out; nothing is written
// when none is left.
func plotLearning(path string, runs []planTrain, dirs []string) error {
	p := plot.New()
	p.Title.Text = "Learning curves of the training cells"
	p.X.Label.Text = "environment steps"
	p.Y.Label.Text = "validation reward (eval/mean_reward)"
	p.Add(plotter.NewGrid())
	drawn := false
	for i, r := range runs {
		var prog *ppo.ProgressTable
		for _, d := range dirs {
			pt, err := ppo.ReadProgress(filepath.Join(d, trainDir, r.Hash, "progress.csv"))
			if err == nil {
				prog = pt
				break
			}
		}
		if prog == nil {
			continue
		}
		xs, ok1 := prog.Column("time/total_timesteps")
		ys, ok2 := prog.Column("eval/mean_reward")
		if !ok1 || !ok2 {
			continue
		}
		var xys plotter.XYs
		for k := range xs {
			if !math.IsNaN(ys[k]) && !math.IsInf(ys[k], 0) && !math.IsNaN(xs[k]) {
				xys = append(xys, plotter.XY{X: xs[k], Y: ys[k]})
			}
		}
		if len(xys) == 0 {
			continue
		}
		line, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return fmt.Errorf("learning curves: %w", err)
		}
		c := palette[i%len(palette)]
		line.Color, line.Width = c, vg.Points(1.5)
		pts.Color, pts.Shape, pts.Radius = c, draw.CircleGlyph{}, vg.Points(2.5)
		p.Add(line, pts)
		label := r.Label
		if label == "" {
			label = r.Hash[:8]
		}
		p.Legend.Add(label, line, pts)
		drawn = true
	}
	if !drawn {
		return nil
	}
	return savePlot(p, path)
}

func index(names []string, name string) int {
	for i, n := range names {
		if n == name {
			return i
		}
	}
	return -1
}

func reverse(xys plotter.XYs) plotter.XYs {
	out := make(plotter.XYs, len(xys))
	for i, p := range xys {
		out[len(xys)-1-i] = p
	}
	return out
}
