package ppo

import (
	"fmt"
	"image/color"
	"path/filepath"
)

// GPUCurvePNG is the learning curve TrainGPU draws into its run folder.
const GPUCurvePNG = CurvePNG

// PlotGPULearningCurve draws a GPU run's learning curve from the
// progress.csv and validation.csv of its folder dir into dir's
// learning_curve.png: the training episodes' GPU allocation at their end
// (ep_alloc_pct_mean, on subclusters), the greedy policy's allocation at
// 100% arrived on the validation seeds (val_alloc100; val_curve, the mean
// over 50-130% arrived, under ObjectiveCurve) and the selection policy's
// on the same arrivals (select_alloc100 or select_curve), against environment
// steps. A run without validation draws the training line alone.
func PlotGPULearningCurve(dir, title string) error {
	return plotRunCurves(dir, title, "GPU allocation, %", []column{
		{key: "ep_alloc_pct_mean", label: "training episodes (ep_alloc_pct_mean)", color: trainColor},
	}, []column{
		{key: "val_alloc100", label: "validation at 100% arrived (val_alloc100)", color: evalColor, points: true},
		{key: "select_alloc100", label: "selection policy (select_alloc100)", color: selectColor},
		{key: "val_curve", label: "validation, mean over 50-130% arrived (val_curve)", color: evalColor, points: true},
		{key: "select_curve", label: "selection policy (select_curve)", color: selectColor},
	})
}

// column is a curve of plotRunCurves: a column of a run's CSV log.
type column struct {
	key, label string
	color      color.Color
	points     bool
}

// plotRunCurves draws the columns train of dir's progress.csv and val of
// its validation.csv (when it has one), each against its steps column,
// into dir's learning_curve.png; a column a log lacks is left out.
func plotRunCurves(dir, title, ylabel string, train, val []column) error {
	progress := filepath.Join(dir, "progress.csv")
	prog, err := ReadProgress(progress)
	if err != nil {
		return fmt.Errorf("learning curve: %w", err)
	}
	steps, ok := prog.Column("steps")
	if !ok {
		return fmt.Errorf("learning curve: %s: no steps column", progress)
	}
	var series []curveSeries
	add := func(p *ProgressTable, xs []float64, cols []column) {
		for _, c := range cols {
			if ys, ok := p.Column(c.key); ok && xs != nil {
				series = append(series, curveSeries{label: c.label, xs: xs, ys: ys, color: c.color, points: c.points})
			}
		}
	}
	add(prog, steps, train)
	if v, err := ReadProgress(filepath.Join(dir, "validation.csv")); err == nil {
		vs, _ := v.Column("steps")
		add(v, vs, val)
	}
	if err := drawCurves(filepath.Join(dir, CurvePNG), title, ylabel, series); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	return nil
}
