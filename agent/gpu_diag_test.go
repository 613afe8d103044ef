package agent

import (
	"context"
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/model"
	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

// TestDiagnoseGPUHandMade: a node of model A with 2 GPUs, one of model B
// with 1, and two 1-GPU pods pinned to B (2 of the 3 GPUs arrive, so the
// snapshot is the end). Whatever the order, one pod takes B's GPU and the
// other fits nowhere: B is full, A idle, one B-pinned pod of 1,000 milli
// failed, one decision (the second had no node), taken as FGD takes it.
func TestDiagnoseGPUHandMade(t *testing.T) {
	w := &sim.GPUWorkload{Name: "hand", Models: []string{"A", "B"},
		Nodes: []sim.GPUNodeSpec{
			{Name: "a", CPU: 32000, Mem: 65536, GPUs: 2, Model: 0},
			{Name: "b", CPU: 32000, Mem: 65536, GPUs: 1, Model: 1},
		},
		Pods: []sim.GPUPodSpec{
			{Name: "p", CPU: 1000, Mem: 1024, GPU: sim.GPURequest{Count: 1, Milli: sim.GPUMilli, Models: 1 << 1}},
			{Name: "q", CPU: 1000, Mem: 1024, GPU: sim.GPURequest{Count: 1, Milli: sim.GPUMilli, Models: 1 << 1}},
		}}
	for seed := range uint64(4) {
		d, err := DiagnoseGPU(context.Background(), nil, env.DefaultGPUConfig(), w, 0, seed, "fgd")
		if err != nil {
			t.Fatal(err)
		}
		want := GPUDiag{Scheduler: "fgd", Arrived: float64(2000) / 3000 * 100,
			Models: []GPUModelState{{Model: "A", Nodes: 1, GPUs: 2, AllocMilli: 0, Idle: 2}, {Model: "B", Nodes: 1, GPUs: 1, AllocMilli: 1000, Idle: 0}},
			Failed: []GPUFailGroup{{Allowed: "B", Pods: 1, Milli: 1000}}, Decisions: 1}
		if !reflect.DeepEqual(d, want) {
			t.Fatalf("seed %d:\n got %+v\nwant %+v", seed, d, want)
		}
	}
}

// TestDiagnoseGPUPolicy: on 30 openb nodes at 1.3x, a zero correction over
// FGD's prior diagnoses exactly as FGD itself (no decision off FGD's node);
// a policy without the prior (random weights) leaves FGD's node on some
// decisions; in both, at the snapshot the allocated and the failed GPU
// demand add up to the arrived demand, and the models' nodes and GPUs to
// the cluster's.
func TestDiagnoseGPUPolicy(t *testing.T) {
	w := smallOpenb(t)
	ctx := context.Background()
	fgd, err := DiagnoseGPU(ctx, nil, env.DefaultGPUConfig(), w, 1.3, 7, "fgd")
	if err != nil {
		t.Fatal(err)
	}
	ec := env.DefaultGPUConfig()
	ec.Prior, ec.PriorScale, ec.PriorPending = sched.NameFGD, 5, -10
	zero, err := model.New(model.Config{NodeFeatures: env.GPUNodeFeatures, PodFeatures: env.GPUPodFeatures, Hidden: 16, Prior: true, ZeroInit: true, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	got, err := DiagnoseGPU(ctx, zero, ec, w, 1.3, 7, "fgd")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, fgd) {
		t.Fatalf("zero correction:\n got %+v\nwant FGD's %+v", got, fgd)
	}
	raw, err := model.New(model.Config{NodeFeatures: env.GPUNodeFeatures, PodFeatures: env.GPUPodFeatures, Hidden: 16, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	rnd, err := DiagnoseGPU(ctx, raw, env.DefaultGPUConfig(), w, 1.3, 7, "ppo")
	if err != nil {
		t.Fatal(err)
	}
	if rnd.OffSelect == 0 || rnd.OffSelect > rnd.Decisions || rnd.OffTied > rnd.OffSelect {
		t.Errorf("random policy: %d of %d decisions off FGD's node, %d of them tied", rnd.OffSelect, rnd.Decisions, rnd.OffTied)
	}
	capMilli := w.GPUCapacity() * sim.GPUMilli
	for _, d := range []GPUDiag{fgd, rnd} {
		if d.Arrived < 100 || d.Decisions == 0 {
			t.Fatalf("%s: snapshot at %.2f%% arrived, %d decisions", d.Scheduler, d.Arrived, d.Decisions)
		}
		var alloc, failed, gpus int64
		var nodes int
		for _, m := range d.Models {
			alloc += m.AllocMilli
			gpus += m.GPUs
			nodes += m.Nodes
			if m.AllocPct() < 0 || m.AllocPct() > 100 {
				t.Errorf("%s: model %s at %.2f%%", d.Scheduler, m.Model, m.AllocPct())
			}
		}
		for _, g := range d.Failed {
			failed += g.Milli
		}
		if arrived := d.Arrived / 100 * float64(capMilli); math.Abs(float64(alloc+failed)-arrived) > 0.5 {
			t.Errorf("%s: allocated %d + failed %d milli; arrived %.1f", d.Scheduler, alloc, failed, arrived)
		}
		if gpus != w.GPUCapacity() || nodes != 30 {
			t.Errorf("%s: models hold %d nodes, %d GPUs; the cluster 30, %d", d.Scheduler, nodes, gpus, w.GPUCapacity())
		}
		if _, err := json.Marshal(d); err != nil {
			t.Fatal(err)
		}
	}
}
