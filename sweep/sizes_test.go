package sweep

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/kubesim/kubesim/dataset"
)

// TestDefaultTraceSizes: the default trace supports the sizes of the
// generalisation tests, 5 to 200 machines: an experiment replays a test
// window at each, on a sample of that many machines, different
// machine samples under different seeds, every warm pod placed.
func TestDefaultTraceSizes(t *testing.T) {
	if testing.Short() {
		t.Skip("makes the 400-machine default trace")
	}
	dir := filepath.Join(t.TempDir(), "default")
	if err := dataset.EnsureDefault(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	spec, err := ParseSpec([]byte(fmt.Sprintf(`
trace: {dir: %s, load_factor: 1.3}
windows: {train: [0h-1h], validation: [1h-2h], test: [30h-31h]}
eval: {nodes: [5, 200], seeds: 2, schedulers: [kube-default]}
`, dir)))
	if err != nil {
		t.Fatal(err)
	}
	ws, err := spec.ResolveWindows()
	if err != nil {
		t.Fatal(err)
	}
	cases, err := Cases(spec, ws.Test, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 4 {
		t.Fatalf("%d cases; want 2 sizes x 2 seeds", len(cases))
	}
	firstNode := map[uint64]string{}
	for _, c := range cases {
		w, cfg, err := c.load()
		if err != nil {
			t.Fatal(err)
		}
		// the sample is of the trace's machines; a few of them join later or
		// are in maintenance at the window's start (3.6% of real machines
		// join during the trace)
		if len(w.Nodes) > c.Nodes || len(w.Nodes) < c.Nodes*9/10 || cfg.Seed != c.Seed {
			t.Errorf("case %d nodes seed %d: workload of %d nodes, sim seed %d", c.Nodes, c.Seed, len(w.Nodes), cfg.Seed)
		}
		if c.Nodes == 200 {
			firstNode[c.Seed] = w.Nodes[0].Name
		}
		if len(w.Initial) == 0 {
			t.Errorf("%d nodes, seed %d: no warm pods", c.Nodes, c.Seed)
		}
	}
	if firstNode[1] == firstNode[2] {
		t.Errorf("seeds 1 and 2 sampled the same machines (first %s)", firstNode[1])
	}
	scheds, err := Schedulers(spec, "")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := Replay(context.Background(), cases, scheds)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Result.Pods == 0 || r.Result.WarmPods == 0 || r.Result.WarmRejected != 0 {
			t.Errorf("%d nodes seed %d: %d pods, %d warm, %d warm rejected", r.Nodes, r.Seed, r.Result.Pods, r.Result.WarmPods, r.Result.WarmRejected)
		}
	}
}
