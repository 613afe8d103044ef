package model_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/kubesim/kubesim/model"
)

// One cluster of three nodes (two features each) in two failure domains;
// node 1 is masked (the pod does not fit there).
func Example() {
	p, err := model.New(model.Config{NodeFeatures: 2, PodFeatures: 1, Hidden: 16, Rounds: 2, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	b := &model.Batch{
		B: 1, N: 3,
		Nodes:     []float64{0.2, 0.5, 0.9, 0.1, 0.4, 0.4},
		NodeValid: []bool{true, true, true},
		Pod:       []float64{0.3},
		Mask:      []bool{true, false, true, true}, // last: Pending
		Domain:    []int32{0, 0, 1},
	}
	var out model.Output
	if err := p.Forward(b, &out); err != nil {
		fmt.Println(err)
		return
	}
	sum := 0.0
	for _, lp := range out.LogP {
		sum += math.Exp(lp)
	}
	fmt.Printf("%d actions, P(masked node 1) = %v, total probability %.3f\n", len(out.LogP), math.Exp(out.LogP[1]), sum)

	var act model.ActResult
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100 {
		if err := p.Act(b, false, rng, &act); err != nil {
			fmt.Println(err)
			return
		}
		if act.Actions[0] == 1 {
			fmt.Println("masked action sampled")
		}
	}
	fmt.Println("sampled 100 actions, none masked")
	// Output:
	// 4 actions, P(masked node 1) = 0, total probability 1.000
	// sampled 100 actions, none masked
}
