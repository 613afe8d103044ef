package env

import (
	"errors"
	"fmt"
	"math"

	"github.com/kubesim/kubesim/sim"
)

// BalanceForm is how R_balance is computed from the standard deviation s of
// node CPU utilisation.
type BalanceForm string

// Balance forms.
const (
	// Bounded is 1 - s/0.5, in [0, 1] since s <= 0.5 for values in [0, 1].
	Bounded BalanceForm = "bounded"
	// Inverse is 1/(s + 0.01), the form of the original design, in (0.67, 100].
	Inverse BalanceForm = "inverse"
	// Delta is the change of Bounded caused by the decision: Bounded just
	// after sim.Engine.Decide minus Bounded just before, at the same
	// simulated time (like R_fragment), so (s_before - s_after)/0.5, in
	// [-1, 1], 0 unless the pod was bound or preempted for. It needs the
	// Requested signal: a bind moves actual use only when the pod starts,
	// later, in an event that no decision causes.
	Delta BalanceForm = "delta"
)

// BalanceSignal is the per-node quantity whose spread R_balance measures.
type BalanceSignal string

// Balance signals.
const (
	// Used is actual CPU use over allocatable, capped at 1 (DESIGN's node
	// variance). A decision moves it only once the pod has started.
	Used BalanceSignal = "used"
	// Requested is requested CPU over allocatable, moved at once by a bind.
	Requested BalanceSignal = "requested"
)

// DomainLevel selects the failure-domain level reported in Obs.Domain.
type DomainLevel string

// Failure-domain levels (sim.LabelZone and sim.LabelRack).
const (
	Zone DomainLevel = "zone"
	Rack DomainLevel = "rack"
)

// Reward holds the weights and forms of the reward
//
//	w1*R_balance + w2*R_fragment - w3*P_violation - w4*P_failure - wp*P_pending
//	    - w5*P_wait - w6*P_unplaced
//
// (see the package documentation for each term). Weights are non-negative;
// a zero weight switches its term off without removing it from Info. The
// defaults leave w5 and w6 at 0, which gives the reward of the first five
// terms bit for bit.
type Reward struct {
	Balance   float64 `yaml:"balance" json:"balance"`     // w1
	Fragment  float64 `yaml:"fragment" json:"fragment"`   // w2
	Violation float64 `yaml:"violation" json:"violation"` // w3
	Failure   float64 `yaml:"failure" json:"failure"`     // w4
	// Pending (wp) is the cost of one deferral: the Pending action while some
	// node was feasible. Pending when nothing fits is free: it is the only
	// legal action.
	Pending float64 `yaml:"pending" json:"pending"`
	// BalanceForm is "bounded" or "inverse".
	BalanceForm BalanceForm `yaml:"balance_form" json:"balance_form"`
	// BalanceOf is "used" (actual CPU) or "requested" (requested CPU).
	BalanceOf BalanceSignal `yaml:"balance_of" json:"balance_of"`
	// FragmentMix in [0, 1] is the share of the fragmentation-ratio change in
	// R_fragment; the rest is the change in stranded share.
	FragmentMix float64 `yaml:"fragment_mix" json:"fragment_mix"`
	// Wait (w5) weighs P_wait, the waiting cost: the time integral, from the
	// decision to the returned observation, of the priority-weighted number
	// of pending pods (every pod in the active queue, in backoff or in the
	// unschedulable list, including pods that no node fits and the forced
	// Pending decisions the environment takes itself), in pod-minutes.
	// Exact: sim.Counters.PendingMs and PendingHighMs integrate the pending
	// counts whenever simulated time advances.
	Wait float64 `yaml:"wait" json:"wait"`
	// Unplaced (w6) weighs P_unplaced, the terminal penalty: on the step
	// that terminates an episode (workload exhausted; never on truncation,
	// which PPO bootstraps), the priority-weighted number of pods still
	// pending, the pods the run leaves unscheduled (sim.Result's
	// Unschedulable, warm-up included). 0 on every other step.
	Unplaced float64 `yaml:"unplaced" json:"unplaced"`
	// WaitHigh is the weight of one high-priority pod (sim.High and above)
	// in P_wait and P_unplaced; a low-priority pod weighs 1.
	WaitHigh float64 `yaml:"wait_high" json:"wait_high"`
	// Paired subtracts a per-workload baseline from P_wait and P_unplaced:
	// the prior heuristic (Prior.Baseline: Prior.Heuristic, or the first of
	// a gate's Prior.Heuristics) replays each episode's workload
	// under the episode's simulator seed, and every step adds back, with
	// the same weights, the waiting cost that replay accrued over the same
	// simulated interval, and on termination its pods left pending
	// (Info.PairedWait, Info.PairedUnplaced). A policy that decides as the
	// heuristic then earns exactly 0 from these two terms. Needs a prior.
	Paired bool `yaml:"paired" json:"paired"`
}

