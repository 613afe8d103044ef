package nn_test

import (
	"fmt"

	"github.com/kubesim/kubesim/model/internal/nn"
)

// Two clusters of three rows; the last row of the first is padding. Pool
// averages each cluster's valid rows.
func Example() {
	var l nn.Layout
	if err := l.Set(2, 3, []bool{true, true, false, true, true, true}, []int32{1, 1, -1, -1, -1, 4}); err != nil {
		fmt.Println(err)
		return
	}
	means := make([]float64, 2)
	nn.Pool(&l, means, []float64{1, 3, 100, 2, 4, 6}, 1, true)
	fmt.Println("segments:", l.Segments(), "means:", means)
	// Output: segments: 4 means: [2 4]
}
