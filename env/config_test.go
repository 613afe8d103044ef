package env

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"reflect"
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

func TestConfigValidate(t *testing.T) {
	cases := []struct {
		name string
		key  string // the YAML key the error must name
		edit func(*Config)
	}{
		{"negative weight", "reward.violation", func(c *Config) { c.Reward.Violation = -1 }},
		{"NaN weight", "reward.balance", func(c *Config) { c.Reward.Balance = math.NaN() }},
		{"infinite weight", "reward.pending", func(c *Config) { c.Reward.Pending = math.Inf(1) }},
		{"unknown form", "reward.balance_form", func(c *Config) { c.Reward.BalanceForm = "log" }},
		{"unknown signal", "reward.balance_of", func(c *Config) { c.Reward.BalanceOf = "mem" }},
		{"mix above 1", "reward.fragment_mix", func(c *Config) { c.Reward.FragmentMix = 1.5 }},
		{"negative steps", "max_steps", func(c *Config) { c.MaxSteps = -1 }},
		{"no nodes", "min_nodes", func(c *Config) { c.MinNodes = 0 }},
		{"max below min", "max_nodes", func(c *Config) { c.MinNodes, c.MaxNodes = 10, 5 }},
		{"zero reference", "reference.mem_mib", func(c *Config) { c.Reference.Mem = 0 }},
		{"unknown domain", "domain", func(c *Config) { c.Domain = "region" }},
		{"scale min above 1", "autoscale_min_factor", func(c *Config) { c.ScaleMin = 2 }},
		{"scale max below 1", "autoscale_max_factor", func(c *Config) { c.ScaleMax = 0.5 }},
		{"no pods", "pods_per_node", func(c *Config) { c.Workload.PodsPerNode = 0 }},
		{"zero load", "load", func(c *Config) { c.Workload.Load = 0 }},
		{"all services", "service_share", func(c *Config) { c.Workload.ServiceShare = 1 }},
		{"online share", "online_share", func(c *Config) { c.Workload.OnlineShare = -0.1 }},
		{"no zones", "zones", func(c *Config) { c.Workload.Zones = 0 }},
		{"no racks", "racks_per_zone", func(c *Config) { c.Workload.RacksPerZone = 0 }},
		{"no day", "day_length_ms", func(c *Config) { c.Workload.DayLength = 0 }},
		{"sim", "backoff_max_ms", func(c *Config) { c.Sim.BackoffMax = 1 }},
		{"absolute max below scaled min", "autoscaler.max_nodes", func(c *Config) {
			c.ScaleMax, c.Sim.Autoscaler.MaxNodes = 0, 3
		}},
	}
	for _, c := range cases {
		cfg := DefaultConfig()
		c.edit(&cfg)
		err := cfg.Validate()
		if !errors.Is(err, ErrConfig) || !containsKey(err.Error(), c.key) {
			t.Errorf("%s: error %v; want ErrConfig naming %s", c.name, err, c.key)
		}
		if _, err := New(cfg, nil); err == nil {
			t.Errorf("%s: New accepted the config", c.name)
		}
	}
	def := DefaultConfig()
	if err := def.Validate(); err != nil {
		t.Errorf("default config: %v", err)
	}
}

func containsKey(msg, key string) bool {
	for i := 0; i+len(key) <= len(msg); i++ {
		if msg[i:i+len(key)] == key && (i+len(key) == len(msg) || msg[i+len(key)] == ' ') {
			return true
		}
	}
	return false
}

// TestConfigKeys: every field of the config has a YAML key equal to its
// JSON key, and the default config survives a JSON round trip with unknown
// keys refused (the config written next to a run can be read back).
func TestConfigKeys(t *testing.T) {
	var walk func(path string, typ reflect.Type)
	walk = func(path string, typ reflect.Type) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			y, j := f.Tag.Get("yaml"), f.Tag.Get("json")
			if y == "" || y != j {
				t.Errorf("%s.%s: yaml key %q, json key %q; want equal and non-empty", path, f.Name, y, j)
			}
			if f.Type.Kind() == reflect.Struct && f.Type.PkgPath() == typ.PkgPath() {
				walk(path+"."+y, f.Type)
			}
		}
	}
	walk("config", reflect.TypeFor[Config]())

	want := DefaultConfig()
	data, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var got Config
	if err := dec.Decode(&got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, want)
	}
}
