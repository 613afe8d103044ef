package sweep

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kubesim/kubesim/agent"
	"github.com/kubesim/kubesim/internal/atomicfile"
	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

// OpenbPolicy is a row of an openb experiment that the summary pairs
// against the reference heuristic: a trained GPU policy, the checkpoint
// (agent.LoadGPU) run greedily on every pod list and seed on the same
// arrivals as the heuristics (agent.EvaluateGPU), or FGD with lookahead
// (sched.GPULookahead), under the row name Name.
type OpenbPolicy struct {
	Name string `yaml:"name"`
	// Checkpoint is the GPU policy's checkpoint, relative to the file's
	// folder.
	Checkpoint string `yaml:"checkpoint"`
	// Lookahead, instead of a checkpoint, makes the row FGD with rollouts
	// (sched.GPULookahead; its seed is the cell's seed).
	Lookahead *OpenbLookahead `yaml:"lookahead,omitempty"`
	// Guard, when set, runs the policy under an evaluation guard
	// (agent.GPUGuards; "pinned": the selection policy's decision wherever
	// model constraints are in play; "cpu": its decision for every CPU-only
	// pod), an ablation row.
	Guard string `yaml:"guard"`
}

// OpenbLookahead is the row of FGD with lookahead (sched.LookaheadOptions):
// samples 0 is the clairvoyant oracle.
type OpenbLookahead struct {
	Horizon    int  `yaml:"horizon"`
	Candidates int  `yaml:"candidates"`
	Samples    int  `yaml:"samples"`
	Refuse     bool `yaml:"refuse"`
}

func (l *OpenbLookahead) options(seed uint64) sched.LookaheadOptions {
	return sched.LookaheadOptions{Horizon: l.Horizon, Candidates: l.Candidates, Samples: l.Samples, Seed: seed, Refuse: l.Refuse}
}

// validatePolicies checks the policies and the reference they are paired
// against; errors name the key.
func (s *OpenbSpec) validatePolicies() error {
	names := map[string]bool{BoundName: true, HindsightName: true}
	for _, n := range s.Schedulers {
		names[n] = true
	}
	for i, p := range s.Policies {
		switch {
		case p.Name == "" || strings.ContainsAny(p.Name, " /\t"):
			return fmt.Errorf("policies[%d].name = %q: want a row name without spaces or slashes", i, p.Name)
		case names[p.Name]:
			return fmt.Errorf("policies[%d].name = %q: already a row (a scheduler, the bound, hindsight or another policy)", i, p.Name)
		case p.Lookahead != nil && (p.Checkpoint != "" || p.Guard != ""):
			return fmt.Errorf("policies[%d]: lookahead with a checkpoint or a guard: a row is one or the other", i)
		case p.Lookahead != nil:
			if _, err := sched.NewGPULookahead(nil, nil, p.Lookahead.options(0)); err != nil {
				return fmt.Errorf("policies[%d].lookahead: %w", i, err)
			}
		case p.Checkpoint == "":
			return fmt.Errorf("policies[%d].checkpoint: empty (or lookahead)", i)
		case !slices.Contains(agent.GPUGuards, p.Guard):
			return fmt.Errorf("policies[%d].guard = %q: want one of %q", i, p.Guard, agent.GPUGuards)
		}
		names[p.Name] = true
	}
	if len(s.Policies) == 0 && len(s.Paired) == 0 {
		return nil
	}
	if s.Reference == "" {
		s.Reference = "fgd"
	}
	if !slices.Contains(s.Schedulers, s.Reference) {
		return fmt.Errorf("reference = %q: not among schedulers %v (the heuristic each policy is paired against)", s.Reference, s.Schedulers)
	}
	for i, n := range s.Paired {
		if !slices.Contains(s.Schedulers, n) || n == s.Reference {
			return fmt.Errorf("paired[%d] = %q: want one of the schedulers %v other than the reference %s", i, n, s.Schedulers, s.Reference)
		}
	}
	return nil
}

