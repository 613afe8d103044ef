package sweep

import (
	"reflect"
	"strings"
	"testing"
)

const gridSpec = `name: g
cluster:
  workload:
    pods_per_node: 10
eval:
  seeds: 1
grid:
  ppo.seed: [1, 2]
  eval.nodes: [3, 7]
  cluster.sim.autoscaler.enabled: [false]
`

// TestExpand: two keys of two values and one of one give four points, the
// first key slowest, each with its values applied (a scalar of eval.nodes
// as a one-size list) and the file's other settings kept.
func TestExpand(t *testing.T) {
	s, err := ParseSpec([]byte(gridSpec))
	if err != nil {
		t.Fatal(err)
	}
	pts, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range pts {
		got = append(got, Point(p.Settings))
		if p.Cluster.Workload.PodsPerNode != 10 || p.Cluster.Sim.Autoscaler.Enabled || p.Eval.Seeds != 1 {
			t.Errorf("%s: lost the file's settings: %+v", Point(p.Settings), p.Cluster)
		}
	}
	want := []string{
		"ppo.seed=1 eval.nodes=3 cluster.sim.autoscaler.enabled=false",
		"ppo.seed=1 eval.nodes=7 cluster.sim.autoscaler.enabled=false",
		"ppo.seed=2 eval.nodes=3 cluster.sim.autoscaler.enabled=false",
		"ppo.seed=2 eval.nodes=7 cluster.sim.autoscaler.enabled=false",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("points %q; want %q", got, want)
	}
	if pts[2].PPO.Seed != 2 || !reflect.DeepEqual(pts[1].Eval.Nodes, []int{7}) {
		t.Errorf("point 2 seed %d, point 1 nodes %v; want 2, [7]", pts[2].PPO.Seed, pts[1].Eval.Nodes)
	}
	again, _ := s.Expand()
	for i := range pts {
		if !reflect.DeepEqual(pts[i].PPO, again[i].PPO) || !reflect.DeepEqual(pts[i].Eval, again[i].Eval) {
			t.Errorf("point %d differs between expansions", i)
		}
	}
	// a spec without a grid is its one point
	d := DefaultSpec()
	if one, err := d.Expand(); err != nil || len(one) != 1 || len(one[0].Settings) != 0 {
		t.Errorf("no grid: %d points, %v", len(one), err)
	}
}

func TestGridErrors(t *testing.T) {
	cases := []struct{ name, yaml, want string }{
		{"unknown key names key and line", "eval:\n  seeds: 1\ngrid:\n  ppo.seed: [1]\n  cluster.nodes: [10, 50]\n", `line 5: grid key "cluster.nodes" names nothing`},
		{"unknown section", "grid:\n  rewards.balance: [1]\n", `line 2: grid key "rewards.balance" names nothing`},
		{"past a leaf", "grid:\n  ppo.seed.x: [1]\n", `grid key "ppo.seed.x" names nothing`},
		{"not a list", "grid:\n  ppo.seed: 3\n", "want a non-empty list"},
		{"empty list", "grid:\n  ppo.seed: []\n", "want a non-empty list"},
		{"not a mapping", "grid: [1, 2]\n", "grid: want a mapping"},
		{"windows", "grid:\n  windows.test: [[day2]]\n", "not a setting a grid can vary"},
	}
	for _, tc := range cases {
		_, err := ParseSpec([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v; want it to contain %q", tc.name, err, tc.want)
		}
	}
	// a value that does not fit its key fails at expansion, naming the point
	s, err := ParseSpec([]byte("grid:\n  ppo.gamma: [0.9, 2]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Expand(); err == nil || !strings.Contains(err.Error(), "grid point ppo.gamma=2") || !strings.Contains(err.Error(), "ppo.gamma") {
		t.Errorf("Expand = %v; want an error naming grid point ppo.gamma=2", err)
	}
}
