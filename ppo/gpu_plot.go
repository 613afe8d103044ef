package ppo

import (
	"fmt"
	"path/filepath"
)

// GPUCurvePNG is the learning curve TrainGPU draws into its run folder.
const GPUCurvePNG = CurvePNG

// PlotGPULearningCurve draws a GPU run's learning curve from the
// progress.csv and validation.csv of its folder dir into dir's
// learning_curve.png: the training episodes' GPU allocation at their end
// (ep_alloc_pct_mean, on subclusters), the greedy policy's allocation at
// 100% arrived on the validation seeds (val_alloc100) and the selection
// policy's on the same arrivals (select_alloc100), against environment
// steps. A run without validation draws the training line alone.
func PlotGPULearningCurve(dir, title string) error {
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
	if ys, ok := prog.Column("ep_alloc_pct_mean"); ok {
		series = append(series, curveSeries{label: "training episodes (ep_alloc_pct_mean)", xs: steps, ys: ys, color: trainColor})
	}
	if val, err := ReadProgress(filepath.Join(dir, "validation.csv")); err == nil {
		vs, _ := val.Column("steps")
		if ys, ok := val.Column("val_alloc100"); ok && vs != nil {
			series = append(series, curveSeries{label: "validation at 100% arrived (val_alloc100)", xs: vs, ys: ys, color: evalColor, points: true})
		}
		if ys, ok := val.Column("select_alloc100"); ok && vs != nil {
			series = append(series, curveSeries{label: "selection policy (select_alloc100)", xs: vs, ys: ys, color: selectColor})
		}
	}
	if err := drawCurves(filepath.Join(dir, GPUCurvePNG), title, "GPU allocation, %", series); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	return nil
}
