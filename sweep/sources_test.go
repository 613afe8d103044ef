package sweep

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/env"
)

// TestTrainLoadFactors checks that with trace.train_load_factors every
// training episode is the episode of the same window and seed at one of the
// listed load factors, that both of two factors occur, and that the
// evaluation's load_factor is not what training draws.
func TestTrainLoadFactors(t *testing.T) {
	dir := smallTrace(t)
	spec, err := ParseSpec([]byte(fmt.Sprintf(`
trace: {dir: %s, load_factor: 1.3, train_load_factors: [1, 2]}
windows: {train: [0h-1h, 1h-2h], validation: [2h-3h], test: [4h-5h]}
cluster: {min_nodes: 3, max_nodes: 5}
`, dir)))
	if err != nil {
		t.Fatal(err)
	}
	train, _, err := spec.Sources()
	if err != nil {
		t.Fatal(err)
	}
	at := func(f float64) env.Source {
		tr := train.(env.Trace)
		tr.LoadFactors = nil
		tr.Options.LoadFactor = f
		return tr
	}
	light, heavy := at(1), at(2)
	seen := map[float64]int{}
	for seed := range uint64(16) {
		rng := func() *rand.Rand { return rand.New(rand.NewPCG(seed, 7)) }
		w, err := train.Episode(rng(), 4)
		if err != nil {
			t.Fatal(err)
		}
		a, err := light.Episode(rng(), 4)
		if err != nil {
			t.Fatal(err)
		}
		b, err := heavy.Episode(rng(), 4)
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Pods) >= len(b.Pods) {
			t.Fatalf("seed %d: %d pods at load 1, %d at load 2; want more at 2", seed, len(a.Pods), len(b.Pods))
		}
		switch len(w.Pods) {
		case len(a.Pods):
			seen[1]++
		case len(b.Pods):
			seen[2]++
		default:
			t.Fatalf("seed %d: training episode has %d pods, neither load 1's %d nor load 2's %d", seed, len(w.Pods), len(a.Pods), len(b.Pods))
		}
	}
	if seen[1] == 0 || seen[2] == 0 {
		t.Errorf("load factors drawn %v over 16 episodes; want both", seen)
	}
	for _, bad := range []string{"[0]", "[1, -1]", "[.inf]"} {
		_, err := ParseSpec([]byte(fmt.Sprintf("trace: {dir: %s, train_load_factors: %s}\n", dir, bad)))
		if err == nil || !strings.Contains(err.Error(), "trace.train_load_factors") {
			t.Errorf("train_load_factors: %s: error %v; want one naming the key", bad, err)
		}
	}
}

// TestTrainLoadFactorsShareTraining: with train_load_factors, grid points
// that differ only in trace.load_factor (the evaluation's load) share one
// training run per seed; without it each load trains its own.
func TestTrainLoadFactorsShareTraining(t *testing.T) {
	dir := smallTrace(t)
	for _, c := range []struct {
		extra string
		want  int
	}{{"train_load_factors: [1, 2]", 2}, {"dag: false", 4}} {
		path := filepath.Join(t.TempDir(), "s.yaml")
		os.WriteFile(path, []byte(fmt.Sprintf(`name: s
trace: {dir: %s, %s}
windows: {train: [0h-1h], validation: [2h-3h], test: [4h-5h]}
cluster: {min_nodes: 3, max_nodes: 5}
eval: {schedulers: [first-fit], nodes: [3], seeds: 1}
grid:
  trace.load_factor: [1, 1.3]
  ppo.seed: [1, 2]
`, dir, c.extra)), 0o644)
		s, err := ReadSpec(path)
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewPlan(s, Build{Code: "test"})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Train) != c.want || len(p.Eval) != 4 {
			t.Errorf("%s: %d training cells and %d evaluation cells; want %d and 4", c.extra, len(p.Train), len(p.Eval), c.want)
		}
	}
}
