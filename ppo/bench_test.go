package ppo

import (
	"context"
	"testing"

	"github.com/kubesim/kubesim/env"
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