// Reference is the node size that pod requests and node sizes are
// normalised by, and the autoscaler's default template.
type Reference struct {
	CPU int64 `yaml:"cpu_millicores" json:"cpu_millicores"`
	Mem int64 `yaml:"mem_mib" json:"mem_mib"`
}

// NodeTemplate is the node that the autoscaler adds (its YAML keys). Zero
// fields are taken from the episode's workload: the most common shape of its
// initial nodes (on a trace, the trace's machines), else the Reference node.
type NodeTemplate struct {
	CPU     int64 `yaml:"cpu_millicores" json:"cpu_millicores"`
	Mem     int64 `yaml:"mem_mib" json:"mem_mib"`
	MaxPods int32 `yaml:"max_pods" json:"max_pods"`
}

// Config is everything an Env needs. Start from DefaultConfig; Validate
// reports the first bad value by its YAML key.
type Config struct {
	Reward Reward `yaml:"reward" json:"reward"`
	// MaxSteps truncates an episode after this many decisions; 0 lets it run
	// until the workload is exhausted (its window ends).
	MaxSteps int `yaml:"max_steps" json:"max_steps"`
	// MinNodes and MaxNodes bound the initial cluster size, drawn uniformly
	// per episode and passed to the Source.
	MinNodes int `yaml:"min_nodes" json:"min_nodes"`
	MaxNodes int `yaml:"max_nodes" json:"max_nodes"`
	// Reference normalises requests and node sizes in observations.
	Reference Reference `yaml:"reference" json:"reference"`
	// Domain is the failure-domain level of Obs.Domain: "zone" or "rack".
	Domain DomainLevel `yaml:"domain" json:"domain"`
	// Prior is the heuristic prior of Obs.Prior (observation.go); none by
	// default.
	Prior Prior `yaml:"prior" json:"prior"`
	// ScaleMin and ScaleMax size the autoscaler per episode relative to the
	// episode's initial node count n: min_nodes = floor(ScaleMin*n),
	// max_nodes = ceil(ScaleMax*n). Zero keeps Sim.Autoscaler's absolute
	// bounds. Used only when Sim.Autoscaler.Enabled.
	ScaleMin float64 `yaml:"autoscale_min_factor" json:"autoscale_min_factor"`
	ScaleMax float64 `yaml:"autoscale_max_factor" json:"autoscale_max_factor"`
	// ForcedSteps makes decisions where only Pending is legal (no node passes
	// the filters) steps of their own; by default the environment takes them
	// itself and the agent sees only real choices.
	ForcedSteps bool `yaml:"forced_steps" json:"forced_steps"`
	// Workload is the built-in synthetic source, used when New gets no Source.
	Workload Synthetic `yaml:"workload" json:"workload"`
	// NodeTemplate is the autoscaler's node (see NodeTemplate).
	NodeTemplate NodeTemplate `yaml:"node_template" json:"node_template"`
	// Sim configures the simulator. Its Seed is ignored: each episode draws
	// one from the environment's seed. Its autoscaler's template comes from
	// NodeTemplate.
	Sim sim.Config `yaml:"sim" json:"sim"`
}

