package agent

import (
	"testing"

	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/internal/openbtest"
	"github.com/kubesim/kubesim/model"
	"github.com/kubesim/kubesim/sched"
)

// BenchmarkGPUDecision is one decision of a GPU policy (the default model
// size over FGD's prior) on the whole openb GPU cluster (1,213 nodes, the
// default pod list at 1.3x, seed 42): the observation, the greedy action
// and the environment's step, as agent.EvaluateGPU runs them, restarting
// the episode at its end. "full" recomputes every node row of the model's
// first layers each decision (the pass before the row cache), "rowcache"
// is GPUActor's pass; compare their ns/op from the same run.
func BenchmarkGPUDecision(b *testing.B) {
	w := openbtest.Default(b, 0)
	ec := env.DefaultGPUConfig()
	ec.Prior, ec.PriorScale, ec.PriorPending, ec.Inflate = sched.NameFGD, 50, -10, 1.3
	for _, c := range []struct {
		name  string
		cache bool
	}{{"full", false}, {"rowcache", true}} {
		b.Run(c.name, func(b *testing.B) {
			pol, err := model.New(model.Config{NodeFeatures: env.GPUNodeFeatures, PodFeatures: env.GPUPodFeatures, Prior: true, Seed: 1})
			if err != nil {
				b.Fatal(err)
			}
			e, err := env.NewGPUEnv(ec, w)
			if err != nil {
				b.Fatal(err)
			}
			obs, err := e.Reset(42)
			if err != nil {
				b.Fatal(err)
			}
			actor := NewGPUActor(pol)
			pol.SetRowCache(c.cache)
			b.ReportAllocs()
			for b.Loop() {
				a, err := actor.Act(obs)
				if err != nil {
					b.Fatal(err)
				}
				next, _, done, _, err := e.Step(a)
				if err != nil {
					b.Fatal(err)
				}
				if done {
					if next, err = e.Reset(42); err != nil {
						b.Fatal(err)
					}
				}
				obs = next
			}
		})
	}
}
