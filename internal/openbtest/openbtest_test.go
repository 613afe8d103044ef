package openbtest

import (
	"path/filepath"
	"testing"
)

func TestDefault(t *testing.T) {
	Dir = filepath.Join("..", "..", "dataset", "testdata", "openb", "default")
	for _, c := range []struct{ n, want int }{{0, 1213}, {30, 30}, {5000, 1213}} {
		w := Default(t, c.n)
		if len(w.Nodes) != c.want || len(w.Pods) != 8152 {
			t.Errorf("Default(%d): %d nodes, %d pods; want %d and 8152", c.n, len(w.Nodes), len(w.Pods), c.want)
		}
	}
}
