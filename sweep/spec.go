package sweep

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/ppo"
	"github.com/kubesim/kubesim/sim"
)

// Spec is an experiment or training file. Its sections are the same for
// `kubesim train` and for experiments: where the workload comes from (trace
// and windows, or the synthetic generator), the cluster, the reward, PPO's
// hyper-parameters and the evaluation. Every key is optional; defaults are
// env.DefaultConfig and ppo.DefaultConfig. Unknown keys are errors.
type Spec struct {
	Name    string      `yaml:"name"`
	Trace   *Trace      `yaml:"trace"`
	Windows *WindowSpec `yaml:"windows"`
	// Suite replaces trace.dir and windows with the multi-trace protocol:
	// many generated traces, split by seed (see Suite).
	Suite   *Suite     `yaml:"suite" json:",omitempty"`
	Cluster Cluster    `yaml:"cluster"`
	Reward  env.Reward `yaml:"reward"`
	// Prior is the heuristic prior of the observations (env.Prior): with
	// ppo.prior the policy adds it to its logits, and ppo.bc_steps clones it.
	Prior env.Prior  `yaml:"prior"`
	PPO   ppo.Config `yaml:"ppo"`
	// ES, when given, trains with evolution strategies (ppo.TrainES) instead
	// of PPO: the architecture, seed and validation episodes stay ppo's.
	ES   *ppo.ESConfig `yaml:"es" json:",omitempty"`
	Eval Eval          `yaml:"eval"`
	// Mode is what a sweep measures: "evaluate" (the default: metrics per
	// cluster size) or "compaction" (nodes needed per scheduler, see
	// Compaction).
	Mode       string     `yaml:"mode"`
	Compaction Compaction `yaml:"compaction"`

	// Grid holds the keys of the file's grid section, which `kubesim
	// sweep` expands (Expand); the spec itself is the file without it.
	Grid []Axis `yaml:"-" json:"-"`
	// Settings are the grid values of a spec that Expand made.
	Settings []Setting `yaml:"-" json:"-"`

	doc *yaml.Node // the file without its grid, for Expand
	dir string     // the file's folder, which relative paths start from
}

// specFile is the decoding shape of a spec file: the spec and its grid.
type specFile struct {
	Spec `yaml:",inline"`
	Grid yaml.Node `yaml:"grid"`
}

// Trace selects a converted Alibaba trace (see `kubesim convert`).
type Trace struct {
	// Dir holds the Arrow files and manifest written by convert.
	Dir string `yaml:"dir"`
	// LoadFactor scales arrivals (1 replays the trace as it is).
	LoadFactor float64 `yaml:"load_factor"`
	// TrainLoadFactors, when given, are the load factors that training and
	// validation episodes draw from (one per episode, uniformly), so that a
	// policy sees light and heavy pressure; the evaluation tables keep
	// LoadFactor (a grid over trace.load_factor gives them several).
	TrainLoadFactors []float64 `yaml:"train_load_factors" json:",omitempty"`
	// DAG makes batch tasks wait for the tasks they depend on.
	DAG bool `yaml:"dag"`
	// MachineMemMiB is the memory of a machine of normalised memory 100.
	MachineMemMiB int64 `yaml:"machine_mem_mib"`
	// WarmStart says how a window begins (docs/sim.md, "Warm start"):
	// "placement" (the default) starts with the containers that were running
	// at the window's start on the machines the trace ran them on; "warmup"
	// simulates the WarmUpMs of trace before the window under the evaluated
	// scheduler and leaves it out of every metric; "none" starts empty, with
	// the running containers arriving together at the window's start.
	WarmStart string `yaml:"warm_start"`
	// WarmUpMs is the warm-up of warm_start: warmup, in milliseconds of
	// trace time; every window must start at least this late.
	WarmUpMs sim.Time `yaml:"warm_up_ms"`
	// WindowStreams draws the load factor's copies per window
	// (dataset.LoadOptions.WindowStreams): off, one seed replicates the
	// same standing services at the same offsets in every window, so its
	// validation and test windows share most of the pods left pending.
	WindowStreams bool `yaml:"window_streams" json:",omitempty"`
}

