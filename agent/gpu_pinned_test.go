package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/model"
	"github.com/kubesim/kubesim/sched"
)

// TestObsPinnedCheckpoint: a policy of 18 node features (obs_pinned) loads
// with its environment, and a zero correction over FGD's prior is FGD on
// the openb subcluster, run for run; a checkpoint whose width and
// environment disagree is refused, naming obs_pinned.
func TestObsPinnedCheckpoint(t *testing.T) {
	w := smallOpenb(t)
	ec := env.DefaultGPUConfig()
	ec.Prior, ec.PriorScale, ec.ObsPinned = sched.NameFGD, 5, true
	meta := func(c env.GPUConfig) map[string]string {
		b, _ := json.Marshal(c)
		return map[string]string{MetaGPUEnv: string(b)}
	}
	wide := model.Config{NodeFeatures: env.GPUNodeFeatures + 1, PodFeatures: env.GPUPodFeatures, Hidden: 16, Prior: true, ZeroInit: true, Seed: 1}
	pol, got, err := LoadGPU(saveGPU(t, wide, meta(ec)))
	if err != nil {
		t.Fatal(err)
	}
	if !got.ObsPinned || pol.Config().NodeFeatures != 18 {
		t.Fatalf("loaded %+v, %d node features", got, pol.Config().NodeFeatures)
	}
	res, err := EvaluateGPU(context.Background(), pol, got, w, 1.3, 7, "fgd")
	if err != nil {
		t.Fatal(err)
	}
	fgd, err := runFGD(w, 7)
	if err != nil {
		t.Fatal(err)
	}
	res.Scheduler = fgd.Scheduler
	if !sameGPUResult(res, fgd) {
		t.Errorf("a zero correction with obs_pinned: %d placed; FGD %d", res.Placed, fgd.Placed)
	}
	plain := ec
	plain.ObsPinned = false
	narrow := wide
	narrow.NodeFeatures = env.GPUNodeFeatures
	for name, path := range map[string]string{
		"18 features, obs_pinned false": saveGPU(t, wide, meta(plain)),
		"17 features, obs_pinned true":  saveGPU(t, narrow, meta(ec)),
	} {
		if _, _, err := LoadGPU(path); err == nil || !strings.Contains(err.Error(), "obs_pinned") {
			t.Errorf("%s: %v; want an error naming obs_pinned", name, err)
		}
	}
}
