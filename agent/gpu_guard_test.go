package agent

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/model"
	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

// TestEvaluateGPUGuardPinned: a random policy (no prior) under the pinned
// guard is the policy itself, bit for bit, on a list without gpu_spec, and
// FGD itself, bit for bit, on a list whose every pod is a GPU pod pinned
// to one model (every decision then involves a constraint); an unknown
// guard is an error.
func TestEvaluateGPUGuardPinned(t *testing.T) {
	ctx := context.Background()
	w := smallOpenb(t)
	pol, err := model.New(model.Config{NodeFeatures: env.GPUNodeFeatures, PodFeatures: env.GPUPodFeatures, Hidden: 16, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	ec := env.DefaultGPUConfig()
	plain, err := EvaluateGPU(ctx, pol, ec, w, 1.3, 5, "ppo")
	if err != nil {
		t.Fatal(err)
	}
	guarded, err := EvaluateGPUGuarded(ctx, pol, ec, w, 1.3, 5, "ppo", GuardPinned)
	if err != nil {
		t.Fatal(err)
	}
	if !sameGPUResult(plain, guarded) {
		t.Fatal("the guard changed a run on a list without gpu_spec")
	}
	fgd0, err := runFGD(w, 5)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Scheduler = fgd0.Scheduler; sameGPUResult(plain, fgd0) {
		t.Fatal("the random policy is FGD: the test cannot tell the guard acted")
	}

	// every GPU pod pinned to the model of the first node (the 30 nodes
	// hold more than one model, so it is a strict subset); no CPU-only pod
	pinned := *w
	pinned.Pods = nil
	models := map[int8]bool{}
	for _, n := range w.Nodes {
		models[n.Model] = true
	}
	if len(models) < 2 {
		t.Fatalf("the test cluster has models %v; want several", models)
	}
	for _, p := range w.Pods {
		if p.GPU.Count > 0 {
			p.GPU.Models = 1 << uint(w.Nodes[0].Model)
			pinned.Pods = append(pinned.Pods, p)
		}
	}
	got, err := EvaluateGPUGuarded(ctx, pol, ec, &pinned, 1.3, 5, "ppo", GuardPinned)
	if err != nil {
		t.Fatal(err)
	}
	want, err := runFGD(&pinned, 5)
	if err != nil {
		t.Fatal(err)
	}
	got.Scheduler = want.Scheduler
	if !sameGPUResult(got, want) {
		t.Fatalf("guarded on an all-pinned list: %d placed, %d failed; FGD %d, %d", got.Placed, got.Failed, want.Placed, want.Failed)
	}
	if _, err := EvaluateGPUGuarded(ctx, pol, ec, w, 1.3, 5, "ppo", "always"); err == nil {
		t.Error("guard \"always\" accepted")
	}
}

// sameGPUResult compares two results as their JSON (a curve's missing
// points are NaN, which reflect.DeepEqual never finds equal).
func sameGPUResult(a, b sim.GPUResult) bool {
	ja, erra := json.Marshal(a)
	jb, errb := json.Marshal(b)
	return erra == nil && errb == nil && string(ja) == string(jb)
}

func runFGD(w *sim.GPUWorkload, seed uint64) (sim.GPUResult, error) {
	s, err := sched.NewGPU(sched.NameFGD, seed)
	if err != nil {
		return sim.GPUResult{}, err
	}
	return sim.RunGPU(w, s, sim.GPURunConfig{Inflate: 1.3, Seed: seed})
}
