package sweep

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/kubesim/kubesim/agent"
	"github.com/kubesim/kubesim/dataset"
	"github.com/kubesim/kubesim/internal/atomicfile"
	"github.com/kubesim/kubesim/internal/memlimit"
	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

// Options are the choices of an experiment run that are not in its spec.
type Options struct {
	// Checkpoint is a trained policy to evaluate beside the heuristics, as
	// the row "ppo"; empty evaluates the heuristics only.
	Checkpoint string
	// Seed is the first evaluation seed: the experiment uses Seed, Seed+1,
	// ..., Seed+eval.seeds-1.
	Seed uint64
	// Progress, when not nil, shows a progress bar over replays.
	Progress io.Writer
}

// Report is the outcome of an experiment: every replay, and the summary
// tables per cluster size.
type Report struct {
	Spec   *Spec
	Rows   []Row
	Tables []SizeSummary
}

// Run evaluates the spec's schedulers on its held-out workloads: every
// test window (or synthetic workload) at every size of eval.nodes under
// every seed, each replayed by every scheduler, and summarises them.
func Run(ctx context.Context, spec *Spec, opts Options) (*Report, error) {
	if len(spec.Grid) > 0 {
		return nil, fmt.Errorf("the spec has a grid: run it with kubesim sweep")
	}
	scheds, err := Schedulers(spec, opts.Checkpoint)
	if err != nil {
		return nil, err
	}
	var test []dataset.Window
	if spec.Trace != nil {
		ws, err := spec.ResolveWindows()
		if err != nil {
			return nil, err
		}
		test = ws.Test
	}
	if err := checkMemory(spec, test); err != nil {
		return nil, err
	}
	cases, err := Cases(spec, test, opts.Seed)
	if err != nil {
		return nil, err
	}
	var bar *progressbar.ProgressBar
	if opts.Progress != nil {
		bar = progressbar.NewOptions(len(cases)*len(scheds),
			progressbar.OptionSetWriter(opts.Progress),
			progressbar.OptionSetDescription("replays"),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionClearOnFinish())
	}
	var mu sync.Mutex
	rows, err := ReplayProgress(ctx, cases, scheds, func(r Row) {
		r.Result.Samples = nil // the time series is not reported: keep memory flat
		if bar != nil {
			mu.Lock()
			bar.Describe(fmt.Sprintf("%s %d nodes seed %d", r.Result.Scheduler, r.Nodes, r.Seed))
			_ = bar.Add(1)
			mu.Unlock()
		}
	})
	if bar != nil {
		_ = bar.Finish()
	}
	if err != nil {
		return nil, err
	}
	return &Report{Spec: spec, Rows: rows, Tables: Summarise(rows, Focused)}, nil
}

// checkMemory refuses, before anything is loaded, an experiment whose
// largest concurrent replays would not fit in this machine's memory
// (internal/memlimit's estimates; the error wraps memlimit.ErrTooBig).
func checkMemory(spec *Spec, test []dataset.Window) error {
	var m *dataset.Manifest
	if spec.Trace != nil {
		var err error
		if m, err = dataset.ReadManifest(spec.Trace.Dir); err != nil {
			return err
		}
	}
	ec := spec.EnvConfig()
	for _, n := range spec.Eval.Nodes {
		peak, pods, cases := uint64(n), uint64(n)*uint64(ec.Workload.PodsPerNode), spec.Eval.Seeds
		if m != nil {
			pods = 0
			for _, w := range test {
				_, p := m.EstimateSize(extend(w, spec.warmUp()), n, spec.Trace.LoadFactor)
				pods = max(pods, p)
			}
			cases *= len(test)
		}
		if a := ec.Sim.Autoscaler; a.Enabled {
			peak = uint64(max(n, a.MaxNodes))
			if ec.ScaleMax > 0 {
				peak = uint64(math.Ceil(ec.ScaleMax * float64(n)))
			}
		}
		k := uint64(min(cases, runtime.GOMAXPROCS(0)))
		if err := memlimit.Check(fmt.Sprintf("eval.nodes %d", n), memlimit.EstimateConcurrent(k, peak, pods)); err != nil {
			return err
		}
	}
	return nil
}

