package ppo

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Columns of progress.csv that PlotLearningCurve draws.
const (
	keyTimesteps  = "time/total_timesteps"
	keyEpRewMean  = "rollout/ep_rew_mean"
	keyEvalReward = "eval/mean_reward"
)

// Colours of the learning-curve series (Okabe-Ito blue and vermilion, readable by
// colour-blind readers).
var (
	trainColor = color.RGBA{R: 0x00, G: 0x72, B: 0xb2, A: 0xff}
	evalColor  = color.RGBA{R: 0xd5, G: 0x5e, B: 0x00, A: 0xff}
	// the GPU selection policy's validation (Okabe-Ito bluish green)
	selectColor = color.RGBA{R: 0x00, G: 0x9e, B: 0x73, A: 0xff}
)

// Size of the learning-curve image: 6 x 4 inches, 576 x 384 pixels at vg's 96 dpi.
const (
	plotWidth  = 6 * vg.Inch
	plotHeight = 4 * vg.Inch
)

// PlotLearningCurve draws the learning curve recorded in a progress.csv into a PNG at outPNG:
// rollout/ep_rew_mean (mean training-episode reward) against time/total_timesteps, and
// eval/mean_reward (mean greedy evaluation reward) when the file has that column. Rows where a
// value is empty or not finite are skipped. An empty title means "Learning curve". The image
// is written to a temporary file renamed over outPNG.
//
// It fails if the file has no time/total_timesteps column or no point to draw.
func PlotLearningCurve(progressCSV, outPNG, title string) error {
	prog, err := ReadProgress(progressCSV)
	if err != nil {
		return fmt.Errorf("learning curve: %w", err)
	}
	steps, ok := prog.Column(keyTimesteps)
	if !ok {
		return fmt.Errorf("learning curve: %s: no %s column", progressCSV, keyTimesteps)
	}
	var series []curveSeries
	for _, c := range []struct {
		key, label string
		color      color.Color
		points     bool
	}{
		{key: keyEpRewMean, label: "training (" + keyEpRewMean + ")", color: trainColor},
		{key: keyEvalReward, label: "validation (" + keyEvalReward + ")", color: evalColor, points: true},
	} {
		if ys, ok := prog.Column(c.key); ok {
			series = append(series, curveSeries{label: c.label, xs: steps, ys: ys, color: c.color, points: c.points})
		}
	}
	if err := drawCurves(outPNG, title, "mean episode reward", series); err != nil {
		if errors.Is(err, errNoPoint) {
			return fmt.Errorf("learning curve: %s: no %s or %s value to draw", progressCSV, keyEpRewMean, keyEvalReward)
		}
		return err
	}
	return nil
}

// curveSeries is one line of a learning-curve plot: ys against xs (pairs
// with a NaN or infinite member are skipped), with points when points.
type curveSeries struct {
	label  string
	xs, ys []float64
	color  color.Color
	points bool
}

// errNoPoint: drawCurves had no finite point to draw.
var errNoPoint = errors.New("no point to draw")

// drawCurves draws series against environment steps into a PNG at outPNG
// (written to a temporary file renamed over it); an empty title means
// "Learning curve". It fails with errNoPoint when no series has a finite
// point.
func drawCurves(outPNG, title, yLabel string, series []curveSeries) error {
	if title == "" {
		title = "Learning curve"
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "environment steps"
	p.Y.Label.Text = yLabel
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.Left = true

	drawn := 0
	for _, s := range series {
		xys := finitePoints(s.xs, s.ys)
		if len(xys) == 0 {
			continue
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			return fmt.Errorf("learning curve: %s: %w", s.label, err)
		}
		line.Color = s.color
		line.Width = vg.Points(1.5)
		p.Add(line)
		if s.points {
			sc, err := plotter.NewScatter(xys)
			if err != nil {
				return fmt.Errorf("learning curve: %s: %w", s.label, err)
			}
			sc.Color = s.color
			sc.Shape = draw.CircleGlyph{}
			sc.Radius = vg.Points(2.5)
			p.Add(sc)
			p.Legend.Add(s.label, line, sc)
		} else {
			p.Legend.Add(s.label, line)
		}
		drawn += len(xys)
	}
	if drawn == 0 {
		return errNoPoint
	}
	// headroom above the curves for the legend in the top-left corner
	p.Y.Max += 0.25 * max(p.Y.Max-p.Y.Min, 1)

	wt, err := p.WriterTo(plotWidth, plotHeight, "png")
	if err != nil {
		return fmt.Errorf("learning curve: rendering: %w", err)
	}
	var buf bytes.Buffer
	if _, err := wt.WriteTo(&buf); err != nil {
		return fmt.Errorf("learning curve: rendering: %w", err)
	}
	if err := writeFileAtomic(outPNG, buf.Bytes()); err != nil {
		return fmt.Errorf("learning curve: %w", err)
	}
	return nil
}

// finitePoints pairs xs and ys, dropping pairs with a NaN or infinite member.
func finitePoints(xs, ys []float64) plotter.XYs {
	var xys plotter.XYs
	for i := range xs {
		x, y := xs[i], ys[i]
		if math.IsNaN(x) || math.IsInf(x, 0) || math.IsNaN(y) || math.IsInf(y, 0) {
			continue
		}
		xys = append(xys, plotter.XY{X: x, Y: y})
	}
	return xys
}
