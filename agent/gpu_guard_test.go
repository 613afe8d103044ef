package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/model"
	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

// guardSetup is the guard tests' workload (30 nodes of the default list), a
// random policy without a prior and the default environment.
func guardSetup(t *testing.T) (*sim.GPUWorkload, *model.Policy, env.GPUConfig) {
	t.Helper()
	pol, err := model.New(model.Config{NodeFeatures: env.GPUNodeFeatures, PodFeatures: env.GPUPodFeatures, Hidden: 16, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	return smallOpenb(t), pol, env.DefaultGPUConfig()
}

// TestEvaluateGPUGuardPinned: a random policy (no prior) under the pinned
// guard is the policy itself, bit for bit, on a list without gpu_spec, and
// FGD itself, bit for bit, on a list whose every pod is a GPU pod pinned
// to one model (every decision then involves a constraint); an unknown
// guard is an error.
func TestEvaluateGPUGuardPinned(t *testing.T) {
	ctx := context.Background()
	w, pol, ec := guardSetup(t)
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

// TestEvaluateGPUGuardCPU: a random policy (no prior) under the cpu guard
// is the policy itself, bit for bit, on a list without CPU-only pods, and
// FGD itself on a list of CPU-only pods only (every decision is then the
// guard's), where the unguarded random policy is not FGD.
func TestEvaluateGPUGuardCPU(t *testing.T) {
	ctx := context.Background()
	w, pol, ec := guardSetup(t)
	gpuOnly, cpuOnly := *w, *w
	gpuOnly.Pods, cpuOnly.Pods = nil, nil
	for _, p := range w.Pods {
		if p.GPU.Count > 0 {
			gpuOnly.Pods = append(gpuOnly.Pods, p)
		} else {
			cpuOnly.Pods = append(cpuOnly.Pods, p)
		}
	}
	if len(gpuOnly.Pods) == 0 || len(cpuOnly.Pods) < 10 {
		t.Fatalf("%d GPU and %d CPU-only pods: the test needs both", len(gpuOnly.Pods), len(cpuOnly.Pods))
	}
	plain, err := EvaluateGPU(ctx, pol, ec, &gpuOnly, 1.3, 5, "ppo")
	if err != nil {
		t.Fatal(err)
	}
	guarded, err := EvaluateGPUGuarded(ctx, pol, ec, &gpuOnly, 1.3, 5, "ppo", GuardCPU)
	if err != nil {
		t.Fatal(err)
	}
	if !sameGPUResult(plain, guarded) {
		t.Fatal("the cpu guard changed a run without CPU-only pods")
	}
	// CPU-only pods, repeated until they overflow the cluster's CPU, so
	// that where each goes decides how many fit
	var cpu int64
	for _, n := range w.Nodes {
		cpu += n.CPU
	}
	for k := 0; ; k++ {
		var asked int64
		for _, p := range cpuOnly.Pods {
			asked += p.CPU
		}
		if asked > cpu*3/2 {
			break
		}
		cpuOnly.Pods = append(cpuOnly.Pods, cpuOnly.Pods[k])
		cpuOnly.Pods[len(cpuOnly.Pods)-1].Name += "-copy"
	}
	for i := range cpuOnly.Pods {
		cpuOnly.Pods[i].Name = fmt.Sprintf("cpu-%d", i)
	}
	got, err := EvaluateGPUGuarded(ctx, pol, ec, &cpuOnly, 0, 5, "ppo", GuardCPU)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := sched.NewGPU(ec.Select, 5)
	want, err := sim.RunGPU(&cpuOnly, s, sim.GPURunConfig{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	if got.Placed != want.Placed || got.Failed != want.Failed {
		t.Errorf("guarded on CPU-only pods: %d placed, %d failed; %s %d, %d", got.Placed, got.Failed, ec.Select, want.Placed, want.Failed)
	}
	raw, err := EvaluateGPU(ctx, pol, ec, &cpuOnly, 0, 5, "ppo")
	if err != nil {
		t.Fatal(err)
	}
	if raw.Placed == want.Placed {
		t.Errorf("the random policy places %d CPU-only pods as %s does: the test cannot tell the guard acted", raw.Placed, ec.Select)
	}
}
