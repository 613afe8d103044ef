package ppo

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/sim"
)

// TestObjectiveValue by hand: a curve of 90 from 50% to 99% and 96 from
// 100% to 130% scores 96 at 100% and (50 x 90 + 31 x 96) / 81 over the
// curve; NaN levels are skipped; a curve without values scores the end's
// allocation.
func TestObjectiveValue(t *testing.T) {
	c := make(sim.Curve, sim.CurvePoints)
	for k := range c {
		switch {
		case k < 50:
			c[k] = 0 // below CurveFrom: never read
		case k < 100:
			c[k] = 90
		default:
			c[k] = 96
		}
	}
	r := sim.GPUResult{AllocCurve: c, AllocPct: 97}
	if v := objectiveValue(ObjectiveAlloc100, r); v != 96 {
		t.Errorf("alloc100: %v, want 96", v)
	}
	if v := objectiveValue("", r); v != 96 {
		t.Errorf("default: %v, want 96", v)
	}
	if v, want := objectiveValue(ObjectiveCurve, r), (50*90.0+31*96)/81; math.Abs(v-want) > 1e-12 {
		t.Errorf("curve: %v, want %v", v, want)
	}
	c[60] = math.NaN()
	if v, want := objectiveValue(ObjectiveCurve, r), (49*90.0+31*96)/80; math.Abs(v-want) > 1e-12 {
		t.Errorf("curve with a NaN level: %v, want %v", v, want)
	}
	empty := sim.GPUResult{AllocCurve: make(sim.Curve, sim.CurvePoints), AllocPct: 42}
	for k := range empty.AllocCurve {
		empty.AllocCurve[k] = math.NaN()
	}
	if objectiveValue(ObjectiveCurve, empty) != 42 || objectiveValue(ObjectiveAlloc100, empty) != 42 {
		t.Error("a curve without values: want the end's allocation")
	}
	if checkObjective("mean") == nil || checkObjective(ObjectiveCurve) != nil || checkObjective("") != nil {
		t.Error("checkObjective")
	}
}

// TestValEpisodesMix: ValMixEach adds one episode per class the list
// holds, per seed, after the others.
func TestValEpisodesMix(t *testing.T) {
	w := smallOpenb(t)
	_, ec := smallGPUConfig()
	opts := GPUOptions{ValSeeds: []uint64{1001, 1002}, ValInflate: 1.3, ValMixEach: 0.15}
	held := 0
	for c := range env.MixClasses {
		if env.MixWorkload(w, c, 0.15, 1001) != w {
			held++
		}
	}
	eps := valEpisodes(w, ec, opts)
	if held < 3 || len(eps) != 2+2*held {
		t.Fatalf("%d episodes for %d classes; want 2 + 2 per class", len(eps), held)
	}
	for _, ep := range eps[2:] {
		if ep.w == w {
			t.Fatal("a mix episode is the list as it is")
		}
	}
}

// TestResumedObjective: a checkpoint without the key is alloc100's; a
// resume under another objective is refused, naming both; the validation
// header names what its columns hold.
func TestResumedObjective(t *testing.T) {
	if err := checkResumedObjective("old.ckpt", map[string]string{}, ""); err != nil {
		t.Errorf("an old checkpoint under the default objective: %v", err)
	}
	err := checkResumedObjective("old.ckpt", map[string]string{}, ObjectiveCurve)
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "alloc100") || !strings.Contains(err.Error(), "curve") {
		t.Errorf("an old checkpoint under curve: %v; want ErrConfig naming both objectives", err)
	}
	if err := checkResumedObjective("c.ckpt", map[string]string{metaGPUObjective: ObjectiveCurve}, ObjectiveCurve); err != nil {
		t.Errorf("the same objective: %v", err)
	}
	if h := gpuValHeaderFor(ObjectiveCurve); h[2] != "val_curve" || h[3] != "select_curve" {
		t.Errorf("curve header %v", h)
	}
	if h := gpuValHeaderFor(""); h[2] != "val_alloc100" {
		t.Errorf("default header %v", h)
	}
}
