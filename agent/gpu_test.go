package agent

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/dataset"
	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/model"
	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

// smallOpenb is the default pod list on the first 30 GPU nodes of the
// openb node list.
func smallOpenb(t *testing.T) *sim.GPUWorkload {
	t.Helper()
	dir := filepath.Join("..", "dataset", "testdata", "openb", "default")
	tr, err := dataset.ReadOpenbCSV(filepath.Join(dir, "openb_node_list_gpu_node.csv"), filepath.Join(dir, "openb_pod_list_default.csv"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := tr.Workload()
	if err != nil {
		t.Fatal(err)
	}
	w.Nodes = w.Nodes[:30]
	return w
}

func saveGPU(t *testing.T, cfg model.Config, meta map[string]string) string {
	t.Helper()
	pol, err := model.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "gpu.ckpt")
	if err := pol.Save(path, meta); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestEvaluateGPUZeroCorrection loads a fresh GPU policy whose learned
// correction is zero (ZeroInit) over FGD's prior: greedy, it takes the
// node of the highest prior, so its run equals the environment driven by
// that rule, and FGD's own run, bit for bit.
func TestEvaluateGPUZeroCorrection(t *testing.T) {
	w := smallOpenb(t)
	ec := env.DefaultGPUConfig()
	ec.Prior, ec.PriorScale, ec.PriorPending = sched.NameFGD, 5, -10
	data, _ := json.Marshal(ec)
	path := saveGPU(t, model.Config{NodeFeatures: env.GPUNodeFeatures, PodFeatures: env.GPUPodFeatures, Hidden: 16, Prior: true, ZeroInit: true, Seed: 1},
		map[string]string{MetaGPUEnv: string(data)})
	pol, gotEC, err := LoadGPU(path)
	if err != nil {
		t.Fatal(err)
	}
	if gotEC.Prior != sched.NameFGD || gotEC.PriorScale != 5 {
		t.Fatalf("config %+v; want the checkpoint's", gotEC)
	}
	got, err := EvaluateGPU(context.Background(), pol, gotEC, w, 1.3, 7, "ppo")
	if err != nil {
		t.Fatal(err)
	}
	e, err := env.NewGPUEnv(gotEC, w)
	if err != nil {
		t.Fatal(err)
	}
	obs, err := e.Reset(7)
	if err != nil {
		t.Fatal(err)
	}
	var want *sim.GPUResult
	for want == nil {
		a := obs.N
		for i := range obs.N {
			if obs.Mask[i] && (a == obs.N || obs.Prior[i] > obs.Prior[a]) {
				a = i
			}
		}
		var info env.GPUInfo
		obs, _, _, info, err = e.Step(a)
		if err != nil {
			t.Fatal(err)
		}
		want = info.Result
	}
	// and that is FGD's own run: the prior breaks ties by rank as FGD does
	s, err := sched.NewGPU(sched.NameFGD, 7)
	if err != nil {
		t.Fatal(err)
	}
	fgd, err := sim.RunGPU(w, s, sim.GPURunConfig{Inflate: 1.3, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	for k := range fgd.AllocCurve {
		if math.Float64bits(got.AllocCurve[k]) != math.Float64bits(fgd.AllocCurve[k]) {
			t.Fatalf("alloc curve at %d: %v; FGD's %v", k, got.AllocCurve[k], fgd.AllocCurve[k])
		}
	}
	if got.Scheduler != "ppo" || got.Placed != want.Placed || got.Pods != want.Pods || len(got.AllocCurve) != sim.CurvePoints {
		t.Fatalf("policy: %s placed %d of %d; the prior's argmax: %d of %d", got.Scheduler, got.Placed, got.Pods, want.Placed, want.Pods)
	}
	for k := range got.AllocCurve {
		if math.Float64bits(got.AllocCurve[k]) != math.Float64bits(want.AllocCurve[k]) {
			t.Fatalf("alloc curve at %d: %v; want %v", k, got.AllocCurve[k], want.AllocCurve[k])
		}
	}
}

func TestLoadGPUErrors(t *testing.T) {
	// a CPU/memory checkpoint: the error names both feature widths
	cpu := saveGPU(t, model.Config{NodeFeatures: env.NodeFeatures, PodFeatures: env.PodFeatures, Hidden: 8}, nil)
	_, _, err := LoadGPU(cpu)
	for _, want := range []string{"14 node and 13 pod features", "CPU/memory policy", "17 and 16"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("LoadGPU(CPU/memory checkpoint) = %v; want it to say %q", err, want)
		}
	}
	// and the CPU/memory loader refuses a GPU checkpoint
	gpu := saveGPU(t, model.Config{NodeFeatures: env.GPUNodeFeatures, PodFeatures: env.GPUPodFeatures, Hidden: 8}, nil)
	if _, err := LoadPolicy(gpu); err == nil || !strings.Contains(err.Error(), "17 node and 16 pod features") {
		t.Errorf("LoadPolicy(GPU checkpoint) = %v; want the widths", err)
	}
	// a GPU checkpoint without its environment
	if _, _, err := LoadGPU(gpu); err == nil || !strings.Contains(err.Error(), MetaGPUEnv) {
		t.Errorf("LoadGPU without metadata = %v; want it to name %s", err, MetaGPUEnv)
	}
	bad := saveGPU(t, model.Config{NodeFeatures: env.GPUNodeFeatures, PodFeatures: env.GPUPodFeatures, Hidden: 8},
		map[string]string{MetaGPUEnv: `{"select": "tetris"}`})
	if _, _, err := LoadGPU(bad); err == nil || !strings.Contains(err.Error(), "select") {
		t.Errorf("LoadGPU with a bad config = %v; want it to name select", err)
	}
}
