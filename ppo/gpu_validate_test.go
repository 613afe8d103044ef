package ppo

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/kubesim/kubesim/model"
)

// TestValidateGPUWorkers validates a policy whose correction is not zero
// (random logit weights, so the copies' weights matter) with one, two and
// three goroutines: the score is bit for bit the same, as is the selection
// policy's; and the scores differ from the start's, so a copy that dropped
// the weights would show.
func TestValidateGPUWorkers(t *testing.T) {
	w := smallOpenb(t)
	cfg, ec := smallGPUConfig()
	pol, err := model.New(gpuModelConfig(cfg, ec))
	if err != nil {
		t.Fatal(err)
	}
	opts := GPUOptions{ValSeeds: []uint64{1001, 1002, 1003}, ValInflate: 1.3, ValSpec: 0.3}
	start, err := validateGPU(context.Background(), pol, ec, w, opts)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	v := pol.LogitWeights(nil)
	for i := range v {
		v[i] = 3 * rng.NormFloat64()
	}
	if err := pol.SetLogitWeights(v); err != nil {
		t.Fatal(err)
	}
	var vals, sels []float64
	for _, n := range []int{0, 1, 2, 3, 10} {
		o := opts
		o.ValWorkers = n
		got, err := validateGPU(context.Background(), pol, ec, w, o)
		if err != nil {
			t.Fatal(err)
		}
		sel, err := selectValGPU(ec, w, o)
		if err != nil {
			t.Fatal(err)
		}
		vals, sels = append(vals, got), append(sels, sel)
	}
	for i := range vals {
		if vals[i] != vals[0] || sels[i] != sels[0] {
			t.Fatalf("validation with 0, 1, 2, 3 and 10 workers: %v, selection %v; want one value each", vals, sels)
		}
	}
	if vals[0] == start {
		t.Fatalf("random weights score %v, the zero correction too: the test cannot tell a copy without them", start)
	}
	if start != sels[0] {
		t.Errorf("the zero correction scores %v, its selection policy %v", start, sels[0])
	}
}

// TestValidateGPUCancelled: a cancelled context ends a parallel validation
// with its error.
func TestValidateGPUCancelled(t *testing.T) {
	w := smallOpenb(t)
	cfg, ec := smallGPUConfig()
	pol, err := model.New(gpuModelConfig(cfg, ec))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	opts := GPUOptions{ValSeeds: []uint64{1001, 1002}, ValInflate: 1.3, ValWorkers: 2}
	if _, err := validateGPU(ctx, pol, ec, w, opts); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled validation: %v; want context.Canceled", err)
	}
}
