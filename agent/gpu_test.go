package agent

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/internal/openbtest"
	"github.com/kubesim/kubesim/model"
	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

// smallOpenb is the default pod list on the first 30 GPU nodes of the
// openb node list.
func smallOpenb(t *testing.T) *sim.GPUWorkload { return openbtest.Default(t, 30) }

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
// zeroGPUCheckpoint saves an untrained GPU policy whose correction starts
// at zero, with ec as its environment, and loads it back.
func zeroGPUCheckpoint(t *testing.T, ec env.GPUConfig) (*model.Policy, env.GPUConfig) {
	t.Helper()
	data, _ := json.Marshal(ec)
	path := saveGPU(t, model.Config{NodeFeatures: env.GPUNodeFeatures, PodFeatures: env.GPUPodFeatures, Hidden: 16, Prior: true, ZeroInit: true, Seed: 1},
		map[string]string{MetaGPUEnv: string(data)})
	pol, gotEC, err := LoadGPU(path)
	if err != nil {
		t.Fatal(err)
	}
	return pol, gotEC
}

func TestEvaluateGPUZeroCorrection(t *testing.T) {
	w := smallOpenb(t)
	ec := env.DefaultGPUConfig()
	ec.Prior, ec.PriorScale, ec.PriorPending = sched.NameFGD, 5, -10
	pol, gotEC := zeroGPUCheckpoint(t, ec)
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
	// a policy trained with drawn model constraints (spec_rate) is
	// evaluated on the pod list as it is: the same run
	gotEC.SpecRate = 0.5
	spec, err := EvaluateGPU(context.Background(), pol, gotEC, w, 1.3, 7, "ppo")
	if err != nil {
		t.Fatal(err)
	}
	same := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
	if !slices.EqualFunc(spec.AllocCurve, got.AllocCurve, same) || spec.Placed != got.Placed {
		t.Error("spec_rate in the checkpoint's config changed the evaluation")
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

// TestGPUActorRowCacheBitIdentical runs the trained policy of
// results/gpu-policy-r1 (best.ckpt) greedily on 200 nodes of the default pod
// list at 1.3x, once with the model's row cache (GPUActor's pass) and once
// recomputing every row: the actions, every log-probability and the
// curves must be the same bit for bit.
func TestGPUActorRowCacheBitIdentical(t *testing.T) {
	w := openbtest.Default(t, 200)
	run := func(cache bool) ([]int, []float64, sim.GPUResult) {
		pol, ec, err := LoadGPU(filepath.Join("..", "results", "gpu-policy-r1", "best.ckpt"))
		if err != nil {
			t.Fatal(err)
		}
		ec.Inflate, ec.MinNodes, ec.MaxNodes = 1.3, 0, 0 // the whole cluster, as EvaluateGPU
		e, err := env.NewGPUEnv(ec, w)
		if err != nil {
			t.Fatal(err)
		}
		obs, err := e.Reset(3)
		if err != nil {
			t.Fatal(err)
		}
		a := NewGPUActor(pol)
		pol.SetRowCache(cache)
		var acts []int
		var logp []float64
		for {
			act, err := a.Act(obs)
			if err != nil {
				t.Fatal(err)
			}
			acts = append(acts, act)
			logp = append(logp, a.act.LogP[0])
			next, _, done, info, err := e.Step(act)
			if err != nil {
				t.Fatal(err)
			}
			if done {
				return acts, logp, *info.Result
			}
			obs = next
		}
	}
	wantA, wantL, want := run(false)
	gotA, gotL, got := run(true)
	if len(gotA) != len(wantA) {
		t.Fatalf("%d decisions with the cache, %d without", len(gotA), len(wantA))
	}
	for i := range wantA {
		if gotA[i] != wantA[i] || math.Float64bits(gotL[i]) != math.Float64bits(wantL[i]) {
			t.Fatalf("decision %d: node %d (log p %v) with the cache, %d (%v) without", i, gotA[i], gotL[i], wantA[i], wantL[i])
		}
	}
	for k := range want.AllocCurve {
		if math.Float64bits(got.AllocCurve[k]) != math.Float64bits(want.AllocCurve[k]) || math.Float64bits(got.FragCurve[k]) != math.Float64bits(want.FragCurve[k]) {
			t.Fatalf("curves at %d: alloc %v frag %v with the cache, %v %v without", k, got.AllocCurve[k], got.FragCurve[k], want.AllocCurve[k], want.FragCurve[k])
		}
	}
	if want.Placed == 0 || want.Failed == 0 {
		t.Fatalf("placed %d, failed %d: want a run under pressure", want.Placed, want.Failed)
	}
	t.Logf("%d decisions, %d placed, %d failed, identical", len(wantA), want.Placed, want.Failed)
}

// TestEvaluateGPUOrderPrior: with prior_order, a zero correction over a
// policy whose scores are not on the 0..100 scale (fgd-tiers, fgd-guard)
// is that policy's run bit for bit; the value prior refuses it.
// 80 nodes: the first where fgd-guard and fgd-tiers part (on seed 7).
func TestEvaluateGPUOrderPrior(t *testing.T) {
	w := openbtest.Default(t, 80)
	for _, name := range []string{sched.NameFGDTiers, sched.NameFGDGuard} {
		t.Run(name, func(t *testing.T) { checkOrderPrior(t, w, name) })
	}
}

func checkOrderPrior(t *testing.T, w *sim.GPUWorkload, name string) {
	ec := env.DefaultGPUConfig()
	ec.Prior, ec.Select, ec.PriorScale, ec.PriorPending = name, name, 5, -10
	if _, err := env.NewGPUEnv(ec, w); err == nil || !strings.Contains(err.Error(), "prior_order") {
		t.Fatalf("%s as a value prior: %v; want an error naming prior_order", name, err)
	}
	ec.PriorOrder = true
	pol, gotEC := zeroGPUCheckpoint(t, ec)
	if !gotEC.PriorOrder {
		t.Fatal("prior_order lost in the checkpoint")
	}
	for _, seed := range []uint64{7, 8} {
		got, err := EvaluateGPU(context.Background(), pol, gotEC, w, 1.3, seed, "ppo")
		if err != nil {
			t.Fatal(err)
		}
		s, err := sched.NewGPU(name, seed)
		if err != nil {
			t.Fatal(err)
		}
		want, err := sim.RunGPU(w, s, sim.GPURunConfig{Inflate: 1.3, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		f, _ := sched.NewGPU(sched.NameFGD, seed)
		fgd, _ := sim.RunGPU(w, f, sim.GPURunConfig{Inflate: 1.3, Seed: seed})
		if got.Placed != want.Placed || math.Float64bits(got.AllocPct) != math.Float64bits(want.AllocPct) {
			t.Errorf("seed %d: the zero correction placed %d (%.4f%%), %s %d (%.4f%%), fgd %d", seed, got.Placed, got.AllocPct, name, want.Placed, want.AllocPct, fgd.Placed)
		}
		if seed == 7 && want.Placed == fgd.Placed && want.AllocPct == fgd.AllocPct {
			t.Errorf("%s placed as FGD on this workload: the comparison cannot tell them apart", name)
		}
		if seed == 7 && name == sched.NameFGDGuard {
			ti, _ := sched.NewGPU(sched.NameFGDTiers, seed)
			tiers, _ := sim.RunGPU(w, ti, sim.GPURunConfig{Inflate: 1.3, Seed: seed})
			if tiers.AllocPct == want.AllocPct {
				t.Error("fgd-guard placed as fgd-tiers on this workload: the comparison cannot tell them apart")
			}
		}
	}
}
