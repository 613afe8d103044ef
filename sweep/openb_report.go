package sweep

import (
	"encoding/csv"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

// artifactPolicy maps the artifact's sc_policy labels to GPU scheduler names.
var artifactPolicy = map[string]string{
	"01-Random":        sched.NameRandom,
	"02-DotProd":       sched.NameDotProduct,
	"03-GpuClustering": sched.NameGPUClustering,
	"04-GpuPacking":    sched.NameGPUPacking,
	"05-BestFit":       sched.NameBestFit,
	"06-FGD":           sched.NameFGD,
}

// Expected holds the artifact's expected results: per pod list and
// scheduler, the curves of each seed.
type Expected struct {
	Alloc, Frag map[[2]string][]sim.Curve // key: pod list, scheduler
}

// ReadExpected reads the artifact's analysis_allo_discrete.csv and
// analysis_frag_discrete.csv from dir. Errors name the file and line.
func ReadExpected(dir string) (*Expected, error) {
	e := &Expected{}
	var err error
	if e.Alloc, err = readExpectedCSV(filepath.Join(dir, "analysis_allo_discrete.csv")); err != nil {
		return nil, err
	}
	if e.Frag, err = readExpectedCSV(filepath.Join(dir, "analysis_frag_discrete.csv")); err != nil {
		return nil, err
	}
	return e, nil
}

func readExpectedCSV(path string) (map[[2]string][]sim.Curve, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading expected results: %w", err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	head, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: header: %w", path, err)
	}
	col := func(name string) int {
		for i, h := range head {
			if h == name {
				return i
			}
		}
		return -1
	}
	wc, pc, c0 := col("workload"), col("sc_policy"), col("0")
	if wc < 0 || pc < 0 || c0 < 0 || c0+sim.CurvePoints > len(head) {
		return nil, fmt.Errorf("%s: header %q: want workload, sc_policy and the columns 0..%d", path, strings.Join(head, ","), sim.CurvePoints-1)
	}
	out := make(map[[2]string][]sim.Curve)
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		line, _ := r.FieldPos(0)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if len(rec) < c0+sim.CurvePoints {
			return nil, fmt.Errorf("%s:%d: %d fields, want at least %d", path, line, len(rec), c0+sim.CurvePoints)
		}
		name, ok := artifactPolicy[rec[pc]]
		if !ok {
			continue
		}
		c := make(sim.Curve, sim.CurvePoints)
		for k := range c {
			s := rec[c0+k]
			if s == "" {
				c[k] = math.NaN()
				continue
			}
			if c[k], err = strconv.ParseFloat(s, 64); err != nil {
				return nil, fmt.Errorf("%s:%d: column %d: %w", path, line, k, err)
			}
		}
		key := [2]string{strings.TrimPrefix(rec[wc], "openb_pod_list_"), name}
		out[key] = append(out[key], c)
	}
}

// at returns the values of curves at k.
func at(cs []sim.Curve, k int) []float64 {
	v := make([]float64, len(cs))
	for i, c := range cs {
		v[i] = c[k]
	}
	return v
}

// meanCurve returns the pointwise mean of curves (NaN where none has a value).
func meanCurve(cs []sim.Curve) sim.Curve {
	m := make(sim.Curve, sim.CurvePoints)
	for k := range m {
		m[k] = MeanCI(at(cs, k)).Mean
	}
	return m
}

// openbCurves groups the runs' curves by (pod list, scheduler).
func openbCurves(runs []OpenbRun) (alloc, frag map[[2]string][]sim.Curve) {
	alloc, frag = make(map[[2]string][]sim.Curve), make(map[[2]string][]sim.Curve)
	for _, r := range runs {
		k := [2]string{r.PodList, r.Scheduler}
		alloc[k] = append(alloc[k], r.AllocCurve)
		frag[k] = append(frag[k], r.FragCurve)
	}
	return alloc, frag
}

// writeCurvesCSV writes one row per run and curve: pod list, scheduler,
// seed, curve (gpu_alloc or gpu_frag, % of GPU capacity), then the values
// at arrived 0..130% (empty where the run has none).
func writeCurvesCSV(w io.Writer, runs []OpenbRun) error {
	cw := csv.NewWriter(w)
	head := []string{"pod_list", "scheduler", "seed", "curve"}
	for k := range sim.CurvePoints {
		head = append(head, strconv.Itoa(k))
	}
	cw.Write(head)
	for _, r := range runs {
		for _, c := range []struct {
			name string
			v    sim.Curve
		}{{"gpu_alloc", r.AllocCurve}, {"gpu_frag", r.FragCurve}} {
			if (r.Scheduler == BoundName || r.Scheduler == HindsightName) && c.name == "gpu_frag" {
				continue // the bounds are on allocation only
			}
			row := []string{r.PodList, r.Scheduler, strconv.FormatUint(r.Seed, 10), c.name}
			for _, x := range c.v {
				if math.IsNaN(x) {
					row = append(row, "")
				} else {
					row = append(row, strconv.FormatFloat(x, 'f', 3, 64))
				}
			}
			cw.Write(row)
		}
	}
	cw.Flush()
	return cw.Error()
}

