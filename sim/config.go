package sim

import (
	"errors"
	"fmt"
)

// Config holds every knob of the simulator. Start from DefaultConfig and
// change what you need; Validate reports the first impossible value by its
// YAML key.
type Config struct {
	// Seed drives every random choice of the engine (startup and provisioning
	// noise). Schedulers have their own seeds.
	Seed uint64 `yaml:"seed" json:"seed"`
	// SampleInterval is the period of metric samples.
	SampleInterval Time `yaml:"sample_interval_ms" json:"sample_interval_ms"`
	// StartupBase and StartupNoise give a pod's startup latency (image pull,
	// volume mount) between bind and start: StartupBase plus Gaussian noise of
	// standard deviation StartupNoise, truncated at zero.
	StartupBase  Time `yaml:"startup_base_ms" json:"startup_base_ms"`
	StartupNoise Time `yaml:"startup_noise_ms" json:"startup_noise_ms"`
	// BackoffInitial and BackoffMax are kube-scheduler's pod backoff: a pod
	// that was deferred or failed waits BackoffInitial, doubling per attempt up
	// to BackoffMax, before it is tried again.
	BackoffInitial Time `yaml:"backoff_initial_ms" json:"backoff_initial_ms"`
	BackoffMax     Time `yaml:"backoff_max_ms" json:"backoff_max_ms"`
	// Preemption lets a high-priority pod that fits nowhere evict
	// lower-priority pods.
	Preemption bool `yaml:"preemption" json:"preemption"`
	// StrandedQuantile picks the "typical pod" for stranded resources: the
	// quantile of the workload's CPU requests and (separately) memory requests.
	StrandedQuantile float64 `yaml:"stranded_quantile" json:"stranded_quantile"`
	// OffPeakQuantile: a sample is off-peak when its cluster CPU utilisation
	// is at or below this quantile (nearest rank) of the run's sampled CPU
	// utilisations, so any run with samples has off-peak samples.
	OffPeakQuantile float64 `yaml:"off_peak_quantile" json:"off_peak_quantile"`
	// SLADeadline: a high-priority pod that waits longer than this from
	// arrival to its first bind (or is never bound) is in SLA violation.
	SLADeadline Time `yaml:"sla_deadline_ms" json:"sla_deadline_ms"`
	// HotNodeThreshold and HotClusterThreshold define a hot sample: some
	// node's CPU utilisation above HotNodeThreshold while the cluster's is
	// below HotClusterThreshold (one node at 90% while the others idle).
	HotNodeThreshold    float64 `yaml:"hot_node_threshold" json:"hot_node_threshold"`
	HotClusterThreshold float64 `yaml:"hot_cluster_threshold" json:"hot_cluster_threshold"`
	// WarmUp is simulated but excluded from every metric: samples before it
	// are not used, pods that arrive before it count nowhere (pods, latency,
	// SLA, unschedulable), and node-hours and the counters in Result
	// (evictions, preemptions, failed attempts, drained, scale-ups and
	// -downs, ignored machine events) count from it on. Zero measures the
	// whole run.
	WarmUp Time `yaml:"warm_up_ms" json:"warm_up_ms"`
	// Grace is a drain period after the window's end: no pod arrives any
	// more, the run goes on for Grace, and Result's UnschedulableAfterGrace
	// counts the pods left pending at the window's end that are still
	// pending when it is over. Every other figure of Result is measured at
	// the window's end, exactly as without a grace period. It separates a
	// pod that never fits from one that arrived just before the cut-off
	// (docs/sim.md). Zero (the default) ends the run at the window's end;
	// a positive Grace needs a workload with an End.
	Grace Time `yaml:"grace_ms" json:"grace_ms"`
	// Autoscaler configures the cluster-autoscaler model.
	Autoscaler AutoscalerConfig `yaml:"autoscaler" json:"autoscaler"`
}

// AutoscalerConfig is a cluster-autoscaler-like node-group autoscaler.
type AutoscalerConfig struct {
	Enabled bool `yaml:"enabled" json:"enabled"`
	// Template is the node that scale-up adds; its Name is a prefix.
	Template NodeSpec `yaml:"-" json:"-"`
	// MinNodes and MaxNodes bound the node count (live plus provisioning).
	MinNodes int `yaml:"min_nodes" json:"min_nodes"`
	MaxNodes int `yaml:"max_nodes" json:"max_nodes"`
	// ScanInterval is how often the autoscaler looks at the cluster.
	ScanInterval Time `yaml:"scan_interval_ms" json:"scan_interval_ms"`
	// ScaleUpDelay: a pod must have been unschedulable this long to trigger a
	// scale-up.
	ScaleUpDelay Time `yaml:"scale_up_delay_ms" json:"scale_up_delay_ms"`
	// ProvisionDelay plus Gaussian noise of std ProvisionNoise (truncated at
	// zero) is how long a new node takes to become ready.
	ProvisionDelay Time `yaml:"provision_delay_ms" json:"provision_delay_ms"`
	ProvisionNoise Time `yaml:"provision_noise_ms" json:"provision_noise_ms"`
	// A node whose requested utilisation (max of CPU and memory requested over
	// allocatable) stays below ScaleDownThreshold for ScaleDownCooldown is
	// removed when its pods fit elsewhere.
	ScaleDownThreshold float64 `yaml:"scale_down_threshold" json:"scale_down_threshold"`
	ScaleDownCooldown  Time    `yaml:"scale_down_cooldown_ms" json:"scale_down_cooldown_ms"`
	// ScaleDownDelayAfterAdd blocks scale-down for this long after a scale-up.
	ScaleDownDelayAfterAdd Time `yaml:"scale_down_delay_after_add_ms" json:"scale_down_delay_after_add_ms"`
}