// Warm-start modes of Trace.WarmStart.
const (
	WarmPlacement = "placement"
	WarmUp        = "warmup"
	WarmNone      = "none"
)

// WindowSpec names the train, validation and test windows of a trace, in the
// forms that dataset.ResolveWindow accepts ("train-0", "day2", "30h-36h").
// All three empty take the default split (dataset.DefaultWindows); otherwise
// all three must be given. Windows of different splits must not overlap:
// training sees train, checkpoint selection sees validation, and only the
// experiment's tables see test.
type WindowSpec struct {
	Train      []string `yaml:"train"`
	Validation []string `yaml:"validation"`
	Test       []string `yaml:"test"`
}

// Cluster is the environment's cluster and episode settings: the keys of
// env.Config other than the reward.
type Cluster struct {
	MinNodes           int             `yaml:"min_nodes"`
	MaxNodes           int             `yaml:"max_nodes"`
	MaxSteps           int             `yaml:"max_steps"`
	Domain             env.DomainLevel `yaml:"domain"`
	Reference          env.Reference   `yaml:"reference"`
	AutoscaleMinFactor float64         `yaml:"autoscale_min_factor"`
	AutoscaleMaxFactor float64         `yaml:"autoscale_max_factor"`
	Workload           env.Synthetic   `yaml:"workload"`
	// NodeTemplate is the node the autoscaler adds; zero fields take the
	// workload's most common machine shape (on a trace, the trace's
	// machines).
	NodeTemplate env.NodeTemplate `yaml:"node_template"`
	Sim          sim.Config       `yaml:"sim"`
}

// Eval says how a trained policy is compared with the heuristics.
type Eval struct {
	// Nodes are the cluster sizes to evaluate at (sizes never seen in
	// training included).
	Nodes []int `yaml:"nodes"`
	// Schedulers are heuristic names, or "all".
	Schedulers []string `yaml:"schedulers"`
	// Seeds is the number of evaluation seeds. Each seed changes the machine
	// sample, the replication or thinning jitter, the simulator's noise and
	// the random heuristic's draws; every scheduler replays the same
	// workloads of a seed (a paired comparison), and tables give the mean
	// and a 95% interval over seeds.
	Seeds int `yaml:"seeds"`
	// Checkpoint is a trained policy that `kubesim sweep` evaluates beside
	// the heuristics instead of training one (relative to the spec file's
	// folder, like trace.dir).
	Checkpoint string `yaml:"checkpoint"`
	// Train makes `kubesim sweep` train a policy per distinct training
	// configuration and seed when no checkpoint is given (the default);
	// false compares the heuristics only.
	Train bool `yaml:"train"`
}

// DefaultSpec returns the defaults every file starts from.
func DefaultSpec() Spec {
	e := env.DefaultConfig()
	return Spec{
		Name: "default",
		Cluster: Cluster{
			MinNodes: e.MinNodes, MaxNodes: e.MaxNodes, MaxSteps: e.MaxSteps, Domain: e.Domain,
			Reference: e.Reference, AutoscaleMinFactor: e.ScaleMin, AutoscaleMaxFactor: e.ScaleMax,
			Workload: e.Workload, NodeTemplate: e.NodeTemplate, Sim: e.Sim,
		},
		Reward:     e.Reward,
		PPO:        ppo.DefaultConfig(),
		Eval:       Eval{Nodes: []int{10, 40, 100}, Schedulers: []string{"all"}, Seeds: 5, Train: true},
		Mode:       ModeEvaluate,
		Compaction: DefaultCompaction(),
	}
}

// EnvConfig returns the environment configuration the spec describes. With
// warm_start: warmup, the simulator leaves the warm-up out of its metrics.
func (s *Spec) EnvConfig() env.Config {
	c := s.Cluster
	c.Sim.WarmUp = max(c.Sim.WarmUp, s.warmUp())
	return env.Config{
		Reward: s.Reward, MaxSteps: c.MaxSteps, MinNodes: c.MinNodes, MaxNodes: c.MaxNodes,
		Reference: c.Reference, Domain: c.Domain, ScaleMin: c.AutoscaleMinFactor, ScaleMax: c.AutoscaleMaxFactor,
		Workload: c.Workload, NodeTemplate: c.NodeTemplate, Sim: c.Sim, Prior: s.Prior,
	}
}

