package nn

import (
	"fmt"

	"gorgonia.org/tensor"
)

// Float is the element type of weights and activations: float32 for speed,
// float64 for gradient checks.
type Float interface{ ~float32 | ~float64 }

// Dtype returns the gorgonia dtype of float64 (true) or float32 (false) data.
func Dtype(float64s bool) tensor.Dtype {
	if float64s {
		return tensor.Float64
	}
	return tensor.Float32
}

// Data returns the backing slice of d as []T. It panics when d holds another
// element type: that is a programming error inside the model packages, never
// a consequence of caller input.
//
// It reads the typed slice header directly: Dense.Data goes through
// reflection and allocates on every call.
func Data[T Float](d *tensor.Dense) []T {
	var z T
	switch any(z).(type) {
	case float32:
		if d.Dtype() == tensor.Float32 {
			return any(d.Float32s()).([]T)
		}
	case float64:
		if d.Dtype() == tensor.Float64 {
			return any(d.Float64s()).([]T)
		}
	}
	panic(fmt.Sprintf("nn: tensor holds %v, want %T", d.Dtype(), z))
}

// Grow returns s resized to n elements, reusing its storage when it is large
// enough. The contents are unspecified.
func Grow[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}