// openbCellKey is everything that determines an openb cell's runs: the
// code, the trace files' contents, the pod list and seed, the rows and
// the policies' checkpoint contents.
type openbCellKey struct {
	Code       string
	Nodes      string // SHA-256 of the node list file
	PodList    string // SHA-256 of the pod list file
	Seed       uint64
	Inflate    float64
	Schedulers []string
	Policies   []string // name=SHA-256 of the checkpoint
	Bound      bool
	Hindsight  bool      `json:",omitempty"`
	Mix        *OpenbMix `json:",omitempty"`
}

// openbCell is a cached cell: its key's hash and its runs.
type openbCell struct {
	Key  string    `json:"key"`
	Runs []cellRun `json:"runs"`
}

// openbPlan holds what the cells' keys share: the trace files' and the
// checkpoints' hashes, computed once.
type openbPlan struct {
	nodes    string
	podLists map[string]string
	policies []string
}

// planOpenb hashes the spec's files and checks that every policy's
// checkpoint loads as a GPU policy.
func planOpenb(s *OpenbSpec) (*openbPlan, error) {
	pl := &openbPlan{podLists: map[string]string{}}
	var err error
	if pl.nodes, err = fileHash(filepath.Join(s.path(s.Dir), s.Nodes)); err != nil {
		return nil, fmt.Errorf("node list: %w", err)
	}
	for _, p := range s.PodLists {
		if pl.podLists[p], err = fileHash(filepath.Join(s.path(s.Dir), "openb_pod_list_"+p+".csv")); err != nil {
			return nil, fmt.Errorf("pod list %s: %w", p, err)
		}
	}
	for i, p := range s.Policies {
		if l := p.Lookahead; l != nil {
			key := fmt.Sprintf("%s=lookahead:%d,%d,%d", p.Name, l.Horizon, l.Candidates, l.Samples)
			if l.Refuse {
				key += ",refuse"
			}
			pl.policies = append(pl.policies, key)
			continue
		}
		path := s.path(p.Checkpoint)
		if _, _, err := agent.LoadGPU(path); err != nil {
			return nil, fmt.Errorf("policies[%d] (%s): %w", i, p.Name, err)
		}
		h, err := fileHash(path)
		if err != nil {
			return nil, fmt.Errorf("policies[%d] (%s): %w", i, p.Name, err)
		}
		key := p.Name + "=" + h
		if p.Guard != "" {
			key += "+guard=" + p.Guard
		}
		pl.policies = append(pl.policies, key)
	}
	return pl, nil
}

// cellKey is the hash a cell's runs are cached under.
func (pl *openbPlan) cellKey(s *OpenbSpec, podList string, seed uint64) string {
	return pl.cellKeyAt(s, podList, seed, CurrentBuild().Code)
}

// cellKeyAt is cellKey as the code revision code would compute it.
func (pl *openbPlan) cellKeyAt(s *OpenbSpec, podList string, seed uint64, code string) string {
	k := openbCellKey{Code: code, Nodes: pl.nodes, PodList: pl.podLists[podList], Seed: seed,
		Inflate: s.Inflate, Schedulers: s.Schedulers, Policies: pl.policies, Bound: s.Bound, Hindsight: s.Hindsight, Mix: s.Mix}
	b, _ := json.Marshal(k) // plain fields: cannot fail
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:16])
}

// cellPath is where a cell's runs are cached in the output folder.
func openbCellPath(out, podList string, seed uint64) string {
	return filepath.Join(out, "cells", fmt.Sprintf("%s-%d.json", podList, seed))
}

// readOpenbCell returns a cached cell's runs when the file exists and has
// key; a missing file, another key or a corrupt file reads as not cached
// (the cell runs again and its file is replaced).
func readOpenbCell(path, key string, want int) ([]OpenbRun, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	var c openbCell
	if json.Unmarshal(b, &c) != nil || c.Key != key || len(c.Runs) != want {
		return nil, false
	}
	runs := make([]OpenbRun, len(c.Runs))
	for i, r := range c.Runs {
		runs[i] = r.run()
	}
	return runs, true
}

// writeOpenbCell writes a cell's runs atomically.
func writeOpenbCell(path, key string, runs []OpenbRun) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("cells folder: %w", err)
	}
	c := openbCell{Key: key}
	for _, r := range runs {
		c.Runs = append(c.Runs, toCellRun(r))
	}
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("encoding cell %s: %w", filepath.Base(path), err)
	}
	return atomicfile.WriteBytes(path, b)
}

