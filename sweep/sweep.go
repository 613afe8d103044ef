package sweep

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/kubesim/kubesim/dataset"
	"github.com/kubesim/kubesim/ppo"
)

// Files and folders of a sweep's output folder.
const (
	CellsCSV    = "cells.csv"
	SummaryFile = "summary.md"
	SpecFile    = "spec.yaml"
	PlanFile    = "plan.json"
	cellsDir    = "cells" // one JSON file of rows per finished evaluation cell
	trainDir    = "train" // one run folder per training cell
	doneFile    = "done.json"
)

// SweepOptions are the choices of a sweep run that are not in its spec.
type SweepOptions struct {
	// Out is the output folder (results/NAME).
	Out string
	// Jobs is the number of cells run at once (default: the cores).
	Jobs int
	// Shard and Shards select the part of the sweep to run: the cells
	// whose unit (a training cell with its evaluations, or an evaluation
	// cell without training) has index Shard modulo Shards. Shards 0 or 1
	// runs everything. A shard writes its cells and plan but no tables:
	// Merge makes them.
	Shard, Shards int
	// Progress, when not nil, shows a progress bar over cells.
	Progress io.Writer
	// Summary, when not nil, gets the summary tables (unsharded runs).
	Summary io.Writer
	// CellDone, when not nil, is called after each cell that ran (training
	// or evaluation) has been stored, from the worker goroutines.
	CellDone func(label string)
}

// Outcome is what a sweep did.
type Outcome struct {
	Plan *Plan
	// Trained and Evaluated count the cells run; Cached those found done.
	Trained, Evaluated, Cached int
}

// planFile is the plan a sweep writes beside its cells: enough for Merge
// to write the tables of shards without the spec.
type planFile struct {
	Name   string      `json:"name"`
	Keys   []string    `json:"grid_keys"`
	Points []planPoint `json:"points"`
	Cells  []planCell  `json:"cells"`
	Train  []planTrain `json:"train,omitempty"`
}

type planTrain struct {
	Hash  string `json:"hash"`
	Label string `json:"label"` // the grid point's training settings
}

type planPoint struct {
	Settings []Setting `json:"settings"`
	MinNodes int       `json:"min_nodes"`
	MaxNodes int       `json:"max_nodes"`
	// Compaction is set in mode: compaction.
	Compaction *Compaction `json:"compaction,omitempty"`
	// Grace: the point's simulator runs a grace period after each window,
	// so its tables get the AfterGrace column.
	Grace bool `json:"grace,omitempty"`
}

type planCell struct {
	Hash     string `json:"hash"`
	Point    int    `json:"point"`
	Nodes    int    `json:"nodes"`
	Seed     uint64 `json:"seed"`
	Workload string `json:"workload"`
}

func (p *Plan) file() *planFile {
	f := &planFile{Name: p.Spec.Name}
	for _, a := range p.Spec.Grid {
		f.Keys = append(f.Keys, a.Key)
	}
	for _, s := range p.Points {
		pp := planPoint{Settings: s.Settings, MinNodes: s.Cluster.MinNodes, MaxNodes: s.Cluster.MaxNodes, Grace: s.Cluster.Sim.Grace > 0}
		if s.Mode == ModeCompaction {
			c := s.Compaction
			pp.Compaction = &c
		}
		f.Points = append(f.Points, pp)
	}
	for _, t := range p.Train {
		var ss []Setting
		for _, st := range t.Spec.Settings {
			if !strings.HasPrefix(st.Key, "eval.") {
				ss = append(ss, st)
			}
		}
		f.Train = append(f.Train, planTrain{Hash: t.Hash, Label: Point(ss)})
	}
	for _, c := range p.Eval {
		f.Cells = append(f.Cells, planCell{Hash: c.Hash, Point: c.Point, Nodes: c.Case.Nodes, Seed: c.Case.Seed, Workload: c.Case.Workload})
	}
	return f
}

