package sched

// BestFitProfile is the best-fit heuristic: the default filters and the
// BestFit score alone, every feasible node scored.
func BestFitProfile() Profile {
	return Profile{
		Name:                     NameBestFit,
		Filters:                  DefaultFilters(),
		Scores:                   []WeightedScore{{BestFit{}, 1}},
		PercentageOfNodesToScore: 100,
	}
}

// TetrisProfile is the Tetris heuristic: the default filters and the Tetris
// alignment score alone, every feasible node scored.
func TetrisProfile() Profile {
	return Profile{
		Name:                     NameTetris,
		Filters:                  DefaultFilters(),
		Scores:                   []WeightedScore{{Tetris{}, 1}},
		PercentageOfNodesToScore: 100,
	}
}

// HolesProfile is the Holes heuristic: the default filters and the Holes
// score alone (holes sized by the median service), every feasible node
// scored.
func HolesProfile() Profile {
	return Profile{
		Name:                     NameHoles,
		Filters:                  DefaultFilters(),
		Scores:                   []WeightedScore{{Holes{Quantile: 0.5}, 1}},
		PercentageOfNodesToScore: 100,
	}
}

// FirstFitProfile is first-fit: the default filters, then the first
// feasible node in node order.
func FirstFitProfile() Profile {
	return Profile{
		Name:                     NameFirstFit,
		Filters:                  DefaultFilters(),
		PercentageOfNodesToScore: 100,
		Select:                   SelectFirst,
	}
}

// RandomProfile is the random baseline: the default filters, then a node
// drawn uniformly from all feasible nodes (no score plugins, so every
// feasible node ties).
func RandomProfile() Profile {
	return Profile{
		Name:                     NameRandom,
		Filters:                  DefaultFilters(),
		PercentageOfNodesToScore: 100,
	}
}

// NewBestFit returns the best-fit scheduler; ties draw from seed.
func NewBestFit(seed uint64) *Framework { return newFramework(BestFitProfile(), seed) }

// NewTetris returns the Tetris scheduler; ties draw from seed.
func NewTetris(seed uint64) *Framework { return newFramework(TetrisProfile(), seed) }

// NewHoles returns the Holes scheduler; ties draw from seed.
func NewHoles(seed uint64) *Framework { return newFramework(HolesProfile(), seed) }

// NewFirstFit returns the first-fit scheduler. It makes no random choice.
func NewFirstFit() *Framework { return newFramework(FirstFitProfile(), 0) }

// NewRandom returns the random scheduler drawing from seed.
func NewRandom(seed uint64) *Framework { return newFramework(RandomProfile(), seed) }
