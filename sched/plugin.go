package sched

import "github.com/kubesim/kubesim/sim"

// Score bounds of kube-scheduler's score plugins after normalisation.
const (
	MinNodeScore int64 = 0
	MaxNodeScore int64 = 100
)

// Plugin is the root of every plugin: a name, used in profiles and errors.
type Plugin interface {
	Name() string
}

// FilterPlugin removes the nodes a pod cannot run on (kube-scheduler's
// Filter extension point).
//
// Plugins work on a batch of candidates rather than one node per call, so a
// decision over N nodes costs one dynamic call per plugin instead of N. Filter
// receives node indices into nodes (in the order the framework wants them
// examined), keeps those that pass, in order, by compacting cand in place, and
// returns the shortened slice cand[:k]. It must not modify nodes or p, must not
// keep cand, and must not allocate.
type FilterPlugin interface {
	Plugin
	Filter(nodes []sim.Node, p *sim.PodSpec, cand []int32) []int32
}

// ScorePlugin ranks the nodes that passed the filters (kube-scheduler's
// PreScore, Score and NormalizeScore extension points in one call).
//
// Score writes into dst[i] the normalised score of node cand[i]
// (len(dst) == len(cand)) and returns true; kube-scheduler's plugins score in
// [MinNodeScore, MaxNodeScore], kubesim's own heuristics may use a finer
// non-negative scale. Normalisation (such as NormalizeScore) is over exactly
// the candidates given. A plugin that has nothing to say about the pod (the
// upstream PreScore "Skip" status) returns false and leaves dst alone; it then
// adds nothing to any node. Score must not modify nodes or p, must not keep
// its slices, and must not allocate.
type ScorePlugin interface {
	Plugin
	Score(nodes []sim.Node, p *sim.PodSpec, cand []int32, dst []int64) bool
}

// ClusterScorePlugin is a ScorePlugin that needs more than the candidates'
// node states: pods bound anywhere in the cluster and the pod's engine state
// (its group), as upstream's PreScore reads the scheduler's snapshot. The
// framework calls ScoreCluster instead of Score, with the same contract;
// Score itself, without the cluster, returns false.
type ClusterScorePlugin interface {
	ScorePlugin
	ScoreCluster(c *sim.Cluster, p *sim.Pod, cand []int32, dst []int64) bool
}

// NormalizeScore is kube-scheduler's DefaultNormalizeScore: it scales scores
// from [0, max(scores)] to [0, maxPriority] with integer arithmetic, in place,
// and with reverse set replaces each result s by maxPriority - s. When every
// score is zero the scores stay zero, or all become maxPriority with reverse
// set. Scores are assumed non-negative, as upstream.
func NormalizeScore(maxPriority int64, reverse bool, scores []int64) {
	var maxCount int64
	minCount := int64(0)
	for _, s := range scores {
		maxCount = max(maxCount, s)
		minCount = min(minCount, s)
	}
	if maxCount == 0 {
		if reverse {
			for i := range scores {
				scores[i] = maxPriority
			}
		}
		return
	}
	if minCount == 0 && maxCount < normalizeTableSize {
		// Few distinct raw values (taint counts, summed affinity weights):
		// compute each result once and look them up.
		var table [normalizeTableSize]int64
		for s := range maxCount + 1 {
			table[s] = normalized(maxPriority, reverse, s, maxCount)
		}
		for i, s := range scores {
			scores[i] = table[s]
		}
		return
	}
	for i, s := range scores {
		scores[i] = normalized(maxPriority, reverse, s, maxCount)
	}
}

// normalizeTableSize bounds the raw maximum for which NormalizeScore uses a
// lookup table.
const normalizeTableSize = 256

// normalized is one score of NormalizeScore.
func normalized(maxPriority int64, reverse bool, s, maxCount int64) int64 {
	s = maxPriority * s / maxCount
	if reverse {
		s = maxPriority - s
	}
	return s
}
