package sweep

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kubesim/kubesim/dataset"
	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/ppo"
	"github.com/kubesim/kubesim/sim"
)

// smallTrace synthesises and converts a 6-hour trace of 8 machines.
func smallTrace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	csvDir, arrowDir := filepath.Join(dir, "csv"), filepath.Join(dir, "arrow")
	if err := dataset.Synth(context.Background(), dataset.SynthOptions{Machines: 8, Days: 0.25, Seed: 5}, csvDir); err != nil {
		t.Fatal(err)
	}
	if _, err := dataset.Convert(context.Background(), csvDir, arrowDir, dataset.ConvertOptions{}); err != nil {
		t.Fatal(err)
	}
	return arrowDir
}

// recorder is a Source that remembers every workload it hands out.
type recorder struct {
	src  env.Source
	mu   sync.Mutex
	seen []*sim.Workload
}

func (r *recorder) Episode(rng *rand.Rand, nodes int) (*sim.Workload, error) {
	w, err := r.src.Episode(rng, nodes)
	if err == nil {
		r.mu.Lock()
		r.seen = append(r.seen, w)
		r.mu.Unlock()
	}
	return w, err
}

// TestNoTestDataInTraining trains briefly, with validation (checkpoint
// selection) on, from the sources of a spec with three splits, and checks
// every workload that reached the trainer or its evaluator: each comes from
// a training or validation window, and none holds a batch pod of a test
// window (batch instances are unique to the time they ran).
func TestNoTestDataInTraining(t *testing.T) {
	dir := smallTrace(t)
	spec, err := ParseSpec([]byte(fmt.Sprintf(`
trace:
  dir: %s
windows:
  train: [0h-1h, 1h-2h]
  validation: [2h-3h]
  test: [4h-5h, 5h-6h]
cluster:
  min_nodes: 3
  max_nodes: 5
  max_steps: 64
ppo:
  n_envs: 2
  n_steps: 32
  batch_size: 32
  n_epochs: 1
  hidden: 16
  total_timesteps: 256
  eval_freq: 64
  eval_episodes: 2
`, dir)))
	if err != nil {
		t.Fatal(err)
	}
	train, val, err := spec.Sources()
	if err != nil {
		t.Fatal(err)
	}
	rt, rv := &recorder{src: train}, &recorder{src: val}
	tr, err := ppo.New(spec.PPO, spec.EnvConfig(), rt, rv, ppo.Options{Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := tr.Train(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rt.seen) == 0 || len(rv.seen) == 0 {
		t.Fatalf("%d training and %d validation workloads; want both used (best eval reward %v)", len(rt.seen), len(rv.seen), sum.BestEvalScore)
	}
	ws, err := spec.ResolveWindows()
	if err != nil {
		t.Fatal(err)
	}
	testPods := map[string]bool{}
	for _, win := range ws.Test {
		w, err := dataset.Load(dir, dataset.LoadOptions{Window: win})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range w.Pods {
			if p.Priority == sim.Low {
				testPods[p.Name] = true
			}
		}
	}
	if len(testPods) == 0 {
		t.Fatal("the test windows hold no batch pod; the check would be empty")
	}
	check := func(kind string, r *recorder, allowed []dataset.Window) {
		for _, w := range r.seen {
			ok := false
			for _, a := range allowed {
				ok = ok || strings.HasSuffix(w.Name, a.String())
			}
			if !ok {
				t.Errorf("%s workload %q is from none of the %s windows %v", kind, w.Name, kind, allowed)
			}
			for _, p := range w.Pods {
				if testPods[p.Name] {
					t.Fatalf("%s workload %q holds test pod %s", kind, w.Name, p.Name)
				}
			}
		}
	}
	check("training", rt, ws.Train)
	check("validation", rv, ws.Val)
}
