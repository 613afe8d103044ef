package env_test

import (
	"fmt"

	"github.com/kubesim/kubesim/env"
)

// Example runs one episode on a synthetic cluster of 4 nodes with a policy
// that takes the first node the mask allows (Pending when none does).
func Example() {
	cfg := env.DefaultConfig()
	cfg.MinNodes, cfg.MaxNodes = 4, 4
	cfg.Workload.PodsPerNode = 20
	e, err := env.New(cfg, nil) // nil: the synthetic source cfg.Workload
	if err != nil {
		fmt.Println(err)
		return
	}
	obs, _, err := e.Reset(1)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("first decision: %d nodes, %d features each, %d actions\n", obs.N, len(obs.Row(0)), len(obs.Mask))
	for {
		action := obs.N // Pending
		for i := range obs.N {
			if obs.Mask[i] {
				action = i
				break
			}
		}
		var terminated, truncated bool
		var info env.Info
		obs, _, terminated, truncated, info = e.Step(action)
		if terminated || truncated {
			ep := info.Episode
			fmt.Printf("episode over after %d decisions: %d pods, %d still pending, return %.2f\n",
				ep.Steps, ep.Result.Pods, ep.Result.Unschedulable, ep.Return)
			break
		}
	}
	// Output:
	// first decision: 4 nodes, 14 features each, 5 actions
	// episode over after 80 decisions: 80 pods, 0 still pending, return 34.70
}