// DefaultConfig returns the training defaults: bounded balance, every weight
// 1 including the deferral cost (a deferral then never pays for itself
// through the per-step balance reward), clusters of 5 to 50 nodes with the
// autoscaler on between half and one and a half times the initial size,
// startup and provisioning noise on (sim's defaults), synthetic episodes of
// 100 pods per node, forced steps taken by the environment.
func DefaultConfig() Config {
	s := sim.DefaultConfig()
	s.Autoscaler.Enabled = true
	return Config{
		Reward: Reward{
			Balance: 1, Fragment: 1, Violation: 1, Failure: 1, Pending: 1,
			BalanceForm: Bounded, BalanceOf: Used, FragmentMix: 0.5,
			Wait: 0, Unplaced: 0, WaitHigh: 1,
		},
		MinNodes:  5,
		MaxNodes:  50,
		Reference: Reference{CPU: 32000, Mem: 128 * 1024},
		Domain:    Zone,
		ScaleMin:  0.5,
		ScaleMax:  1.5,
		Workload:  DefaultSynthetic(),
		Sim:       s,
	}
}

// ErrConfig is wrapped by every configuration error.
var ErrConfig = errors.New("invalid env config")

// Validate reports the first impossible value, naming its YAML key.
func (c *Config) Validate() error {
	bad := func(key string, v any, why string) error {
		return fmt.Errorf("%w: %s = %v: %s", ErrConfig, key, v, why)
	}
	weights := []struct {
		key string
		v   float64
	}{
		{"reward.balance", c.Reward.Balance}, {"reward.fragment", c.Reward.Fragment},
		{"reward.violation", c.Reward.Violation}, {"reward.failure", c.Reward.Failure},
		{"reward.pending", c.Reward.Pending},
		{"reward.wait", c.Reward.Wait}, {"reward.unplaced", c.Reward.Unplaced},
		{"reward.wait_high", c.Reward.WaitHigh},
	}
	for _, w := range weights {
		if !(w.v >= 0) || math.IsInf(w.v, 0) {
			return bad(w.key, w.v, "must be a finite non-negative number")
		}
	}
	switch {
	case c.Reward.BalanceForm != Bounded && c.Reward.BalanceForm != Inverse && c.Reward.BalanceForm != Delta:
		return bad("reward.balance_form", c.Reward.BalanceForm, `must be "bounded", "inverse" or "delta"`)
	case c.Reward.BalanceOf != Used && c.Reward.BalanceOf != Requested:
		return bad("reward.balance_of", c.Reward.BalanceOf, `must be "used" or "requested"`)
	case c.Reward.BalanceForm == Delta && c.Reward.BalanceOf != Requested:
		return bad("reward.balance_form", c.Reward.BalanceForm,
			`"delta" needs reward.balance_of "requested" (a bind moves actual use only once the pod starts)`)
	case !(c.Reward.FragmentMix >= 0 && c.Reward.FragmentMix <= 1):
		return bad("reward.fragment_mix", c.Reward.FragmentMix, "must be in [0, 1]")
	case c.MaxSteps < 0:
		return bad("max_steps", c.MaxSteps, "must not be negative")
	case c.MinNodes < 1:
		return bad("min_nodes", c.MinNodes, "must be at least 1")
	case c.MaxNodes < c.MinNodes:
		return bad("max_nodes", c.MaxNodes, "must be at least min_nodes")
	case c.Reference.CPU <= 0:
		return bad("reference.cpu_millicores", c.Reference.CPU, "must be positive")
	case c.Reference.Mem <= 0:
		return bad("reference.mem_mib", c.Reference.Mem, "must be positive")
	case c.Domain != Zone && c.Domain != Rack:
		return bad("domain", c.Domain, `must be "zone" or "rack"`)
	case c.ScaleMin != 0 && !(c.ScaleMin > 0 && c.ScaleMin <= 1):
		return bad("autoscale_min_factor", c.ScaleMin, "must be 0 (off) or in (0, 1]")
	case c.ScaleMax != 0 && !(c.ScaleMax >= 1 && c.ScaleMax <= 100):
		return bad("autoscale_max_factor", c.ScaleMax, "must be 0 (off) or in [1, 100]")
	case c.NodeTemplate.CPU < 0:
		return bad("node_template.cpu_millicores", c.NodeTemplate.CPU, "must not be negative")
	case c.NodeTemplate.Mem < 0:
		return bad("node_template.mem_mib", c.NodeTemplate.Mem, "must not be negative")
	case c.NodeTemplate.MaxPods < 0:
		return bad("node_template.max_pods", c.NodeTemplate.MaxPods, "must not be negative")
	}
	if err := c.Prior.validate(); err != nil {
		return err
	}
	if c.Reward.Paired && c.Prior.Baseline() == "" {
		return bad("reward.paired", true, "needs prior.heuristic or prior.heuristics, whose (first) heuristic's replay is the baseline")
	}
	if err := c.Workload.Validate(); err != nil {
		return fmt.Errorf("%w: workload: %w", ErrConfig, err)
	}
	// The simulator's own checks, on the configuration of the smallest and
	// the largest episode.
	for _, n := range []int{c.MinNodes, c.MaxNodes} {
		s := c.SimConfig(n, 0)
		if err := s.Validate(); err != nil {
			return fmt.Errorf("%w: sim (episode of %d nodes): %w", ErrConfig, n, err)
		}
	}
	return nil
}

