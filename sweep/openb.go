package sweep

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
	"gopkg.in/yaml.v3"

	"github.com/kubesim/kubesim/agent"
	"github.com/kubesim/kubesim/dataset"
	"github.com/kubesim/kubesim/internal/atomicfile"
	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

// ModeOpenb is the mode of an experiment file that reproduces FGD's
// experiment (Weng et al., ATC'23) on the openb traces: every pod list
// under every GPU policy and seed, as the paper's artifact runs it
// (sim.RunGPU), with curves of GPU allocation and fragmentation against
// the arrived workload. Its file has its own keys (OpenbSpec).
const ModeOpenb = "openb"

// OpenbSpec is an experiment file of mode openb. Unknown keys are errors.
type OpenbSpec struct {
	Name string `yaml:"name"`
	Mode string `yaml:"mode"`
	// Dir holds the openb CSV files (relative to the file's folder).
	Dir string `yaml:"dir"`
	// Nodes is the node list's file name in Dir.
	Nodes string `yaml:"nodes"`
	// PodLists names the pod lists: NAME reads Dir/openb_pod_list_NAME.csv.
	PodLists []string `yaml:"pod_lists"`
	// Schedulers are GPU scheduler names (sched.GPUNames).
	Schedulers []string `yaml:"schedulers"`
	// Seeds are the artifact's tuning seeds (42..51 in the paper).
	Seeds []uint64 `yaml:"seeds"`
	// Inflate is the arrived GPU demand as a multiple of capacity (1.3).
	Inflate float64 `yaml:"inflate"`
	// Expected, when set, is the folder of the artifact's expected
	// results (analysis_allo_discrete.csv, analysis_frag_discrete.csv),
	// relative to the file's folder; the summary then compares with it.
	Expected string `yaml:"expected"`
	// Bound adds the row "bound": per pod list and seed, an upper bound on
	// the GPU allocation any placement reaches (sim.GPUBoundCurve) on the
	// run's arrival order, and the summary's Headroom table.
	Bound bool `yaml:"bound,omitempty"`
	// Hindsight adds the row "hindsight": per pod list and seed, at 100%
	// and 130% arrived, a packing of the same arrivals found knowing them
	// all (sched.GPUHindsightCurve), a lower bound on the best placement;
	// with Bound, the summary brackets the best placement between the two.
	// About 5-35 s per cell on the 1,213 GPU nodes.
	Hindsight bool `yaml:"hindsight,omitempty"`
	// Policies are trained GPU policies, each a row after the schedulers
	// (OpenbPolicy), and Reference the heuristic they are paired against
	// in the summary's policy table (default fgd; one of Schedulers).
	Policies  []OpenbPolicy `yaml:"policies,omitempty"`
	Reference string        `yaml:"reference,omitempty"`
	// Paired are schedulers (of Schedulers) that the summary's paired
	// table compares with Reference as it does the policies.
	Paired []string `yaml:"paired,omitempty"`
	// Mix, when set, shifts every cell's pod list toward one pod class
	// (OpenbMix); the cells' cache key includes it.
	Mix *OpenbMix `yaml:"mix,omitempty"`

	dir string // the file's folder
}

// IsOpenbSpec reports whether an experiment file's YAML has mode: openb.
func IsOpenbSpec(data []byte) bool {
	var head struct {
		Mode string `yaml:"mode"`
	}
	return yaml.Unmarshal(data, &head) == nil && head.Mode == ModeOpenb
}

// ReadOpenbSpec reads and validates an experiment file of mode openb.
func ReadOpenbSpec(path string) (*OpenbSpec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading spec: %w", err)
	}
	s, err := ParseOpenbSpec(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s.dir = filepath.Dir(path)
	return s, nil
}

