package env

import (
	"cmp"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/kubesim/kubesim/dataset"
	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

// TestLifetimeQuality measures the lifetime estimate (PodLifetime) on the
// default trace: over every decision for a batch pod (one with a duration)
// of kube-default replays of the default experiment's windows (load 1.3,
// warm start) on 20 machines, the Pearson and Spearman correlations of
// ln(1 + estimate) with ln(1 + true duration) in seconds, and the share of
// decisions per estimate level. Run with KUBESIM_LIFETIME_QUALITY=1 after
// `kubesim data --out data/default-trace`; docs/env.md quotes its output.
func TestLifetimeQuality(t *testing.T) {
	if os.Getenv("KUBESIM_LIFETIME_QUALITY") == "" {
		t.Skip("set KUBESIM_LIFETIME_QUALITY=1 to measure on data/default-trace")
	}
	dir := "../data/default-trace"
	windows := []string{"0h-2h", "6h-8h", "12h-14h", "18h-20h", "26h-28h", "32h-34h", "38h-40h", "44h-46h"}
	var est, truth []float64
	var levels [4]int
	var byLevel [4][2][]float64 // estimate, truth
	for _, ws := range windows {
		win, err := dataset.ParseWindow(ws)
		if err != nil {
			t.Fatal(err)
		}
		w, err := dataset.Load(dir, dataset.LoadOptions{Window: win, Machines: 20, LoadFactor: 1.3, WarmStart: true, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		cfg := sim.DefaultConfig()
		e, err := sim.New(w, cfg)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := sched.New(sched.NameKubeDefault, 1)
		for {
			p, ok := e.Next()
			if !ok {
				break
			}
			if p.Spec.Duration > 0 {
				le := e.Cluster().Lifetime(p)
				levels[le.Level]++
				v := le.LogMean
				if le.Level == sim.LifetimeNone {
					v = fallbackLifetime / durationScale
				}
				d := math.Log1p(p.Spec.Duration.Seconds())
				est = append(est, v)
				truth = append(truth, d)
				byLevel[le.Level][0] = append(byLevel[le.Level][0], v)
				byLevel[le.Level][1] = append(byLevel[le.Level][1], d)
			}
			e.Decide(s.Schedule(e.Cluster(), p))
		}
	}
	n := len(est)
	t.Logf("%d decisions for batch pods over %d windows", n, len(windows))
	for l, k := range levels {
		t.Logf("level %-5s %6.2f%% of decisions, pearson %.3f", sim.LifetimeLevel(l), 100*float64(k)/float64(n),
			pearson(byLevel[l][0], byLevel[l][1]))
	}
	t.Logf("pearson  %.3f", pearson(est, truth))
	t.Logf("spearman %.3f", pearson(ranks(est), ranks(truth)))
	var mae float64
	for i := range est {
		mae += math.Abs(est[i] - truth[i])
	}
	t.Logf("mean |ln(1+est) - ln(1+true)| %.3f (a factor of %.2f)", mae/float64(n), math.Exp(mae/float64(n)))
}

func pearson(x, y []float64) float64 {
	n := float64(len(x))
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx, my = mx/n, my/n
	var sxy, sxx, syy float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
		syy += (y[i] - my) * (y[i] - my)
	}
	return sxy / math.Sqrt(sxx*syy)
}

// ranks returns mid-ranks (ties share their mean rank).
func ranks(x []float64) []float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(x[a], x[b]) })
	r := make([]float64, len(x))
	for i := 0; i < len(idx); {
		j := i
		for j < len(idx) && x[idx[j]] == x[idx[i]] {
			j++
		}
		for k := i; k < j; k++ {
			r[idx[k]] = float64(i+j-1) / 2
		}
		i = j
	}
	return r
}