// Validate checks every section, naming the key at fault.
func (s *Spec) Validate() error {
	ec := s.EnvConfig()
	if err := ec.Validate(); err != nil {
		return err
	}
	if err := s.PPO.Validate(); err != nil {
		return err
	}
	if s.ES != nil {
		if err := s.ES.Validate(); err != nil {
			return err
		}
		if s.PPO.Select != ppo.SelectUnschedulable {
			return fmt.Errorf("ppo.select = %q: an es section searches and selects on the unschedulable count: set it to %s", s.PPO.Select, ppo.SelectUnschedulable)
		}
		if s.PPO.BCSteps > 0 {
			return fmt.Errorf("ppo.bc_steps = %d: an es section does not clone; leave it out", s.PPO.BCSteps)
		}
	}
	if len(s.Prior.Names()) == 0 && (s.PPO.Prior || s.PPO.BCSteps > 0) {
		return fmt.Errorf("prior.heuristic: missing: ppo.prior and ppo.bc_steps need the observations' heuristic prior")
	}
	if s.Prior.Gate() > 0 && s.PPO.BCSteps > 0 {
		return fmt.Errorf("ppo.bc_steps: %d: cloning needs one teacher, prior.heuristic, not a gate over prior.heuristics", s.PPO.BCSteps)
	}
	if s.Trace != nil {
		switch {
		case s.Trace.Dir == "" && s.Suite == nil:
			return fmt.Errorf("trace.dir: missing")
		case s.Trace.Dir != "" && s.Suite != nil:
			return fmt.Errorf("trace.dir: given with a suite section, which makes the traces: leave it out")
		case s.Suite != nil && s.Windows != nil:
			return fmt.Errorf("windows: given with a suite section, which chooses the windows: leave it out")
		case s.Trace.LoadFactor < 0:
			return fmt.Errorf("trace.load_factor = %v: must not be negative", s.Trace.LoadFactor)
		case slices.ContainsFunc(s.Trace.TrainLoadFactors, func(f float64) bool { return !(f > 0) || math.IsInf(f, 0) }):
			return fmt.Errorf("trace.train_load_factors = %v: each must be a positive number", s.Trace.TrainLoadFactors)
		case s.Trace.MachineMemMiB < 0:
			return fmt.Errorf("trace.machine_mem_mib = %v: must not be negative", s.Trace.MachineMemMiB)
		case s.Trace.WarmStart != WarmPlacement && s.Trace.WarmStart != WarmUp && s.Trace.WarmStart != WarmNone:
			return fmt.Errorf("trace.warm_start = %q: want %s, %s or %s", s.Trace.WarmStart, WarmPlacement, WarmUp, WarmNone)
		case s.Trace.WarmUpMs < 0 || s.Trace.WarmStart == WarmUp && s.Trace.WarmUpMs == 0:
			return fmt.Errorf("trace.warm_up_ms = %d: must be positive with warm_start: %s", s.Trace.WarmUpMs, WarmUp)
		case s.Trace.WarmStart != WarmUp && s.Trace.WarmUpMs != 0:
			return fmt.Errorf("trace.warm_up_ms = %d: applies only to warm_start: %s", s.Trace.WarmUpMs, WarmUp)
		}
		if w := s.Windows; w != nil {
			given := []bool{len(w.Train) > 0, len(w.Validation) > 0, len(w.Test) > 0}
			if (given[0] || given[1] || given[2]) && !(given[0] && given[1] && given[2]) {
				return fmt.Errorf("windows: give train, validation and test windows, or none for the default split")
			}
		}
	} else if s.Windows != nil {
		return fmt.Errorf("windows: given without a trace section")
	} else if s.Suite != nil {
		return fmt.Errorf("suite: needs a trace section (without dir) for its load factor and warm start")
	}
	if s.Suite != nil {
		if err := s.Suite.validate(); err != nil {
			return err
		}
		if s.Mode == ModeCompaction {
			return fmt.Errorf("mode: %s does not take a suite", ModeCompaction)
		}
	}
	for _, n := range s.Eval.Nodes {
		if n < 1 {
			return fmt.Errorf("eval.nodes: %d: must be positive", n)
		}
	}
	if s.Eval.Seeds < 1 || s.Eval.Seeds > 1000 {
		return fmt.Errorf("eval.seeds = %d: must be in [1, 1000]", s.Eval.Seeds)
	}
	switch s.Mode {
	case ModeEvaluate:
	case ModeCompaction:
		if s.Cluster.Sim.Autoscaler.Enabled {
			return fmt.Errorf("mode: %s needs a fixed cluster: set cluster.sim.autoscaler.enabled: false", ModeCompaction)
		}
	default:
		return fmt.Errorf("mode = %q: want %s or %s", s.Mode, ModeEvaluate, ModeCompaction)
	}
	if err := s.Compaction.validate(); err != nil {
		return err
	}
	return nil
}

