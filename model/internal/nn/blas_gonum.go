//go:build !openblas

package nn

const blasName = "gonum"

func useBLAS() {}
