package env

import (
	"fmt"
	"math/rand/v2"

	"github.com/kubesim/kubesim/sim"
)

// Source supplies the workload of each episode. Episode returns a workload
// whose cluster starts with nodes nodes (as near as the data allows), and
// draws every random choice (seed, window, machines) from r, so that an
// episode is a function of the environment's seed. The returned workload is
// only read. VecEnv calls Episode from several goroutines at once, so a
// Source must be safe for concurrent use.
type Source interface {
	Episode(r *rand.Rand, nodes int) (*sim.Workload, error)
}

// Synthetic is the built-in Source: sim.Synthetic workloads, a fresh one per
// episode. Its fields are the YAML keys of Config.Workload.
type Synthetic struct {
	// PodsPerNode sets the pods of an episode: PodsPerNode times its initial
	// node count.
	PodsPerNode int `yaml:"pods_per_node" json:"pods_per_node"`
	// Load, ServiceShare, OnlineShare, Zones, RacksPerZone and DayLength are
	// the sim.SyntheticOptions of the same names.
	Load         float64  `yaml:"load" json:"load"`
	ServiceShare float64  `yaml:"service_share" json:"service_share"`
	OnlineShare  float64  `yaml:"online_share" json:"online_share"`
	Zones        int      `yaml:"zones" json:"zones"`
	RacksPerZone int      `yaml:"racks_per_zone" json:"racks_per_zone"`
	DayLength    sim.Time `yaml:"day_length_ms" json:"day_length_ms"`
}

// DefaultSynthetic returns sim.DefaultSyntheticOptions with 100 pods a node:
// a cluster at full memory load (so that placement matters), 30% of it held
// by long-running services.
func DefaultSynthetic() Synthetic {
	o := sim.DefaultSyntheticOptions(1)
	return Synthetic{
		PodsPerNode:  100,
		Load:         o.Load,
		ServiceShare: o.ServiceShare,
		OnlineShare:  o.OnlineShare,
		Zones:        o.Zones,
		RacksPerZone: o.RacksPerZone,
		DayLength:    o.DayLength,
	}
}

// options returns the sim.SyntheticOptions of an episode.
func (s Synthetic) options(nodes int, seed uint64) sim.SyntheticOptions {
	return sim.SyntheticOptions{
		Nodes:        nodes,
		Pods:         s.PodsPerNode * nodes,
		Seed:         seed,
		Load:         s.Load,
		ServiceShare: s.ServiceShare,
		OnlineShare:  s.OnlineShare,
		Zones:        s.Zones,
		RacksPerZone: s.RacksPerZone,
		DayLength:    s.DayLength,
	}
}

// Validate checks the options (naming the YAML key), including everything
// sim.Synthetic would refuse.
func (s Synthetic) Validate() error {
	if s.PodsPerNode < 1 || s.PodsPerNode > 100_000 {
		return fmt.Errorf("pods_per_node = %d: must be in [1, 100000]", s.PodsPerNode)
	}
	o := s.options(1, 0)
	switch {
	case !(o.Load > 0) || o.Load > 10:
		return fmt.Errorf("load = %v: must be in (0, 10]", o.Load)
	case !(o.ServiceShare >= 0 && o.ServiceShare < 1):
		return fmt.Errorf("service_share = %v: must be in [0, 1)", o.ServiceShare)
	case !(o.OnlineShare >= 0 && o.OnlineShare <= 1):
		return fmt.Errorf("online_share = %v: must be in [0, 1]", o.OnlineShare)
	case o.Zones <= 0:
		return fmt.Errorf("zones = %d: must be positive", o.Zones)
	case o.RacksPerZone <= 0:
		return fmt.Errorf("racks_per_zone = %d: must be positive", o.RacksPerZone)
	case o.DayLength <= 0:
		return fmt.Errorf("day_length_ms = %d: must be positive", o.DayLength)
	}
	return nil
}

// Episode generates a synthetic workload of nodes nodes under a seed drawn
// from r.
func (s Synthetic) Episode(r *rand.Rand, nodes int) (*sim.Workload, error) {
	w, err := sim.Synthetic(s.options(nodes, r.Uint64()))
	if err != nil {
		return nil, fmt.Errorf("synthetic episode: %w", err)
	}
	return w, nil
}
