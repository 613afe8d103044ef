package sweep

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/kubesim/kubesim/dataset"
	"github.com/kubesim/kubesim/ppo"
)

// TrainCell is one training run of a sweep: a distinct training
// configuration (trace, training and validation windows, cluster, reward,
// PPO hyper-parameters with their seed). Grid points that differ only in
// evaluation settings share it.
type TrainCell struct {
	Hash string
	// Spec is the first grid point that trains with this configuration.
	Spec *Spec
}

// EvalCell is one evaluation workload of a grid point (cluster size,
// evaluation seed, test window, and the point's load and cluster settings),
// replayed by every heuristic and the point's learned policy.
type EvalCell struct {
	Hash string
	// Point indexes Plan.Points.
	Point int
	Case  Case
	// Train is the training cell whose policy the cell evaluates; nil with
	// a checkpoint or without a learned policy.
	Train *TrainCell
	// Checkpoint is the policy evaluated when Train is nil ("" for none).
	Checkpoint string
}

// Plan is an expanded sweep: its grid points, the training runs they need
// and their evaluation cells, each with the content hash it is cached
// under.
type Plan struct {
	Spec   *Spec
	Points []*Spec
	Train  []*TrainCell
	Eval   []*EvalCell
	Build  Build
	// Manifests maps each trace folder to the SHA-256 of its manifest (which
	// holds every table's checksum).
	Manifests map[string]string
}

// trainKey is everything that determines a training run.
type trainKey struct {
	Trace     *Trace
	Train     []dataset.Window
	Val       []dataset.Window
	Cluster   Cluster
	Reward    any
	Prior     any
	PPO       any
	Manifest  string
	Code      string
	Synthetic bool
	Suite     *suiteKey `json:",omitempty"`
	ES        any       `json:",omitempty"`
}

// evalKey is everything that determines an evaluation cell's rows.
type evalKey struct {
	Trace      *Trace
	Window     string
	Cluster    Cluster
	Schedulers []string
	Nodes      int
	Seed       uint64
	Workload   string
	Policy     string // training cell hash, checkpoint hash, or ""
	Regime     string `json:",omitempty"` // a suite window's regime
	Manifest   string
	Code       string
	Compaction *Compaction `json:",omitempty"` // mode: compaction's settings; nil when evaluating
}

// hashOf is the hex SHA-256 of v's JSON form.
func hashOf(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("hashing cell: %w", err)
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:16]), nil
}

