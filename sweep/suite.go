package sweep

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"

	"github.com/kubesim/kubesim/dataset"
	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/sim"
)

// Suite is the multi-trace protocol (issue 25): traces that the calibrated
// generator makes under many seeds, split by seed into training,
// validation and test traces that share no seed. A spec with a suite has a
// trace section without dir (its other keys, such as load_factor and
// warm_start, apply to every trace) and no windows section: the suite
// chooses the windows.
//
// Every evaluated trace (a validation or test seed) contributes
// day_windows windows of window_ms spread over its day, at offsets that
// rotate with the trace's place in its list so that the suite covers every
// hour, and its heaviest window (the most arrivals; dataset.HeaviestWindow),
// so that bursts are always in it. A window's regime is "burst" when it
// holds at least burst_ratio times the median arrivals of the trace's
// windows of that length (the whole day, cut on the window grid), else
// "calm"; the tables are split by regime. Training draws from every window
// of the grid of each training trace and from its heaviest window, which
// heavy_weight times more often.
type Suite struct {
	// Dir holds the suite's traces, one folder per seed
	// (seed-S-mM-dD), made on first use (synthesised and converted:
	// dataset.EnsureSynth); relative to the spec file's folder.
	Dir string `yaml:"dir"`
	// Days is each trace's length (default 1).
	Days float64 `yaml:"days"`
	// Machines are the generator's cluster sizes: seed S gets
	// Machines[S mod len(Machines)].
	Machines []int `yaml:"machines"`
	// TrainSeeds, ValidationSeeds and TestSeeds are the generator seeds of
	// the three splits; no seed may be in two.
	TrainSeeds      []uint64 `yaml:"train_seeds"`
	ValidationSeeds []uint64 `yaml:"validation_seeds"`
	TestSeeds       []uint64 `yaml:"test_seeds"`
	// Evaluate is the split the experiment's tables replay: "test" (the
	// default) or "validation" (selection rules read this one only).
	Evaluate string `yaml:"evaluate"`
	// WindowMs is the length of every window (default 2 h).
	WindowMs sim.Time `yaml:"window_ms"`
	// DayWindows is the number of windows of each evaluated trace spread
	// over its day (default 3), beside its heaviest window.
	DayWindows int `yaml:"day_windows"`
	// BurstRatio is the arrivals multiple of the trace's median window that
	// makes a window a burst (default 2).
	BurstRatio float64 `yaml:"burst_ratio"`
	// HeavyWeight is how many times a training trace's heaviest window is
	// listed among its training windows (default 4: oversampled).
	HeavyWeight int `yaml:"heavy_weight"`

	mu      sync.Mutex
	windows map[uint64][]SuiteWindow // per seed, computed once
}

// Suite splits and regimes.
const (
	SplitTrain      = "train"
	SplitValidation = "validation"
	SplitTest       = "test"
	RegimeBurst     = "burst"
	RegimeCalm      = "calm"
)

// SuiteWindow is one window of a suite trace.
type SuiteWindow struct {
	Seed     uint64
	Dir      string
	Machines int
	Window   dataset.Window
	// Arrivals counts the pods arriving in the window (the whole trace, load 1).
	Arrivals int64
	// Regime is RegimeBurst or RegimeCalm.
	Regime string
	// Heaviest marks the trace's heaviest window.
	Heaviest bool
}

// Workload is the window's name in tables and cells: "s<seed>/<window>".
func (w SuiteWindow) Workload() string { return fmt.Sprintf("s%d/%s", w.Seed, w.Window.Name) }

func (u *Suite) defaults() {
	if u.Days == 0 {
		u.Days = 1
	}
	if u.Evaluate == "" {
		u.Evaluate = SplitTest
	}
	if u.WindowMs == 0 {
		u.WindowMs = 2 * sim.Hour
	}
	if u.DayWindows == 0 {
		u.DayWindows = 3
	}
	if u.BurstRatio == 0 {
		u.BurstRatio = 2
	}
	if u.HeavyWeight == 0 {
		u.HeavyWeight = 4
	}
}