// Schedulers lists the heuristics of eval.schedulers ("all" for every
// registered one) and, with a checkpoint, the learned policy as "ppo".
func Schedulers(spec *Spec, checkpoint string) ([]Scheduler, error) {
	var names []string
	for _, n := range spec.Eval.Schedulers {
		if n == "all" {
			names = append(names, sched.Names()...)
			continue
		}
		if _, err := sched.New(n, 0); err != nil {
			return nil, fmt.Errorf("eval.schedulers: %w", err)
		}
		names = append(names, n)
	}
	var out []Scheduler
	for _, name := range names {
		out = append(out, Scheduler{Name: name, New: func(seed uint64) (sim.Scheduler, error) { return sched.New(name, seed) }})
	}
	if checkpoint != "" {
		if _, _, err := agent.Load(checkpoint); err != nil {
			return nil, err // fail before any replay starts
		}
		// A policy keeps scratch buffers, so each replay loads its own copy.
		out = append(out, Scheduler{Name: Learned, New: func(uint64) (sim.Scheduler, error) {
			pol, ec, err := agent.Load(checkpoint)
			if err != nil {
				return nil, err
			}
			return agent.NewScheduler(Learned, pol, ec)
		}})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no schedulers: eval.schedulers is empty and no checkpoint")
	}
	return out, nil
}

// Outside reports whether n lies outside the spec's training sizes.
func (s *Spec) Outside(n int) bool { return n < s.Cluster.MinNodes || n > s.Cluster.MaxNodes }

// WriteSummary writes the report's summary tables.
func (r *Report) WriteSummary(w io.Writer) error {
	return WriteSummary(w, r.Spec.Name, r.Tables, Focused, r.Spec.Outside)
}

// WriteJSONLines writes one JSON object per replay: size, seed, workload and
// every field of sim.Result.
func (r *Report) WriteJSONLines(w io.Writer) error {
	enc := json.NewEncoder(w)
	for _, row := range r.Rows {
		if err := enc.Encode(row); err != nil {
			return fmt.Errorf("writing JSON: %w", err)
		}
	}
	return nil
}

// WriteCSV writes one line per replay with every metric: the columns nodes,
// seed, workload, scheduler, then every key of sim.Result's JSON form in
// sorted order (nested objects flattened as "pending_latency.p95_ms"); a
// statistic without a sample is empty.
func (r *Report) WriteCSV(w io.Writer) error {
	return writeRowsCSV(w, nil, nil, r.Rows)
}

// writeRowsCSV writes rows as WriteCSV does, with the columns lead (and
// row i's values leadOf(i)) before nodes.
func writeRowsCSV(w io.Writer, lead []string, leadOf func(i int) []string, rows []Row) error {
	flat := make([]map[string]string, len(rows))
	keys := map[string]bool{}
	for i, row := range rows {
		m, err := flatten(row.Result)
		if err != nil {
			return err
		}
		delete(m, "scheduler")
		flat[i] = m
		for k := range m {
			keys[k] = true
		}
	}
	cols := slices.Sorted(maps.Keys(keys))
	cw := csv.NewWriter(w)
	header := append(slices.Clone(lead), "nodes", "seed", "workload", "scheduler")
	if err := cw.Write(append(header, cols...)); err != nil {
		return fmt.Errorf("writing CSV: %w", err)
	}
	for i, row := range rows {
		var rec []string
		if leadOf != nil {
			rec = leadOf(i)
		}
		rec = append(rec, strconv.Itoa(row.Nodes), strconv.FormatUint(row.Seed, 10), row.Workload, row.Result.Scheduler)
		for _, k := range cols {
			rec = append(rec, flat[i][k])
		}
		if err := cw.Write(rec); err != nil {
			return fmt.Errorf("writing CSV: %w", err)
		}
	}
	cw.Flush()
	return cw.Error()
}

// flatten turns a result into key -> formatted value through its JSON form.
func flatten(res *sim.Result) (map[string]string, error) {
	data, err := json.Marshal(res)
	if err != nil {
		return nil, fmt.Errorf("encoding result: %w", err)
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("encoding result: %w", err)
	}
	out := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(prefix+k+".", e)
			}
		case nil:
			out[prefix[:len(prefix)-1]] = ""
		default:
			out[prefix[:len(prefix)-1]] = fmt.Sprint(x)
		}
	}
	walk("", m)
	return out, nil
}

// WriteFiles writes results.jsonl, results.csv and tables.txt into dir,
// each atomically (a failed write keeps the previous file).
func (r *Report) WriteFiles(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("results folder: %w", err)
	}
	for _, f := range []struct {
		name  string
		write func(io.Writer) error
	}{{"results.jsonl", r.WriteJSONLines}, {"results.csv", r.WriteCSV}, {"tables.txt", r.WriteSummary}} {
		if err := atomicfile.Write(filepath.Join(dir, f.name), f.write); err != nil {
			return fmt.Errorf("writing %s: %w", filepath.Join(dir, f.name), err)
		}
	}
	return nil
}
