package sweep_test

import (
	"fmt"

	"github.com/kubesim/kubesim/sweep"
)

// A grid of two keys expands to the cartesian product of their values,
// the first key varying slowest; a scalar of a list setting (eval.nodes)
// is a one-element list.
func ExampleSpec_Expand() {
	s, err := sweep.ParseSpec([]byte(`
eval:
  seeds: 3
grid:
  reward.fragment: [0, 5]
  eval.nodes: [10, 200]
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	points, err := s.Expand()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range points {
		fmt.Printf("%-36s fragment %v, nodes %v, seeds %d\n", sweep.Point(p.Settings), p.Reward.Fragment, p.Eval.Nodes, p.Eval.Seeds)
	}
	// Output:
	// reward.fragment=0 eval.nodes=10      fragment 0, nodes [10], seeds 3
	// reward.fragment=0 eval.nodes=200     fragment 0, nodes [200], seeds 3
	// reward.fragment=5 eval.nodes=10      fragment 5, nodes [10], seeds 3
	// reward.fragment=5 eval.nodes=200     fragment 5, nodes [200], seeds 3
}
