package agent_test

import (
	"fmt"

	"github.com/kubesim/kubesim/agent"
	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/model"
)

// Observations of clusters of different sizes share one batch, padded to a
// common node count; Pending moves to the padded index.
func ExampleFill() {
	mk := func(n int) env.Obs {
		o := env.Obs{N: n, Pod: make([]float64, env.PodFeatures), Nodes: make([]float64, n*env.NodeFeatures),
			Domain: make([]int32, n), Mask: make([]bool, n+1)}
		for i := range o.Mask {
			o.Mask[i] = true
		}
		return o
	}
	var b model.Batch
	agent.Fill(&b, []env.Obs{mk(3), mk(10)})
	fmt.Println("batch", b.B, "x", b.N, "nodes")
	fmt.Println("node 3 of the first cluster valid:", b.NodeValid[3])
	fmt.Println("Pending of a 3-node cluster is action", agent.ToModel(3, 3, b.N))
	// Output:
	// batch 2 x 12 nodes
	// node 3 of the first cluster valid: false
	// Pending of a 3-node cluster is action 12
}