// fileHash is the hex SHA-256 of a file's content.
func fileHash(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// NewPlan expands a spec into its cells. Evaluation seeds start at 1, as
// `kubesim experiment`'s do. Cells with the same hash (grid points that
// differ only in a setting the cell does not depend on) are listed once per
// point but run once.
func NewPlan(spec *Spec, b Build) (*Plan, error) {
	p := &Plan{Spec: spec, Build: b, Manifests: map[string]string{}}
	trains := map[string]*TrainCell{}
	ckpts := map[string]string{}
	cells := 0
	// the cells are counted as the points expand, before they are made: a
	// grid of 65,536 points with eval.seeds: 1000 stops after a hundred
	count := func(label string, n int) error {
		if cells += n; cells > maxCells {
			return fmt.Errorf("%s%w: %d so far (grid points x eval.nodes x eval.seeds x test windows), at most %d", label, ErrTooManyCells, cells, maxCells)
		}
		return nil
	}
	err := spec.eachPoint(func(s *Spec) error {
		pi := len(p.Points)
		p.Points = append(p.Points, s)
		var err error
		label := Point(s.Settings)
		if label != "" {
			label = "grid point " + label + ": "
		}
		manifest := ""
		var test []dataset.Window
		var ws dataset.Windows
		tr := (*Trace)(nil)
		var suite []SuiteWindow
		var skey *suiteKey
		switch {
		case s.Suite != nil:
			k := s.Suite.key()
			skey = &k
			if suite, err = s.Suite.EvalWindows(s.Suite.Evaluate); err != nil {
				return fmt.Errorf("%s%w", label, err)
			}
			// training reads the train and validation traces: their
			// manifests name the data of a training cell
			var hs []string
			for _, split := range []string{SplitTrain, SplitValidation} {
				for _, seed := range s.Suite.Seeds(split) {
					h, err := p.manifest(s.Suite.TraceDir(seed))
					if err != nil {
						return fmt.Errorf("%s%w", label, err)
					}
					hs = append(hs, h)
				}
			}
			if manifest, err = hashOf(hs); err != nil {
				return err
			}
			t := *s.Trace
			tr = &t
		case s.Trace != nil:
			if manifest, err = p.manifest(s.Trace.Dir); err != nil {
				return fmt.Errorf("%s%w", label, err)
			}
			if ws, err = s.ResolveWindows(); err != nil {
				return fmt.Errorf("%s%w", label, err)
			}
			test = ws.Test
			t := *s.Trace
			t.Dir = "" // the data is named by its manifest, wherever it lies
			tr = &t
		}
		if _, err := Schedulers(s, ""); err != nil {
			return fmt.Errorf("%s%w", label, err)
		}
		var cell *TrainCell
		policy, ckpt := "", s.Eval.Checkpoint
		switch {
		case ckpt != "":
			if _, ok := ckpts[ckpt]; !ok {
				h, err := fileHash(ckpt)
				if err != nil {
					return fmt.Errorf("%seval.checkpoint: %w", label, err)
				}
				ckpts[ckpt] = h
			}
			policy = "checkpoint " + ckpts[ckpt]
		case s.Eval.Train:
			ttr := tr
			if tr != nil && len(tr.TrainLoadFactors) > 0 {
				// training draws from train_load_factors: points that differ
				// only in the evaluation's load share a training run
				t := *tr
				t.LoadFactor = 0
				ttr = &t
			}
			h, err := hashOf(trainKey{Trace: ttr, Train: ws.Train, Val: ws.Val, Cluster: s.Cluster, Reward: s.Reward, Prior: s.Prior,
				PPO: s.PPO, Manifest: manifest, Code: b.Code, Synthetic: s.Trace == nil, Suite: skey, ES: esKey(s.ES)})
			if err != nil {
				return err
			}
			if cell = trains[h]; cell == nil {
				cell = &TrainCell{Hash: h, Spec: s}
				trains[h] = cell
				p.Train = append(p.Train, cell)
			}
			policy = "train " + h
		}
		var cases []Case
		if s.Suite != nil {
			if cases = SuiteCases(s, suite, 1); len(cases) == 0 {
				return fmt.Errorf("%seval.nodes %v: every size is larger than the suite's traces of split %s, so nothing is evaluated", label, s.Eval.Nodes, s.Suite.Evaluate)
			}
			if err := count(label, len(cases)); err != nil {
				return err
			}
		} else {
			if err := count(label, len(s.Eval.Nodes)*s.Eval.Seeds*max(1, len(test))); err != nil {
				return err
			}
			if cases, err = Cases(s, test, 1); err != nil {
				return fmt.Errorf("%s%w", label, err)
			}
		}
		var comp *Compaction
		if s.Mode == ModeCompaction {
			comp = &s.Compaction
		}
		for _, c := range cases {
			win := ""
			for _, w := range test {
				if w.Name == c.Workload {
					win = extend(w, s.warmUp()).String()
				}
			}
			cm := manifest
			if s.Suite != nil {
				win = extend(c.window, s.warmUp()).String()
				if cm, err = p.manifest(c.dir); err != nil {
					return fmt.Errorf("%s%w", label, err)
				}
			}
			h, err := hashOf(evalKey{Trace: tr, Window: win, Cluster: s.Cluster, Schedulers: s.Eval.Schedulers,
				Nodes: c.Nodes, Seed: c.Seed, Workload: c.Workload, Policy: policy, Manifest: cm, Code: b.Code, Compaction: comp, Regime: c.Regime})
			if err != nil {
				return err
			}
			p.Eval = append(p.Eval, &EvalCell{Hash: h, Point: pi, Case: c, Train: cell, Checkpoint: ckpt})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// maxCells bounds a sweep's evaluation cells (the largest shipped sweep has
// 1,200): a plan is built in memory before anything runs.
const maxCells = 100_000

// ErrTooManyCells is returned (wrapped) by NewPlan for a sweep of more than
// maxCells evaluation cells.
var ErrTooManyCells = errors.New("too many evaluation cells")

// manifest returns the SHA-256 of dir's manifest, read once per plan.
func (p *Plan) manifest(dir string) (string, error) {
	if h, ok := p.Manifests[dir]; ok {
		return h, nil
	}
	h, err := fileHash(filepath.Join(dir, dataset.ManifestFile))
	if err != nil {
		return "", fmt.Errorf("reading manifest: %w", err)
	}
	p.Manifests[dir] = h
	return h, nil
}

// checkCellRows reports whether rows, read from the file of the cell hash
// that replays (nodes, seed, workload), are that cell's: each row names the
// cell (Row.Cell; files written before it existed have none) and its case.
// A file copied or renamed under another cell's hash would otherwise be
// taken as that cell's result (cells.csv lost one cell's rows and doubled
// another's).
func checkCellRows(rows []Row, hash string, nodes int, seed uint64, workload string) error {
	if len(rows) == 0 {
		return fmt.Errorf("no rows")
	}
	for i, r := range rows {
		switch {
		case r.Cell != "" && r.Cell != hash:
			return fmt.Errorf("row %d is cell %s's", i, r.Cell)
		case r.Nodes != nodes || r.Seed != seed || r.Workload != workload:
			return fmt.Errorf("row %d replays %s on %d nodes, seed %d; the cell is %s on %d nodes, seed %d",
				i, r.Workload, r.Nodes, r.Seed, workload, nodes, seed)
		case r.Result == nil:
			return fmt.Errorf("row %d has no result", i)
		}
	}
	return nil
}

// esKey is an es section's part of a training cell's key: nil (left out
// of the hash, as before es existed) for a PPO run. Workers are left out
// too: results do not depend on them.
func esKey(es *ppo.ESConfig) any {
	if es == nil {
		return nil
	}
	k := *es
	k.Workers = 0
	return k
}