// ReadSpec parses a spec file over the defaults and validates it. A
// relative trace.dir is resolved against the file's folder, so that a spec
// means the same data from any working directory. Errors name the file, and
// for YAML problems the line and key.
func ReadSpec(path string) (*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading spec: %w", err)
	}
	s, err := ParseSpec(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s.resolve(filepath.Dir(path))
	return s, nil
}

// resolve makes the spec's relative paths (trace.dir, eval.checkpoint)
// relative to dir, the spec file's folder.
func (s *Spec) resolve(dir string) {
	s.dir = dir
	if s.Suite != nil && !filepath.IsAbs(s.Suite.Dir) {
		s.Suite.Dir = filepath.Join(dir, s.Suite.Dir)
	}
	if s.Trace != nil && s.Trace.Dir != "" && !filepath.IsAbs(s.Trace.Dir) {
		s.Trace.Dir = filepath.Join(dir, s.Trace.Dir)
	}
	if c := s.Eval.Checkpoint; c != "" && !filepath.IsAbs(c) {
		s.Eval.Checkpoint = filepath.Join(dir, c)
	}
}

// ErrEmptySpec is the error of a spec with no content: an empty file, one of
// comments only, or a null document.
var ErrEmptySpec = errors.New("empty spec: no settings (give at least one section, such as ppo: or eval:)")

// isNullDocument reports whether a decoded document holds nothing.
func isNullDocument(doc *yaml.Node) bool {
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		doc = doc.Content[0]
	}
	return doc.Kind == 0 || doc.Kind == yaml.ScalarNode && doc.Tag == "!!null"
}

// ParseSpec parses YAML over DefaultSpec and validates the result. A grid
// section is checked (every key must name a setting; errors give its line)
// and kept in Grid; the spec without its grid must be valid by itself.
func ParseSpec(data []byte) (*Spec, error) {
	f := specFile{Spec: DefaultSpec()}
	// an empty file (or comments only, or a null document) would train on
	// the built-in defaults without a word: refuse it
	var doc yaml.Node
	err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc)
	if errors.Is(err, io.EOF) || err == nil && isNullDocument(&doc) {
		return nil, ErrEmptySpec
	}
	if err != nil {
		return nil, err
	}
	if err := checkNumbers(&doc, reflect.TypeOf(specFile{}), ""); err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	s := f.Spec
	var more yaml.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("more than one YAML document: a spec is one document")
	}
	if s.Trace != nil && s.Trace.WarmStart == "" {
		s.Trace.WarmStart = WarmPlacement
	}
	if f.Grid.Kind != 0 && !(f.Grid.Kind == yaml.ScalarNode && f.Grid.Tag == "!!null") {
		if s.Grid, err = parseGrid(&f.Grid); err != nil {
			return nil, err
		}
	}
	s.doc = withoutGrid(&doc)
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// withoutGrid returns a copy of the document without its grid key.
func withoutGrid(doc *yaml.Node) *yaml.Node {
	d := cloneNode(doc)
	m := d
	if m.Kind == yaml.DocumentNode && len(m.Content) == 1 {
		m = m.Content[0]
	}
	if m.Kind != yaml.MappingNode {
		return d
	}
	for j := 0; j+1 < len(m.Content); j += 2 {
		if m.Content[j].Value == "grid" {
			m.Content = append(m.Content[:j:j], m.Content[j+2:]...)
			break
		}
	}
	return d
}
