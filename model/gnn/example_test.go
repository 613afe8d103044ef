package gnn_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/kubesim/kubesim/model/gnn"
	"github.com/kubesim/kubesim/model/internal/nn"
)

// Encode one cluster of three nodes (node 2 is padding) on the host.
func Example() {
	e, err := gnn.New(gnn.Config{NodeFeatures: 2, PodFeatures: 1, Hidden: 4, Rounds: 2}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		fmt.Println(err)
		return
	}
	var l nn.Layout
	if err := l.Set(1, 3, []bool{true, true, false}, []int32{7, 7, -1}); err != nil {
		fmt.Println(err)
		return
	}
	var ws gnn.Workspace[float32]
	nodes := []float32{0.1, 0.2, 1, 0.3, 0.4, 1, 0, 0, 0} // features, then 1
	h, p := gnn.Forward(e, &ws, &l, nodes, []float32{0.5, 1})
	fmt.Println(len(e.Params()), "weight matrices;", len(h), "node-state values;", len(p), "pod-embedding values")
	// Output: 8 weight matrices; 12 node-state values; 4 pod-embedding values
}