// DefaultConfig returns the defaults used everywhere unless a config file
// says otherwise.
func DefaultConfig() Config {
	return Config{
		Seed:                1,
		SampleInterval:      Minute,
		StartupBase:         2 * Second,
		StartupNoise:        500 * Millisecond,
		BackoffInitial:      1 * Second,
		BackoffMax:          10 * Second,
		Preemption:          true,
		StrandedQuantile:    0.5,
		OffPeakQuantile:     0.25,
		SLADeadline:         60 * Second,
		HotNodeThreshold:    0.9,
		HotClusterThreshold: 0.6,
		Autoscaler: AutoscalerConfig{
			Enabled:                false,
			MinNodes:               1,
			MaxNodes:               1000,
			ScanInterval:           10 * Second,
			ScaleUpDelay:           10 * Second,
			ProvisionDelay:         60 * Second,
			ProvisionNoise:         10 * Second,
			ScaleDownThreshold:     0.5,
			ScaleDownCooldown:      10 * Minute,
			ScaleDownDelayAfterAdd: 10 * Minute,
		},
	}
}

// ErrConfig is wrapped by every configuration error.
var ErrConfig = errors.New("invalid simulator config")

// Validate reports the first impossible value, naming its YAML key.
func (c *Config) Validate() error {
	bad := func(key string, v any, why string) error {
		return fmt.Errorf("%w: %s = %v: %s", ErrConfig, key, v, why)
	}
	switch {
	case c.SampleInterval <= 0:
		return bad("sample_interval_ms", c.SampleInterval, "must be positive")
	case c.StartupBase < 0:
		return bad("startup_base_ms", c.StartupBase, "must not be negative")
	case c.StartupNoise < 0:
		return bad("startup_noise_ms", c.StartupNoise, "must not be negative")
	case c.BackoffInitial <= 0:
		return bad("backoff_initial_ms", c.BackoffInitial, "must be positive")
	case c.BackoffMax < c.BackoffInitial:
		return bad("backoff_max_ms", c.BackoffMax, "must be at least backoff_initial_ms")
	case !(c.StrandedQuantile >= 0 && c.StrandedQuantile <= 1):
		return bad("stranded_quantile", c.StrandedQuantile, "must be in [0, 1]")
	case c.WarmUp < 0:
		return bad("warm_up_ms", c.WarmUp, "must not be negative")
	case c.Grace < 0:
		return bad("grace_ms", c.Grace, "must not be negative")
	case !(c.OffPeakQuantile >= 0 && c.OffPeakQuantile <= 1):
		return bad("off_peak_quantile", c.OffPeakQuantile, "must be in [0, 1]")
	case c.SLADeadline <= 0:
		return bad("sla_deadline_ms", c.SLADeadline, "must be positive")
	case !(c.HotNodeThreshold >= 0 && c.HotNodeThreshold <= 1):
		return bad("hot_node_threshold", c.HotNodeThreshold, "must be in [0, 1]")
	case !(c.HotClusterThreshold >= 0 && c.HotClusterThreshold <= 1):
		return bad("hot_cluster_threshold", c.HotClusterThreshold, "must be in [0, 1]")
	}
	a := &c.Autoscaler
	if !a.Enabled {
		return nil
	}
	switch {
	case a.MinNodes < 0:
		return bad("autoscaler.min_nodes", a.MinNodes, "must not be negative")
	case a.MaxNodes < a.MinNodes || a.MaxNodes <= 0:
		return bad("autoscaler.max_nodes", a.MaxNodes, "must be positive and at least min_nodes")
	case a.ScanInterval <= 0:
		return bad("autoscaler.scan_interval_ms", a.ScanInterval, "must be positive")
	case a.ScaleUpDelay < 0:
		return bad("autoscaler.scale_up_delay_ms", a.ScaleUpDelay, "must not be negative")
	case a.ProvisionDelay < 0:
		return bad("autoscaler.provision_delay_ms", a.ProvisionDelay, "must not be negative")
	case a.ProvisionNoise < 0:
		return bad("autoscaler.provision_noise_ms", a.ProvisionNoise, "must not be negative")
	case !(a.ScaleDownThreshold >= 0 && a.ScaleDownThreshold <= 1):
		return bad("autoscaler.scale_down_threshold", a.ScaleDownThreshold, "must be in [0, 1]")
	case a.ScaleDownCooldown < 0:
		return bad("autoscaler.scale_down_cooldown_ms", a.ScaleDownCooldown, "must not be negative")
	case a.ScaleDownDelayAfterAdd < 0:
		return bad("autoscaler.scale_down_delay_after_add_ms", a.ScaleDownDelayAfterAdd, "must not be negative")
	}
	if err := a.Template.validate(); err != nil {
		return fmt.Errorf("%w: autoscaler template: %w", ErrConfig, err)
	}
	return nil
}
