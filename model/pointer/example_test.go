package pointer_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/kubesim/kubesim/model/internal/nn"
	"github.com/kubesim/kubesim/model/pointer"
)

// Score two nodes and the Pending token for one cluster; node 1 is masked.
func Example() {
	d, err := pointer.New(pointer.Config{Hidden: 2, LogitClip: 10}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		fmt.Println(err)
		return
	}
	var l nn.Layout
	if err := l.Set(1, 2, []bool{true, true}, []int32{0, 0}); err != nil {
		fmt.Println(err)
		return
	}
	logp, value := make([]float64, 3), make([]float64, 1)
	var ws pointer.Workspace[float32]
	pointer.Forward(d, &ws, &l, []float32{1, 0, 0, 1}, []float32{0.5, 0.5}, []bool{true, false, true}, nil, logp, value)
	fmt.Printf("P(node 0) + P(Pending) = %.3f, P(node 1) = %v\n", math.Exp(logp[0])+math.Exp(logp[2]), math.Exp(logp[1]))
	// Output: P(node 0) + P(Pending) = 1.000, P(node 1) = 0
}