// validate checks the suite, naming the key at fault.
func (u *Suite) validate() error {
	u.defaults()
	switch {
	case u.Dir == "":
		return fmt.Errorf("suite.dir: missing")
	case !(u.Days >= 1.0/24) || u.Days > 30:
		return fmt.Errorf("suite.days = %v: must be in [1/24, 30]", u.Days)
	case len(u.Machines) == 0:
		return fmt.Errorf("suite.machines: missing")
	case slices.ContainsFunc(u.Machines, func(m int) bool { return m < 1 || m > 100_000 }):
		return fmt.Errorf("suite.machines = %v: each must be in [1, 100000]", u.Machines)
	case len(u.TrainSeeds) == 0 || len(u.ValidationSeeds) == 0 || len(u.TestSeeds) == 0:
		return fmt.Errorf("suite: give train_seeds, validation_seeds and test_seeds")
	case u.Evaluate != SplitTest && u.Evaluate != SplitValidation:
		return fmt.Errorf("suite.evaluate = %q: want %s or %s", u.Evaluate, SplitTest, SplitValidation)
	case u.WindowMs < sim.Minute || u.WindowMs%(10*sim.Minute) != 0:
		return fmt.Errorf("suite.window_ms = %d: must be a positive multiple of 10 minutes", u.WindowMs)
	case sim.Time(u.Days*float64(dataset.Day)) < u.WindowMs:
		return fmt.Errorf("suite.window_ms = %d: longer than a trace of %v days", u.WindowMs, u.Days)
	case u.DayWindows < 0 || u.DayWindows > 1000:
		return fmt.Errorf("suite.day_windows = %d: must be in [0, 1000]", u.DayWindows)
	case !(u.BurstRatio > 0) || u.BurstRatio > 1000:
		return fmt.Errorf("suite.burst_ratio = %v: must be in (0, 1000]", u.BurstRatio)
	case u.HeavyWeight < 0 || u.HeavyWeight > 1000:
		return fmt.Errorf("suite.heavy_weight = %d: must be in [0, 1000]", u.HeavyWeight)
	}
	return disjointSeeds(map[string][]uint64{"train_seeds": u.TrainSeeds, "validation_seeds": u.ValidationSeeds, "test_seeds": u.TestSeeds})
}

// disjointSeeds checks that no seed is listed twice, in one split or two.
func disjointSeeds(splits map[string][]uint64) error {
	where := map[uint64]string{}
	for _, key := range []string{"train_seeds", "validation_seeds", "test_seeds"} {
		for _, s := range splits[key] {
			if w, ok := where[s]; ok {
				if w == key {
					return fmt.Errorf("suite.%s: seed %d listed twice", key, s)
				}
				return fmt.Errorf("suite: seed %d is in %s and %s: the splits must share no seed", s, w, key)
			}
			where[s] = key
		}
	}
	return nil
}

// Seeds returns the generator seeds of a split.
func (u *Suite) Seeds(split string) []uint64 {
	switch split {
	case SplitTrain:
		return u.TrainSeeds
	case SplitValidation:
		return u.ValidationSeeds
	}
	return u.TestSeeds
}

// MachinesOf is the generator's cluster size for seed.
func (u *Suite) MachinesOf(seed uint64) int { return u.Machines[seed%uint64(len(u.Machines))] }

// SynthOptions are the generator options of seed's trace.
func (u *Suite) SynthOptions(seed uint64) dataset.SynthOptions {
	o := dataset.DefaultSynthOptions()
	o.Machines, o.Days, o.Seed = u.MachinesOf(seed), u.Days, seed
	return o
}

// TraceDir is the folder of seed's converted trace.
func (u *Suite) TraceDir(seed uint64) string {
	return filepath.Join(u.Dir, fmt.Sprintf("seed-%d-m%d-d%g", seed, u.MachinesOf(seed), u.Days))
}

// Ensure makes every trace of the suite that is not there yet.
func (u *Suite) Ensure(ctx context.Context) error {
	for _, split := range []string{SplitTrain, SplitValidation, SplitTest} {
		for _, seed := range u.Seeds(split) {
			if err := dataset.EnsureSynth(ctx, u.TraceDir(seed), u.SynthOptions(seed)); err != nil {
				return fmt.Errorf("suite trace of seed %d: %w", seed, err)
			}
		}
	}
	return nil
}

// arrivalBin is the resolution of the heaviest-window search.
const arrivalBin = 10 * sim.Minute

// traceWindows returns every window of seed's trace: the grid of
// window_ms over its whole days, then the heaviest window, each with its
// arrivals and regime (Heaviest marks the last). The trace must exist
// (Ensure).
func (u *Suite) traceWindows(seed uint64) ([]SuiteWindow, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if ws, ok := u.windows[seed]; ok {
		return ws, nil
	}
	dir := u.TraceDir(seed)
	counts, err := dataset.Arrivals(context.Background(), dir, arrivalBin)
	if err != nil {
		return nil, fmt.Errorf("suite trace of seed %d: %w", seed, err)
	}
	n := int(sim.Time(u.Days*float64(dataset.Day)) / u.WindowMs)
	var ws []SuiteWindow
	var arr []int64
	for i := range n {
		from := sim.Time(i) * u.WindowMs
		w := dataset.Window{Name: fmt.Sprintf("%gh-%gh", float64(from)/float64(sim.Hour), float64(from+u.WindowMs)/float64(sim.Hour)), From: from, To: from + u.WindowMs}
		a := dataset.WindowArrivals(counts, arrivalBin, w)
		arr = append(arr, a)
		ws = append(ws, SuiteWindow{Seed: seed, Dir: dir, Machines: u.MachinesOf(seed), Window: w, Arrivals: a})
	}
	hw, ha, err := dataset.HeaviestWindow(counts[:min(len(counts), int(sim.Time(n)*u.WindowMs/arrivalBin))], arrivalBin, u.WindowMs)
	if err != nil {
		return nil, fmt.Errorf("suite trace of seed %d: %w", seed, err)
	}
	ws = append(ws, SuiteWindow{Seed: seed, Dir: dir, Machines: u.MachinesOf(seed), Window: hw, Arrivals: ha, Heaviest: true})
	med := median(arr)
	for i := range ws {
		ws[i].Regime = RegimeCalm
		if float64(ws[i].Arrivals) >= u.BurstRatio*med {
			ws[i].Regime = RegimeBurst
		}
	}
	if u.windows == nil {
		u.windows = map[uint64][]SuiteWindow{}
	}
	u.windows[seed] = ws
	return ws, nil
}