// cellRun is a run as a cell file keeps it: every float at full
// precision (sim.Curve's JSON rounds to 4 decimals), NaN as null.
type cellRun struct {
	PodList    string     `json:"pod_list"`
	Seed       uint64     `json:"seed"`
	Scheduler  string     `json:"scheduler"`
	Pods       int        `json:"pods"`
	Placed     int        `json:"placed"`
	Failed     int        `json:"failed"`
	GPUs       int64      `json:"gpus"`
	ArrivedPct *float64   `json:"arrived_pct"`
	AllocPct   *float64   `json:"alloc_pct"`
	Alloc      []*float64 `json:"gpu_alloc_curve"`
	Frag       []*float64 `json:"gpu_frag_curve"`
}

func nullable(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func orNaN(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func toCellRun(r OpenbRun) cellRun {
	c := cellRun{PodList: r.PodList, Seed: r.Seed, Scheduler: r.Scheduler, Pods: r.Pods, Placed: r.Placed, Failed: r.Failed,
		GPUs: r.GPUs, ArrivedPct: nullable(r.ArrivedPct), AllocPct: nullable(r.AllocPct)}
	for _, v := range r.AllocCurve {
		c.Alloc = append(c.Alloc, nullable(v))
	}
	for _, v := range r.FragCurve {
		c.Frag = append(c.Frag, nullable(v))
	}
	return c
}

func (c cellRun) run() OpenbRun {
	r := OpenbRun{PodList: c.PodList, Seed: c.Seed, GPUResult: sim.GPUResult{Scheduler: c.Scheduler, Pods: c.Pods, Placed: c.Placed,
		Failed: c.Failed, GPUs: c.GPUs, ArrivedPct: orNaN(c.ArrivedPct), AllocPct: orNaN(c.AllocPct)}}
	if c.Alloc != nil {
		r.AllocCurve = make(sim.Curve, len(c.Alloc))
		for i, p := range c.Alloc {
			r.AllocCurve[i] = orNaN(p)
		}
	}
	if c.Frag != nil {
		r.FragCurve = make(sim.Curve, len(c.Frag))
		for i, p := range c.Frag {
			r.FragCurve[i] = orNaN(p)
		}
	}
	return r
}

// gpuDiff prints a paired difference in points of GPU capacity, bold when
// its interval excludes 0.
func gpuDiff(iv Interval) string {
	if math.IsNaN(iv.Mean) {
		return "n/a"
	}
	t := fmt.Sprintf("%+.2f", iv.Mean)
	if !math.IsNaN(iv.Half) {
		t += fmt.Sprintf(" ± %.2f", iv.Half)
	}
	if iv.Excludes0() {
		t = "**" + t + "**"
	}
	return t
}

// fewer is the change in unallocated GPUs: d points more allocation over
// the reference's unallocated 100 - ref, in percent.
func fewer(d, ref float64) string {
	if math.IsNaN(d) || math.IsNaN(ref) || ref >= 100 {
		return "n/a"
	}
	return fmt.Sprintf("%+.1f%%", 100*d/(100-ref))
}

// runLookahead is a lookahead row's run of one cell.
// A run takes minutes at the whole cluster: ctx is checked every 256 pods.
func runLookahead(ctx context.Context, w *sim.GPUWorkload, base *sim.GPUCluster, order []int32, seed uint64, p OpenbPolicy) (sim.GPUResult, error) {
	l, err := sched.NewGPULookahead(w, order, p.Lookahead.options(seed))
	if err != nil {
		return sim.GPUResult{}, err
	}
	c := *base
	c.Nodes = slices.Clone(base.Nodes)
	st, err := sim.NewGPUStep(w, &c, p.Name, order)
	if err != nil {
		return sim.GPUResult{}, err
	}
	for i := 0; !st.Done(); i++ {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return sim.GPUResult{}, err
			}
		}
		k, pod := st.Pod()
		n, m := l.Schedule(&c, k, pod)
		if err := st.Decide(n, m); err != nil {
			return sim.GPUResult{}, err
		}
	}
	return st.Result(), l.Err()
}
