package env

import (
	"testing"

	"github.com/kubesim/kubesim/sim"
)

func TestEpisodeTemplate(t *testing.T) {
	big := sim.NodeSpec{Name: "b", Allocatable: sim.Resources{CPU: 96000, Mem: 393216}, MaxPods: 110}
	small := sim.NodeSpec{Name: "s", Allocatable: sim.Resources{CPU: 8000, Mem: 16384}}
	w := &sim.Workload{Nodes: []sim.NodeSpec{small, big, big}}
	cases := []struct {
		name string
		tmpl NodeTemplate
		w    *sim.Workload
		want sim.NodeSpec
	}{
		// two of three nodes are 96 cores / 384 GiB: the template copies them
		{"trace shape", NodeTemplate{}, w, sim.NodeSpec{Name: "autoscaled", Allocatable: big.Allocatable, MaxPods: 110}},
		// the small node's pod limit 0 becomes the kubelet default
		{"one node", NodeTemplate{}, &sim.Workload{Nodes: []sim.NodeSpec{small}},
			sim.NodeSpec{Name: "autoscaled", Allocatable: small.Allocatable, MaxPods: sim.DefaultMaxPods}},
		// no nodes: the Reference node (32 cores, 128 GiB)
		{"reference", NodeTemplate{}, &sim.Workload{}, sim.NodeSpec{Name: "autoscaled", Allocatable: sim.Resources{CPU: 32000, Mem: 131072}, MaxPods: 110}},
		// YAML fields win over the workload's shape, field by field
		{"yaml", NodeTemplate{CPU: 4000, MaxPods: 20}, w, sim.NodeSpec{Name: "autoscaled", Allocatable: sim.Resources{CPU: 4000, Mem: 393216}, MaxPods: 20}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			c.NodeTemplate = tc.tmpl
			got := c.EpisodeConfig(tc.w, 7).Autoscaler.Template
			if got.Name != tc.want.Name || got.Allocatable != tc.want.Allocatable || got.MaxPods != tc.want.MaxPods {
				t.Errorf("template = %+v; want %+v", got, tc.want)
			}
		})
	}
	c := DefaultConfig()
	c.NodeTemplate.Mem = -1
	if err := c.Validate(); err == nil {
		t.Error("a negative node_template.mem_mib passed Validate")
	}
}