// median of counts (the mean of the middle two for an even count).
func median(xs []int64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return float64(s[len(s)/2])
	}
	return float64(s[len(s)/2-1]+s[len(s)/2]) / 2
}

// EvalWindows returns the windows that evaluating a split replays: for the
// k-th trace of the split, day_windows grid windows evenly spaced over the
// day and starting at grid slot k (so that the split's traces cover
// different hours), then its heaviest window; a day window that coincides
// with the heaviest one is left out (it is there as the heaviest).
func (u *Suite) EvalWindows(split string) ([]SuiteWindow, error) {
	var out []SuiteWindow
	for k, seed := range u.Seeds(split) {
		ws, err := u.traceWindows(seed)
		if err != nil {
			return nil, err
		}
		grid, heavy := ws[:len(ws)-1], ws[len(ws)-1]
		n := len(grid)
		picked := map[int]bool{}
		for j := range min(u.DayWindows, n) {
			i := (k + j*n/min(u.DayWindows, n)) % n
			// a day window that is the heaviest window is listed once, as
			// the heaviest: twice, it would count its pods twice
			if same := grid[i].Window.From == heavy.Window.From && grid[i].Window.To == heavy.Window.To; !picked[i] && !same {
				picked[i] = true
				out = append(out, grid[i])
			}
		}
		out = append(out, heavy)
	}
	return out, nil
}

// Source is the episode source of a split: every grid window of each of
// its traces, and the heaviest window heavy_weight times (training) or
// once (validation), replayed under the trace section's options.
func (u *Suite) Source(split string, t *Trace) (env.Source, error) {
	var src env.Traces
	for _, seed := range u.Seeds(split) {
		ws, err := u.traceWindows(seed)
		if err != nil {
			return nil, err
		}
		var wins []dataset.Window
		for _, w := range ws {
			k := 1
			if w.Heaviest && split == SplitTrain {
				k = u.HeavyWeight
			}
			for range k {
				wins = append(wins, t.LoadOptions(w.Window, 0, 0).Window)
			}
		}
		src = append(src, env.Trace{Dir: u.TraceDir(seed), Windows: wins, LoadFactors: t.TrainLoadFactors,
			Options: t.LoadOptions(dataset.Window{}, 0, 0)})
	}
	return src, nil
}

// suiteKey is what a training cell depends on of the suite: every setting
// but its folder (the data is named by its manifests) and the evaluation's
// choices (evaluate, day_windows), which training never reads.
type suiteKey struct {
	Days                  float64
	Machines              []int
	TrainSeeds, ValSeeds  []uint64
	WindowMs              sim.Time
	HeavyWeight           int
	TestSeedsNeverTrained []uint64 // listed so that moving a seed to test retrains
}

func (u *Suite) key() suiteKey {
	return suiteKey{Days: u.Days, Machines: u.Machines, TrainSeeds: u.TrainSeeds, ValSeeds: u.ValidationSeeds,
		WindowMs: u.WindowMs, HeavyWeight: u.HeavyWeight, TestSeedsNeverTrained: u.TestSeeds}
}

// SuiteCases lists the evaluation workloads of a suite spec: for each size
// in eval.nodes and each of eval.seeds seeds (first, first+1, ...), each of
// windows on that many machines of its trace under that seed. A size larger
// than a trace's machines in service is skipped for that trace: it would
// replay the whole trace and count it as a larger cluster.
func SuiteCases(s *Spec, windows []SuiteWindow, first uint64) []Case {
	ec := s.EnvConfig()
	var cases []Case
	for _, n := range s.Eval.Nodes {
		for k := range s.Eval.Seeds {
			seed := first + uint64(k)
			for _, sw := range windows {
				if n > sw.Machines {
					continue
				}
				c := traceCase(ec, sw.Dir, s.Trace.LoadOptions(sw.Window, n, seed), sw.Workload())
				c.Regime, c.window, c.dir = sw.Regime, sw.Window, sw.Dir
				cases = append(cases, c)
			}
		}
	}
	return cases
}

// EnsureData makes the data the spec reads when it can be made: the
// suite's traces (a trace section's dir must already hold a trace).
func (s *Spec) EnsureData(ctx context.Context) error {
	if s.Suite == nil {
		return nil
	}
	return s.Suite.Ensure(ctx)
}