// SimConfig is the simulator configuration of an episode that starts with
// n nodes, under the given seed, with the autoscaler template built from
// NodeTemplate alone (the Reference node where it is zero).
func (c *Config) SimConfig(n int, seed uint64) sim.Config {
	return c.WorkloadConfig(&sim.Workload{}, n, seed)
}

// EpisodeConfig is the simulator configuration for replaying w under seed:
// the autoscaler's bounds follow w's initial node count, and the zero
// fields of NodeTemplate come from w's most common node shape.
func (c *Config) EpisodeConfig(w *sim.Workload, seed uint64) sim.Config {
	return c.WorkloadConfig(w, len(w.Nodes), seed)
}

// WorkloadConfig is EpisodeConfig with the autoscaler sized for n nodes.
func (c *Config) WorkloadConfig(w *sim.Workload, n int, seed uint64) sim.Config {
	s := c.Sim
	s.Seed = seed
	a := &s.Autoscaler
	if !a.Enabled {
		return s
	}
	a.Template = c.template(w)
	if c.ScaleMin > 0 {
		a.MinNodes = int(math.Floor(c.ScaleMin * float64(n)))
	}
	if c.ScaleMax > 0 {
		a.MaxNodes = int(math.Ceil(c.ScaleMax * float64(n)))
	}
	return s
}

// template is the autoscaler's node for workload w.
func (c *Config) template(w *sim.Workload) sim.NodeSpec {
	t := sim.NodeSpec{
		Name:        "autoscaled",
		Allocatable: sim.Resources{CPU: c.Reference.CPU, Mem: c.Reference.Mem},
		MaxPods:     sim.DefaultMaxPods,
	}
	if shape, ok := CommonShape(w.Nodes); ok {
		t.Allocatable, t.MaxPods = shape.Allocatable, shape.MaxPods
	}
	if c.NodeTemplate.CPU > 0 {
		t.Allocatable.CPU = c.NodeTemplate.CPU
	}
	if c.NodeTemplate.Mem > 0 {
		t.Allocatable.Mem = c.NodeTemplate.Mem
	}
	if c.NodeTemplate.MaxPods > 0 {
		t.MaxPods = c.NodeTemplate.MaxPods
	}
	if t.MaxPods == 0 {
		t.MaxPods = sim.DefaultMaxPods
	}
	return t
}

// CommonShape returns the most common (allocatable, pod limit) of nodes,
// ties going to the shape that reaches the count first; false when nodes is
// empty.
func CommonShape(nodes []sim.NodeSpec) (sim.NodeSpec, bool) {
	type shape struct {
		a sim.Resources
		p int32
	}
	count := make(map[shape]int, 4)
	best, bestN := -1, 0
	for i := range nodes {
		k := shape{nodes[i].Allocatable, nodes[i].MaxPods}
		count[k]++
		if count[k] > bestN {
			best, bestN = i, count[k]
		}
	}
	if best < 0 {
		return sim.NodeSpec{}, false
	}
	return sim.NodeSpec{Allocatable: nodes[best].Allocatable, MaxPods: nodes[best].MaxPods}, true
}
