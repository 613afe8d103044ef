package ppo

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/kubesim/kubesim/agent"
	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/sim"
)

// TestTrainGPUStartIsCandidate trains with a large learning rate, scarce
// episodes in training and in validation: the first validation row is the
// untrained start at step 0 and equals FGD's allocation on the same four
// episodes (a zero correction is FGD), best.ckpt scores at least that, and
// it replays at its logged score; a best.ckpt of 0 updates is the start.
func TestTrainGPUStartIsCandidate(t *testing.T) {
	w := smallOpenb(t)
	cfg, ec := smallGPUConfig()
	cfg.LearningRate = 0.05
	ec.ScarceRate = 0.5
	out := t.TempDir()
	opts := GPUOptions{Out: out, ValSeeds: []uint64{1001, 1002}, ValInflate: 1.3, ValScarce: true}
	each := opts
	each.ValScarceEach = 1.2
	if n := len(valEpisodes(w, ec, each)); n != 4+2*len(env.NodeModels(w)) || len(env.NodeModels(w)) == 0 {
		t.Fatalf("validation with scarce_each: %d episodes for %d node models; want 4 + 2 per model", n, len(env.NodeModels(w)))
	}
	spec := opts
	spec.ValSpec = 0.3
	if se := valEpisodes(w, ec, spec); len(se) != 6 || se[4].seed != 1001 || se[5].seed != 1002 ||
		pinnedPods(se[4].w) <= pinnedPods(w) || pinnedPods(se[5].w) <= pinnedPods(w) {
		t.Fatalf("validation with spec_rate: want the four episodes, then each seed with drawn constraints")
	}
	eps := valEpisodes(w, ec, opts)
	if len(eps) != 4 || eps[0].w != w || eps[2].w == w || eps[2].seed != 1001 || reflect.DeepEqual(eps[2].w.Pods, w.Pods) {
		t.Fatalf("validation episodes: want the two seeds as they are, then a scarce draw of each")
	}
	sum, err := TrainGPU(context.Background(), cfg, ec, w, opts)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(out, "validation.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 3 {
		t.Fatalf("validation.csv: %d rows, %v; want a header, the start and later points", len(rows), err)
	}
	if rows[1][1] != "0" || rows[1][2] != rows[1][3] {
		t.Fatalf("first validation row %v; want steps 0 with the policy's score equal to FGD's", rows[1])
	}
	start, _ := strconv.ParseFloat(rows[1][2], 64)
	if sum.BestVal < sum.SelectVal || sum.BestVal < start-1e-4 {
		t.Errorf("best %v below the start %v (FGD %v): the start was not a candidate", sum.BestVal, start, sum.SelectVal)
	}
	pol, gec, err := agent.LoadGPU(filepath.Join(out, BestCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	v, err := validateGPU(context.Background(), pol, gec, w, opts)
	if err != nil {
		t.Fatal(err)
	}
	if v != sum.BestVal {
		t.Errorf("best.ckpt replays at %v; the run logged %v", v, sum.BestVal)
	}
	if pol.Meta()[metaUpdates] == "0" && v != sum.SelectVal {
		t.Errorf("best.ckpt is the start but scores %v, FGD %v", v, sum.SelectVal)
	}
}

// pinnedPods counts the pods of w that name GPU models.
func pinnedPods(w *sim.GPUWorkload) int {
	n := 0
	for _, p := range w.Pods {
		if p.GPU.Models != 0 {
			n++
		}
	}
	return n
}