// Sweep runs a spec's grid: it trains once per training cell, then replays
// every evaluation cell under every heuristic and the cell's learned
// policy, on opts.Jobs workers. Each finished cell is stored in opts.Out
// under its content hash, so an interrupted sweep resumes and a repeated
// one runs nothing. An unsharded sweep then writes cells.csv, summary.md
// and spec.yaml (each atomically).
func Sweep(ctx context.Context, spec *Spec, opts SweepOptions) (*Outcome, error) {
	if opts.Out == "" {
		return nil, fmt.Errorf("sweep: no output folder")
	}
	if opts.Shards < 1 {
		opts.Shards = 1
	}
	if opts.Shard < 0 || opts.Shard >= opts.Shards {
		return nil, fmt.Errorf("sweep: shard %d of %d", opts.Shard, opts.Shards)
	}
	if opts.Jobs < 1 {
		opts.Jobs = runtime.NumCPU()
	}
	if err := spec.EnsureData(ctx); err != nil {
		return nil, err
	}
	plan, err := NewPlan(spec, CurrentBuild())
	if err != nil {
		return nil, err
	}
	for _, s := range plan.Points {
		if s.Suite != nil {
			if err := checkSuiteMemory(s); err != nil {
				return nil, err
			}
			continue
		}
		var test []dataset.Window
		if s.Trace != nil {
			ws, err := s.ResolveWindows()
			if err != nil {
				return nil, err
			}
			test = ws.Test
		}
		if err := checkMemory(s, test); err != nil {
			return nil, err
		}
	}
	for _, d := range []string{cellsDir, trainDir} {
		if err := os.MkdirAll(filepath.Join(opts.Out, d), 0o755); err != nil {
			return nil, fmt.Errorf("sweep output: %w", err)
		}
	}
	if err := writeJSON(filepath.Join(opts.Out, PlanFile), plan.file()); err != nil {
		return nil, err
	}
	if err := plan.writeSpec(filepath.Join(opts.Out, SpecFile)); err != nil {
		return nil, err
	}

	// this shard's cells, each hash once, and the training cells they need
	trainIdx := map[*TrainCell]int{}
	for i, t := range plan.Train {
		trainIdx[t] = i
	}
	var evals []*EvalCell
	seen := map[string]bool{}
	var needTrain []*TrainCell
	unit := 0
	for _, c := range plan.Eval {
		if seen[c.Hash] {
			continue
		}
		seen[c.Hash] = true
		u := unit
		unit++
		if c.Train != nil {
			u = trainIdx[c.Train]
		}
		if u%opts.Shards != opts.Shard {
			continue
		}
		evals = append(evals, c)
		if c.Train != nil && !slices.Contains(needTrain, c.Train) {
			needTrain = append(needTrain, c.Train)
		}
	}
	out := &Outcome{Plan: plan}
	var todoTrain []*TrainCell
	for _, t := range needTrain {
		if exists(filepath.Join(opts.Out, trainDir, t.Hash, doneFile)) {
			out.Cached++
		} else {
			todoTrain = append(todoTrain, t)
		}
	}
	var todoEval []*EvalCell
	for _, c := range evals {
		if cellOK(cellPath(opts.Out, c.Hash), c) {
			out.Cached++
		} else {
			todoEval = append(todoEval, c)
		}
	}

	var bar *progressbar.ProgressBar
	if opts.Progress != nil && len(todoTrain)+len(todoEval) > 0 {
		bar = progressbar.NewOptions(len(todoTrain)+len(todoEval),
			progressbar.OptionSetWriter(opts.Progress),
			progressbar.OptionSetDescription("cells"),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionClearOnFinish())
	}
	var mu sync.Mutex
	step := func(desc string, finished bool) {
		if bar == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		bar.Describe(desc)
		if finished {
			_ = bar.Add(1)
		}
	}
	err = parallel(ctx, opts.Jobs, len(todoTrain), func(i int) error {
		t := todoTrain[i]
		step("training "+trainLabel(t), false)
		if err := train(ctx, t, filepath.Join(opts.Out, trainDir, t.Hash)); err != nil {
			return err
		}
		step("trained "+trainLabel(t), true)
		if opts.CellDone != nil {
			opts.CellDone("trained " + trainLabel(t))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out.Trained = len(todoTrain)
	err = parallel(ctx, opts.Jobs, len(todoEval), func(i int) error {
		c := todoEval[i]
		label := cellLabel(plan, c)
		step(label, false)
		ckpt := c.Checkpoint
		if c.Train != nil {
			ckpt = policyOf(filepath.Join(opts.Out, trainDir, c.Train.Hash))
		}
		scheds, err := Schedulers(plan.Points[c.Point], ckpt)
		if err != nil {
			return err
		}
		var rows []Row
		if pt := plan.Points[c.Point]; pt.Mode == ModeCompaction {
			rows, err = compactCase(ctx, c.Case, scheds, pt.Compaction)
		} else {
			rows, err = replayCase(ctx, c.Case, scheds, true, nil)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", label, err)
		}
		for i := range rows {
			rows[i].Result.Samples = nil
			rows[i].Cell = c.Hash
		}
		if err := writeJSON(cellPath(opts.Out, c.Hash), rows); err != nil {
			return err
		}
		step(label, true)
		if opts.CellDone != nil {
			opts.CellDone(label)
		}
		return nil
	})
	if bar != nil {
		_ = bar.Finish()
	}
	if err != nil {
		return nil, err
	}
	out.Evaluated = len(todoEval)
	if opts.Shards > 1 {
		return out, nil
	}
	return out, writeTables(opts.Out, plan.file(), []string{opts.Out}, opts.Summary)
}

// train runs a training cell into dir, replacing a run that an interrupted
// sweep left there, and marks it done.
func train(ctx context.Context, t *TrainCell, dir string) error {
	s := t.Spec
	src, val, err := s.Sources()
	if err != nil {
		return err
	}
	var sum ppo.Summary
	if s.ES != nil {
		sum, err = ppo.TrainES(ctx, *s.ES, s.PPO, s.EnvConfig(), src, val, ppo.Options{Out: dir, Force: true})
	} else {
		var tr *ppo.Trainer
		if tr, err = ppo.New(s.PPO, s.EnvConfig(), src, val, ppo.Options{Out: dir, Force: true}); err != nil {
			return fmt.Errorf("training cell %s: %w", t.Hash, err)
		}
		sum, err = tr.Train(ctx)
	}
	if err != nil {
		return fmt.Errorf("training cell %s: %w", t.Hash, err)
	}
	if sum.Interrupted {
		if err := ctx.Err(); err != nil {
			return err
		}
		return fmt.Errorf("training cell %s: interrupted", t.Hash)
	}
	return writeJSON(filepath.Join(dir, doneFile), map[string]any{"steps": sum.Steps, "updates": sum.Updates,
		"best_eval_reward": fmt.Sprint(sum.BestEvalScore), "grid_point": Point(s.Settings)})
}

// policyOf is a finished run's policy: best.ckpt, or last.ckpt when no
// validation ran.
func policyOf(dir string) string {
	if p := filepath.Join(dir, ppo.BestCheckpoint); exists(p) {
		return p
	}
	return filepath.Join(dir, ppo.LastCheckpoint)
}

func trainLabel(t *TrainCell) string {
	if l := Point(t.Spec.Settings); l != "" {
		return l
	}
	return t.Hash[:8]
}

func cellLabel(p *Plan, c *EvalCell) string {
	l := fmt.Sprintf("%s %d nodes seed %d", c.Case.Workload, c.Case.Nodes, c.Case.Seed)
	if pt := Point(p.Points[c.Point].Settings); pt != "" {
		l = pt + ": " + l
	}
	return l
}

// cellOK reports whether a cell's file holds rows; a missing, truncated or
// corrupt one (a crash can leave one) means the cell runs again.
func cellOK(p string, c *EvalCell) bool {
	if !exists(p) {
		return false
	}
	var rows []Row
	if err := readJSON(p, &rows); err != nil || len(rows) == 0 {
		slog.Warn("sweep: running a cell again: its stored result is unreadable", "file", p, "err", err)
		return false
	}
	if err := checkCellRows(rows, c.Hash, c.Case.Nodes, c.Case.Seed, c.Case.Workload); err != nil {
		slog.Warn("sweep: running a cell again: its stored result is another cell's", "file", p, "err", err)
		return false
	}
	return true
}

func cellPath(out, hash string) string { return filepath.Join(out, cellsDir, hash+".json") }

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