func openbCI(iv Interval) string {
	switch {
	case math.IsNaN(iv.Mean):
		return "n/a"
	case math.IsNaN(iv.Half):
		return fmt.Sprintf("%.2f", iv.Mean)
	}
	return fmt.Sprintf("%.2f ± %.2f", iv.Mean, iv.Half)
}

func openbDiff(d float64) string {
	if math.IsNaN(d) {
		return "n/a"
	}
	return fmt.Sprintf("%+.2f", d)
}

// OpenbSummary formats the tables of an openb experiment: for each pod
// list, GPU allocation and fragmentation at 100% and 130% arrived (mean ±
// 95% interval over seeds) and, with exp, the artifact's means and the
// differences; then, with exp, the difference of GPU allocation at 100%
// for every pod list and scheduler, and whether the ranking agrees.
func OpenbSummary(s *OpenbSpec, runs []OpenbRun, exp *Expected) string {
	alloc, frag := openbCurves(runs)
	var b strings.Builder
	fmt.Fprintf(&b, "# %s: FGD's experiment on the openb traces\n\n", s.Name)
	fmt.Fprintf(&b, "Pods shuffled by the seed and inflated to %.2f x the GPU capacity by clones (sim.RunGPU); %d seeds (%v); "+
		"GPU allocation and FGD's GPU fragmentation in %% of the cluster's GPUs at 100%% and 130%% arrived GPU demand, "+
		"mean ± 95%% interval over seeds.", s.Inflate, len(s.Seeds), s.Seeds)
	b.WriteString(s.Mix.describe())
	if exp != nil {
		b.WriteString(" `published` is the mean of the artifact's expected results (10 seeds), Δ ours minus published.")
	}
	b.WriteString("\n")
	for _, p := range s.PodLists {
		fmt.Fprintf(&b, "\n## %s\n\n", p)
		if exp != nil {
			b.WriteString("| scheduler | alloc @100% | published | Δ | alloc @130% | published | Δ | frag @100% | published | frag @130% | published |\n")
			b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
		} else {
			b.WriteString("| scheduler | alloc @100% | alloc @130% | frag @100% | frag @130% |\n|---|---|---|---|---|\n")
		}
		for _, name := range openbRows(s) {
			k := [2]string{p, name}
			a100, a130 := MeanCI(at(alloc[k], 100)), MeanCI(at(alloc[k], 130))
			f100, f130 := MeanCI(at(frag[k], 100)), MeanCI(at(frag[k], 130))
			if exp == nil {
				fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", name, openbCI(a100), openbCI(a130), openbCI(f100), openbCI(f130))
				continue
			}
			pa100, pa130 := MeanCI(at(exp.Alloc[k], 100)).Mean, MeanCI(at(exp.Alloc[k], 130)).Mean
			pf100, pf130 := MeanCI(at(exp.Frag[k], 100)).Mean, MeanCI(at(exp.Frag[k], 130)).Mean
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", name,
				openbCI(a100), openbPub(pa100), openbDiff(a100.Mean-pa100), openbCI(a130), openbPub(pa130), openbDiff(a130.Mean-pa130),
				openbCI(f100), openbPub(pf100), openbCI(f130), openbPub(pf130))
		}
	}
	writeHeadroom(&b, s, alloc)
	writeHindsight(&b, s, alloc)
	writePolicyTable(&b, s, alloc)
	writeWaste(&b, s, runs)
	if exp == nil {
		return b.String()
	}
	b.WriteString("\n## GPU allocation at 100% arrived: ours minus published\n\n")
	b.WriteString("Per pod list, the difference of the means (points of GPU capacity); `rank` says whether the six policies " +
		"come in the same order as in the published means (`=`) or not (the swapped pairs).\n\n| pod list |")
	var policies []string // those the artifact ran
	for _, n := range s.Schedulers {
		if n != sched.NameKubeDefault {
			policies = append(policies, n)
		}
	}
	for _, n := range policies {
		fmt.Fprintf(&b, " %s |", n)
	}
	b.WriteString(" max |Δ| | rank |\n|---|")
	for range policies {
		b.WriteString("---|")
	}
	b.WriteString("---|---|\n")
	for _, p := range s.PodLists {
		fmt.Fprintf(&b, "| %s |", p)
		worst := 0.0
		ours, pub := make([]float64, len(policies)), make([]float64, len(policies))
		for i, n := range policies {
			k := [2]string{p, n}
			ours[i], pub[i] = MeanCI(at(alloc[k], 100)).Mean, MeanCI(at(exp.Alloc[k], 100)).Mean
			d := ours[i] - pub[i]
			if !math.IsNaN(d) {
				worst = math.Max(worst, math.Abs(d))
			}
			fmt.Fprintf(&b, " %s |", openbDiff(d))
		}
		fmt.Fprintf(&b, " %.2f | %s |\n", worst, rankAgreement(policies, ours, pub))
	}
	return b.String()
}

