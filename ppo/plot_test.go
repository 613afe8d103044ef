package ppo

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// countColor counts the pixels of img exactly equal to c in its right third, away from the
// legend (top left), so only the data lines count.
func countColor(img image.Image, c color.Color) int {
	r0, g0, b0, a0 := c.RGBA()
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X + 2*b.Dx()/3; x < b.Max.X; x++ {
			r, g, bb, a := img.At(x, y).RGBA()
			if r == r0 && g == g0 && bb == b0 && a == a0 {
				n++
			}
		}
	}
	return n
}

// progressCSV builds a progress.csv body with rows i = 1..n: time/total_timesteps 2048*i,
// rollout/ep_rew_mean -30+0.5i if train, eval/mean_reward -20+i on every 5th row if eval.
func progressCSV(n int, train, eval bool) string {
	var sb strings.Builder
	sb.WriteString("eval/mean_reward,rollout/ep_rew_mean,time/total_timesteps\n")
	for i := 1; i <= n; i++ {
		if eval && i%5 == 0 {
			fmt.Fprint(&sb, -20+float64(i))
		}
		sb.WriteString(",")
		if train {
			fmt.Fprint(&sb, -30+0.5*float64(i))
		}
		fmt.Fprintf(&sb, ",%d\n", 2048*i)
	}
	return sb.String()
}

func TestPlotLearningCurve(t *testing.T) {
	tests := []struct {
		name        string
		csv         string
		train, eval bool // which series must appear
	}{
		{name: "training and evaluation", csv: progressCSV(40, true, true), train: true, eval: true},
		{name: "training only", csv: progressCSV(40, true, false), train: true},
		{name: "evaluation only", csv: progressCSV(40, false, true), eval: true},
		{name: "no eval column", csv: "rollout/ep_rew_mean,time/total_timesteps\n1,100\n2,200\n3,300\n", train: true},
		// Empty, nan and inf cells are skipped; the remaining points still make a line.
		{name: "gaps", csv: "rollout/ep_rew_mean,time/total_timesteps\n,100\n1,200\nnan,300\n2,400\ninf,500\n3,600\n", train: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, ProgressFile)
			if err := os.WriteFile(in, []byte(tc.csv), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "curve.png")
			if err := PlotLearningCurve(in, out, "test run"); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(bytes.NewReader(b))
			if err != nil {
				t.Fatalf("decoding %s: %v", out, err)
			}
			// 6 x 4 inches at 96 dpi.
			if got := img.Bounds().Size(); got != image.Pt(576, 384) {
				t.Errorf("image size %v; want 576x384", got)
			}
			// Each series spans the whole x range, so a series drawn leaves fully covered
			// pixels of its own colour in the right third; a series not drawn leaves none.
			for _, s := range []struct {
				name  string
				color color.Color
				want  bool
			}{{"training", trainColor, tc.train}, {"evaluation", evalColor, tc.eval}} {
				n := countColor(img, s.color)
				if s.want && n < 20 || !s.want && n != 0 {
					t.Errorf("%s series: %d pixels of its colour; want drawn = %v", s.name, n, s.want)
				}
			}
			// Rendering is deterministic.
			out2 := filepath.Join(dir, "again.png")
			if err := PlotLearningCurve(in, out2, "test run"); err != nil {
				t.Fatal(err)
			}
			if b2, err := os.ReadFile(out2); err != nil || !bytes.Equal(b, b2) {
				t.Errorf("second rendering differs (err %v)", err)
			}
		})
	}
}

// TestPlotLearningCurveReplaces checks the output replaces an existing file and leaves no
// temporary file behind.
func TestPlotLearningCurveReplaces(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, ProgressFile)
	if err := os.WriteFile(in, []byte(progressCSV(10, true, false)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "curve.png")
	if err := os.WriteFile(out, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := PlotLearningCurve(in, out, ""); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(bytes.NewReader(b)); err != nil {
		t.Errorf("replaced file is not a PNG: %v", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if fmt.Sprint(names) != "[curve.png progress.csv]" {
		t.Errorf("folder holds %v; want only curve.png and progress.csv", names)
	}
}

func TestPlotLearningCurveErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		csv     string // "" leaves the input missing
		out     string
		wantErr string
	}{
		{name: "missing input", out: "a.png", wantErr: "no such file"},
		{name: "no timesteps column", csv: "rollout/ep_rew_mean\n1\n", out: "b.png", wantErr: "no time/total_timesteps column"},
		{name: "nothing to draw", csv: "rollout/ep_rew_mean,time/total_timesteps\nnan,1\n,2\n", out: "c.png", wantErr: "no rollout/ep_rew_mean or eval/mean_reward value"},
		{name: "no series columns", csv: "time/total_timesteps\n1\n", out: "d.png", wantErr: "no rollout/ep_rew_mean or eval/mean_reward value"},
		{name: "bad cell", csv: "rollout/ep_rew_mean,time/total_timesteps\n1,x\n", out: "e.png", wantErr: "not a number"},
		{name: "output folder missing", csv: progressCSV(3, true, false), out: filepath.Join("nope", "f.png"), wantErr: "nope"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".csv")
			if tc.csv != "" {
				if err := os.WriteFile(in, []byte(tc.csv), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			out := filepath.Join(dir, tc.out)
			err := PlotLearningCurve(in, out, "")
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("PlotLearningCurve error = %v; want one containing %q", err, tc.wantErr)
			}
			if tc.name != "output folder missing" && !strings.Contains(err.Error(), in) {
				t.Errorf("error %v does not name the input %s", err, in)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was written despite the error", out)
			}
		})
	}
}

func BenchmarkPlotLearningCurve(b *testing.B) {
	dir := b.TempDir()
	in := filepath.Join(dir, ProgressFile)
	if err := os.WriteFile(in, []byte(progressCSV(500, true, true)), 0o644); err != nil {
		b.Fatal(err)
	}
	out := filepath.Join(dir, "curve.png")
	b.ReportAllocs()
	for b.Loop() {
		if err := PlotLearningCurve(in, out, ""); err != nil {
			b.Fatal(err)
		}
	}
}
