package ppo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/internal/openbtest"
	"github.com/kubesim/kubesim/model"
)

// BenchmarkPPO measures training end to end (rollout on the simulator plus
// the update) in environment steps per second, at clusters of 10 nodes, with
// SB3's defaults (8 environments x 2048 steps, 10 epochs of minibatch 64) and
// with 4 epochs of minibatch 256. One iteration is one whole update.
func BenchmarkPPO(b *testing.B) {
	cases := []struct {
		name          string
		epochs, batch int
	}{
		{"defaults/nodes=10", 10, 64},
		{"epochs=4/batch=256/nodes=10", 4, 256},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			ec := env.DefaultConfig()
			ec.MinNodes, ec.MaxNodes = 10, 10
			c := DefaultConfig()
			c.NEpochs, c.BatchSize = tc.epochs, tc.batch
			c.TotalTimesteps = int64(c.NSteps * c.NEnvs)
			c.EvalFreq = 0
			dir := b.TempDir()
			var steps int64
			for b.Loop() {
				tr, err := New(c, ec, nil, nil, Options{Out: dir})
				if err != nil {
					b.Fatal(err)
				}
				sum, err := tr.Train(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				steps += sum.Steps
			}
			b.ReportMetric(float64(steps)/b.Elapsed().Seconds(), "env-steps/s")
		})
	}
}

// BenchmarkValidateGPU measures one GPU validation (validateGPU: four
// episodes of the default openb list on a 100-node sample, the greedy
// policy of random logit weights) with one goroutine and with two, as a
// run with es.workers 2 validates; the ratio of the two is the speed-up
// on this machine.
func BenchmarkValidateGPU(b *testing.B) {
	w := openbtest.Default(b, 100)
	cfg, ec := smallGPUConfig()
	cfg.Hidden, cfg.Rounds = 64, 2
	pol, err := model.New(gpuModelConfig(cfg, ec))
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	v := pol.LogitWeights(nil)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	if err := pol.SetLogitWeights(v); err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", n), func(b *testing.B) {
			opts := GPUOptions{ValSeeds: []uint64{1001, 1002, 1003, 1004}, ValInflate: 1.3, ValWorkers: n}
			for b.Loop() {
				if _, err := validateGPU(context.Background(), pol, ec, w, opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