func openbPub(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", v)
}

// rankAgreement compares the orders of ours and pub: "=" when every pair
// is ordered alike, else the pairs ordered differently.
func rankAgreement(names []string, ours, pub []float64) string {
	var swapped []string
	for i := range names {
		for j := i + 1; j < len(names); j++ {
			if math.IsNaN(pub[i]) || math.IsNaN(pub[j]) {
				continue
			}
			if (ours[i] < ours[j]) != (pub[i] < pub[j]) {
				swapped = append(swapped, names[i]+"/"+names[j])
			}
		}
	}
	if len(swapped) == 0 {
		return "="
	}
	return strings.Join(swapped, ", ")
}

// plotOpenb draws, per pod list, the mean GPU allocation and fragmentation
// curves of each scheduler against the arrived workload, as the paper's
// Fig. 9(a); the artifact's expected means, when given, as dashed lines
// of the same colour.
func plotOpenb(dir string, s *OpenbSpec, runs []OpenbRun, exp *Expected) error {
	alloc, frag := openbCurves(runs)
	for _, p := range s.PodLists {
		for _, m := range []struct {
			key, label string
			ours       map[[2]string][]sim.Curve
			pub        map[[2]string][]sim.Curve
		}{
			{"gpu_alloc", "GPU allocation (% of GPUs)", alloc, nil},
			{"gpu_frag", "GPU fragmentation (% of GPUs, FGD's measure)", frag, nil},
		} {
			if exp != nil {
				m.pub = exp.Alloc
				if m.key == "gpu_frag" {
					m.pub = exp.Frag
				}
			}
			pl := plot.New()
			pl.Title.Text = fmt.Sprintf("%s: openb %s, mean of %d seeds", s.Name, p, len(s.Seeds))
			if exp != nil {
				pl.Title.Text += " (dashed: published)"
			}
			pl.X.Label.Text = "arrived workload (% of GPU capacity)"
			pl.Y.Label.Text = m.label
			pl.Add(plotter.NewGrid())
			// legends where the curves are not: allocation rises to a
			// plateau (bottom right is free), fragmentation falls
			// (bottom left is free)
			pl.Legend.Top, pl.Legend.Left = false, m.key == "gpu_frag"
			if m.key == "gpu_alloc" {
				pl.X.Label.Text += ", from 70%"
			}
			for i, name := range openbRows(s) {
				c := palette[i%len(palette)]
				if name == BoundName {
					c = color.RGBA{A: 0xff} // black
				}
				for dashed, cs := range [][]sim.Curve{m.ours[[2]string{p, name}], m.pub[[2]string{p, name}]} {
					if len(cs) == 0 {
						continue
					}
					mc := meanCurve(cs)
					var xy plotter.XYs
					for k, v := range mc {
						if !math.IsNaN(v) {
							xy = append(xy, plotter.XY{X: float64(k), Y: v})
						}
					}
					if name == HindsightName && dashed == 0 && len(xy) > 0 {
						// computed at a few levels only: black points
						sc, err := plotter.NewScatter(xy)
						if err != nil {
							return fmt.Errorf("plot %s %s: %w", p, m.key, err)
						}
						sc.GlyphStyle.Color, sc.GlyphStyle.Radius = color.RGBA{A: 0xff}, vg.Points(3)
						sc.GlyphStyle.Shape = draw.CircleGlyph{}
						pl.Legend.Add(name, sc)
						pl.Add(sc)
						continue
					}
					if len(xy) < 2 {
						continue
					}
					l, err := plotter.NewLine(xy)
					if err != nil {
						return fmt.Errorf("plot %s %s: %w", p, m.key, err)
					}
					l.Color, l.Width = c, vg.Points(1.2)
					if dashed == 1 {
						l.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
					} else {
						pl.Legend.Add(name, l)
					}
					pl.Add(l)
				}
			}
			if m.key == "gpu_alloc" {
				// every policy places every pod until the cluster fills:
				// the curves part from about 70% arrived on (lines are
				// clipped to the axes)
				pl.X.Min, pl.Y.Min, pl.X.Max, pl.Y.Max = 70, 70, 130, 100
			}
			if err := savePlot(pl, filepath.Join(dir, slug(p)+"-"+m.key+".png")); err != nil {
				return err
			}
		}
	}
	return nil
}
