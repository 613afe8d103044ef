package sched

import "fmt"

// Default score weights of kube-scheduler v1.35's default profile for the
// plugins kubesim models.
const (
	TaintTolerationWeight                 int64 = 3
	NodeAffinityWeight                    int64 = 2
	NodeResourcesFitWeight                int64 = 1
	NodeResourcesBalancedAllocationWeight int64 = 1
)

// KubeDefaultOptions configures NewKubeDefault. The zero value is
// kube-scheduler v1.35's default profile.
type KubeDefaultOptions struct {
	// PercentageOfNodesToScore is kube-scheduler's option: 0 (the default)
	// is the adaptive percentage; 100 scores every feasible node (sampling
	// off); 1..99 a fixed percentage. Either way clusters of at most 100
	// nodes are searched in full and at least 100 feasible nodes are kept,
	// so sampling only changes decisions above 100 nodes.
	PercentageOfNodesToScore int
	// Strategy is NodeResourcesFit's scoring strategy: LeastAllocatedStrategy
	// (the default) or MostAllocatedStrategy, kube-scheduler's bin-packing
	// configuration.
	Strategy ScoringStrategy
	// NoSpread leaves PodTopologySpread out of the scores: kubesim's
	// profile before it modelled the plugin (NameKubeDefaultNoSpread, and
	// NameMostAllocated with MostAllocatedStrategy), kept for comparison.
	NoSpread bool
}

// KubeDefaultProfile returns kube-scheduler's default profile restricted to
// what kubesim models. Filters: TaintToleration, NodeAffinity,
// NodeResourcesFit (upstream order). Scores: TaintToleration weight 3,
// NodeAffinity weight 2, NodeResourcesFit (o.Strategy, CPU and memory weight
// 1) weight 1, NodeResourcesBalancedAllocation weight 1 and, unless
// o.NoSpread, PodTopologySpread (system default constraints) weight 2. It is
// named NameKubeDefault, NameKubeDefaultNoSpread with o.NoSpread,
// NameMostAllocated with MostAllocatedStrategy and o.NoSpread, and
// "most-allocated-spread" (not in the registry) with MostAllocatedStrategy
// alone.
func KubeDefaultProfile(o KubeDefaultOptions) Profile {
	name := NameKubeDefault
	switch {
	case o.Strategy == MostAllocatedStrategy && o.NoSpread:
		name = NameMostAllocated
	case o.Strategy == MostAllocatedStrategy:
		name = NameMostAllocated + "-spread"
	case o.NoSpread:
		name = NameKubeDefaultNoSpread
	}
	fit := NewNodeResourcesFit(o.Strategy)
	scores := []WeightedScore{
		{TaintToleration{}, TaintTolerationWeight},
		{NodeAffinity{}, NodeAffinityWeight},
		{fit, NodeResourcesFitWeight},
		{NodeResourcesBalancedAllocation{}, NodeResourcesBalancedAllocationWeight},
	}
	if !o.NoSpread {
		scores = append(scores, WeightedScore{NewPodTopologySpread(), PodTopologySpreadWeight})
	}
	return Profile{
		Name:                     name,
		Filters:                  DefaultFilters(),
		Scores:                   scores,
		PercentageOfNodesToScore: o.PercentageOfNodesToScore,
		Select:                   SelectBest,
	}
}

// NewKubeDefault returns kube-scheduler's default profile
// (KubeDefaultProfile) as a scheduler whose tie-breaks draw from seed.
func NewKubeDefault(seed uint64, o KubeDefaultOptions) (*Framework, error) {
	switch o.Strategy {
	case LeastAllocatedStrategy, MostAllocatedStrategy:
	default:
		return nil, fmt.Errorf("kube-default: unknown scoring strategy %d", o.Strategy)
	}
	f, err := NewFramework(KubeDefaultProfile(o), seed)
	if err != nil {
		return nil, fmt.Errorf("kube-default: %w", err)
	}
	return f, nil
}

// DefaultFilters returns kube-scheduler's default filters that kubesim
// models, in upstream order: TaintToleration, NodeAffinity, NodeResourcesFit.
// Every scheduler of this package uses them; together they accept exactly
// the nodes where sim.Feasible holds.
func DefaultFilters() []FilterPlugin {
	return []FilterPlugin{TaintToleration{}, NodeAffinity{}, NewNodeResourcesFit(LeastAllocatedStrategy)}
}