// ParseOpenbSpec parses and validates an openb experiment file; relative
// paths start from the working directory (ReadOpenbSpec: the file's).
func ParseOpenbSpec(data []byte) (*OpenbSpec, error) {
	s := &OpenbSpec{Inflate: 1.3, Nodes: "openb_node_list_gpu_node.csv"}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(s); err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// Validate checks the spec; errors name the key.
func (s *OpenbSpec) Validate() error {
	switch {
	case s.Mode != ModeOpenb:
		return fmt.Errorf("mode = %q: want %s", s.Mode, ModeOpenb)
	case s.Name == "":
		return errors.New("name: empty")
	case s.Dir == "":
		return errors.New("dir: empty, want the folder of the openb CSV files")
	case len(s.PodLists) == 0:
		return errors.New("pod_lists: empty")
	case len(s.Seeds) == 0:
		return errors.New("seeds: empty")
	case s.Inflate < 0 || s.Inflate > 10:
		return fmt.Errorf("inflate = %g: want 0 (none) to 10", s.Inflate)
	}
	if len(s.Schedulers) == 0 {
		s.Schedulers = sched.GPUNames()
	}
	for i, n := range s.Schedulers {
		if _, err := sched.NewGPU(n, 0); err != nil {
			return fmt.Errorf("schedulers[%d]: %w", i, err)
		}
	}
	seen := make(map[string]bool)
	for i, p := range s.PodLists {
		if p == "" || seen[p] || filepath.Base(p) != p {
			return fmt.Errorf("pod_lists[%d] = %q: want a distinct pod list name", i, p)
		}
		seen[p] = true
	}
	if err := s.Mix.validate(); err != nil {
		return err
	}
	return s.validatePolicies()
}

func (s *OpenbSpec) path(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(s.dir, p)
}

// OpenbRun is one run: a pod list, a seed and a scheduler.
type OpenbRun struct {
	PodList string
	Seed    uint64
	sim.GPUResult
}

// OpenbOptions controls RunOpenb.
type OpenbOptions struct {
	Out     string    // output folder
	Jobs    int       // (pod list, seed) cells at once
	Summary io.Writer // where the summary is printed too (nil: nowhere)
	// Progress, when not nil, shows a progress bar over cells.
	Progress io.Writer
	// ReuseCode, when not empty, also accepts cached cells that the code
	// revision ReuseCode computed (Build.Code: the commit hash, with
	// "+" and the executable's hash for a modified tree), so that a change
	// to the tables alone does not run a long sweep again. The runs are
	// that revision's: use it only when nothing between the two revisions
	// changes a run. The summary says how many cells it reused.
	ReuseCode string
}

// OpenbResult is what RunOpenb did.
type OpenbResult struct {
	Runs    []OpenbRun // by pod list, seed, scheduler (the spec's orders), then the policies, then the bound and the hindsight row when the spec asks for them
	Elapsed time.Duration
	// Cached counts the (pod list, seed) cells read from the output
	// folder's cells/ instead of run; Reused those of them that
	// OpenbOptions.ReuseCode computed.
	Cached, Reused int
}

// RunOpenb runs every pod list under every scheduler and seed (each
// (pod list, seed) cell draws its arrival order once and replays it under
// every scheduler) and writes to opts.Out: curves.csv (both curves of every
// run), summary.md (tables at 100% and 130% arrived with 95% intervals
// over seeds, and the artifact's expected results beside them when the
// spec names them), spec.yaml and plots/ (the curves in the style of the
// paper's Fig. 9(a)).
func RunOpenb(ctx context.Context, s *OpenbSpec, opts OpenbOptions) (*OpenbResult, error) {
	start := time.Now()
	ws := make([]*sim.GPUWorkload, len(s.PodLists))
	for i, p := range s.PodLists {
		t, err := dataset.ReadOpenbCSV(filepath.Join(s.path(s.Dir), s.Nodes), filepath.Join(s.path(s.Dir), "openb_pod_list_"+p+".csv"))
		if err != nil {
			return nil, err
		}
		if ws[i], err = t.Workload(); err != nil {
			return nil, err
		}
	}
	var exp *Expected
	if s.Expected != "" {
		var err error
		if exp, err = ReadExpected(s.path(s.Expected)); err != nil {
			return nil, err
		}
	}
	pl, err := planOpenb(s)
	if err != nil {
		return nil, err
	}
	nS, nP, nSeeds := len(s.Schedulers), len(s.Policies), len(s.Seeds)
	stride := nS + nP // runs per cell: the schedulers, the policies, then the bound and the hindsight row
	if s.Bound {
		stride++
	}
	if s.Hindsight {
		stride++
	}
	runs := make([]OpenbRun, len(ws)*nSeeds*stride)
	var bar *progressbar.ProgressBar
	if opts.Progress != nil {
		bar = progressbar.NewOptions(len(ws)*nSeeds, progressbar.OptionSetWriter(opts.Progress),
			progressbar.OptionSetDescription(s.Name+" cells"), progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true), progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionClearOnFinish())
	}
	var cached, reused atomic.Int64
	jobs := max(opts.Jobs, 1)
	err = parallel(ctx, jobs, len(ws)*nSeeds, func(cell int) error {
		w, list, seed := ws[cell/nSeeds], s.PodLists[cell/nSeeds], s.Seeds[cell%nSeeds]
		out := runs[cell*stride : (cell+1)*stride]
		key, path := pl.cellKey(s, list, seed), ""
		if opts.Out != "" {
			path = openbCellPath(opts.Out, list, seed)
			rs, ok := readOpenbCell(path, key, stride)
			if !ok && opts.ReuseCode != "" {
				if rs, ok = readOpenbCell(path, pl.cellKeyAt(s, list, seed, opts.ReuseCode), stride); ok {
					reused.Add(1)
				}
			}
			if ok {
				copy(out, rs)
				cached.Add(1)
				if bar != nil {
					bar.Add(1)
				}
				return nil
			}
		}
		w = s.Mix.apply(w, seed)
		order, rank := sim.GPUArrivals(w, s.Inflate, seed)
		base := sim.NewGPUCluster(w, rank)
		for k, name := range s.Schedulers {
			sc, err := sched.NewGPU(name, seed)
			if err != nil {
				return err
			}
			r, err := sim.RunGPUOrder(w, base, sc, order)
			if err != nil {
				return err
			}
			out[k] = OpenbRun{PodList: list, Seed: seed, GPUResult: r}
		}
		for k, p := range s.Policies {
			if p.Lookahead != nil {
				r, err := runLookahead(ctx, w, base, order, seed, p)
				if err != nil {
					return fmt.Errorf("%s, pod list %s, seed %d: %w", p.Name, list, seed, err)
				}
				out[nS+k] = OpenbRun{PodList: list, Seed: seed, GPUResult: r}
				continue
			}
			// a policy per cell: its row cache is not shared between jobs
			pol, cfg, err := agent.LoadGPU(s.path(p.Checkpoint))
			if err != nil {
				return fmt.Errorf("policies[%d] (%s): %w", k, p.Name, err)
			}
			r, err := agent.EvaluateGPUGuarded(ctx, pol, cfg, w, s.Inflate, seed, p.Name, p.Guard)
			if err != nil {
				return fmt.Errorf("policy %s, pod list %s, seed %d: %w", p.Name, list, seed, err)
			}
			out[nS+k] = OpenbRun{PodList: list, Seed: seed, GPUResult: r}
		}
		if s.Bound {
			b, err := boundRun(w, order)
			if err != nil {
				return fmt.Errorf("pod list %s, seed %d: %w", list, seed, err)
			}
			out[nS+nP] = OpenbRun{PodList: list, Seed: seed, GPUResult: b}
		}
		if s.Hindsight {
			h, err := hindsightRun(w, order)
			if err != nil {
				return fmt.Errorf("pod list %s, seed %d: %w", list, seed, err)
			}
			out[stride-1] = OpenbRun{PodList: list, Seed: seed, GPUResult: h}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if path != "" {
			if err := writeOpenbCell(path, key, out); err != nil {
				return err
			}
		}
		if bar != nil {
			bar.Add(1)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	res := &OpenbResult{Runs: runs, Elapsed: time.Since(start), Cached: int(cached.Load()), Reused: int(reused.Load())}
	if opts.Out == "" {
		return res, nil
	}
	if err := os.MkdirAll(filepath.Join(opts.Out, "plots"), 0o755); err != nil {
		return nil, fmt.Errorf("output folder: %w", err)
	}
	if err := atomicfile.Write(filepath.Join(opts.Out, OpenbCurvesCSV), func(w io.Writer) error { return writeCurvesCSV(w, runs) }); err != nil {
		return nil, err
	}
	spec, err := yaml.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encoding spec: %w", err)
	}
	if err := atomicfile.WriteBytes(filepath.Join(opts.Out, "spec.yaml"), spec); err != nil {
		return nil, err
	}
	sum := OpenbSummary(s, runs, exp)
	if res.Reused > 0 {
		sum += fmt.Sprintf("\nThe runs of %d of the %d cells are code revision %s's, reused (`--reuse-cells`); these tables are revision %s's.\n",
			res.Reused, len(ws)*nSeeds, opts.ReuseCode, CurrentBuild().Code)
	}
	if err := atomicfile.WriteBytes(filepath.Join(opts.Out, "summary.md"), []byte(sum)); err != nil {
		return nil, err
	}
	if opts.Summary != nil {
		io.WriteString(opts.Summary, sum)
	}
	if err := plotOpenb(filepath.Join(opts.Out, "plots"), s, runs, exp); err != nil {
		return nil, err
	}
	return res, nil
}
