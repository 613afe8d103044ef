// Package openbtest gives tests the openb workload kept in the repository
// (dataset/testdata/openb/default: the 1,213 GPU nodes and the default pod
// list), so that every package's GPU tests read it the same way.
package openbtest

import (
	"path/filepath"
	"testing"

	"github.com/kubesim/kubesim/dataset"
	"github.com/kubesim/kubesim/sim"
)

// Dir is the test data's folder relative to a top-level package's folder
// (agent/, env/, ppo/, ...), where `go test` runs that package's tests.
var Dir = filepath.Join("..", "dataset", "testdata", "openb", "default")

// Default returns the default pod list on the first n GPU nodes of the
// openb node list (all 1,213 when n is 0); a file that does not read
// fails tb.
func Default(tb testing.TB, n int) *sim.GPUWorkload {
	tb.Helper()
	w := FromDir(tb, Dir)
	if n > 0 && n < len(w.Nodes) {
		w.Nodes = w.Nodes[:n]
	}
	return w
}

// FromDir returns the default pod list of the openb folder dir on that
// folder's GPU node list, read as an openb sweep reads it; a file that does
// not read fails tb.
func FromDir(tb testing.TB, dir string) *sim.GPUWorkload {
	tb.Helper()
	tr, err := dataset.ReadOpenbCSV(filepath.Join(dir, "openb_node_list_gpu_node.csv"), filepath.Join(dir, "openb_pod_list_default.csv"))
	if err != nil {
		tb.Fatal(err)
	}
	w, err := tr.Workload()
	if err != nil {
		tb.Fatalf("%s: %v", dir, err)
	}
	return w
}
