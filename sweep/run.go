package sweep

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"sync"

	"github.com/kubesim/kubesim/dataset"
	"github.com/kubesim/kubesim/sim"
)

// Scheduler makes a fresh placement policy for one replay (policies keep
// per-run state, so each replay gets its own).
type Scheduler struct {
	Name string
	New  func() (sim.Scheduler, error)
}

// Case is one evaluation workload: a cluster size and a trace window (or a
// synthetic seed).
type Case struct {
	Nodes    int
	Workload string
	w        *sim.Workload
	cfg      sim.Config
}

// NewCase makes a case of workload w replayed under cfg.
func NewCase(w *sim.Workload, cfg sim.Config) Case {
	return Case{Nodes: len(w.Nodes), Workload: w.Name, w: w, cfg: cfg}
}

// Row is one replay of a case by one scheduler.
type Row struct {
	Nodes    int         `json:"nodes"`
	Workload string      `json:"workload"`
	Result   *sim.Result `json:"result"`
}

// Cases builds the evaluation workloads of a spec: for each size in
// eval.nodes, each test window of the trace sampled on that many machines,
// or eval.seeds synthetic workloads of that many nodes (seeds disjoint from
// training's). windows are the resolved test windows (nil without a trace).
func Cases(s *Spec, windows []dataset.Window, seed uint64) ([]Case, error) {
	ec := s.EnvConfig()
	var cases []Case
	for _, n := range s.Eval.Nodes {
		if s.Trace != nil {
			for _, win := range windows {
				w, err := dataset.Load(s.Trace.Dir, dataset.LoadOptions{
					Window: win, Machines: n, LoadFactor: s.Trace.LoadFactor, DAG: s.Trace.DAG,
					MachineMemMiB: s.Trace.MachineMemMiB, Seed: seed,
				})
				if err != nil {
					return nil, fmt.Errorf("evaluation workload %v on %d machines: %w", win, n, err)
				}
				cases = append(cases, Case{Nodes: n, Workload: win.String(), w: w, cfg: ec.SimConfig(len(w.Nodes), seed)})
			}
			continue
		}
		for k := range max(1, s.Eval.Seeds) {
			sd := evalSeed + seed + uint64(k)
			w, err := ec.Workload.Episode(rand.New(rand.NewPCG(sd, 0)), n)
			if err != nil {
				return nil, fmt.Errorf("evaluation workload of %d nodes: %w", n, err)
			}
			cases = append(cases, Case{Nodes: n, Workload: w.Name, w: w, cfg: ec.SimConfig(n, sd)})
		}
	}
	return cases, nil
}

// evalSeed offsets synthetic evaluation workloads from training's seeds.
const evalSeed = 1 << 61

// Replay runs every case under every scheduler, cases in parallel on the
// available cores, and returns the rows in (case, scheduler) order.
func Replay(ctx context.Context, cases []Case, scheds []Scheduler) ([]Row, error) {
	rows := make([]Row, len(cases)*len(scheds))
	errs := make([]error, len(rows))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for ci, c := range cases {
		for si, sc := range scheds {
			i := ci*len(scheds) + si
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				s, err := sc.New()
				if err != nil {
					errs[i] = err
					return
				}
				r, err := sim.Run(ctx, c.w, c.cfg, s)
				if err != nil {
					errs[i] = fmt.Errorf("%s on %s (%d nodes): %w", sc.Name, c.Workload, c.Nodes, err)
					return
				}
				r.Scheduler = sc.Name
				rows[i] = Row{Nodes: c.Nodes, Workload: c.Workload, Result: r}
			}()
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return rows, nil
}

// Mean averages the results of one scheduler over several workloads: every
// numeric field of sim.Result is the mean of the field over rs (time series
// and latency breakdowns are dropped).
func Mean(rs []*sim.Result) *sim.Result {
	out := &sim.Result{}
	if len(rs) == 0 {
		return out
	}
	out.Scheduler = rs[0].Scheduler
	ov := reflect.ValueOf(out).Elem()
	for _, r := range rs {
		rv := reflect.ValueOf(r).Elem()
		for f := range ov.NumField() {
			switch fv := ov.Field(f); fv.Kind() {
			case reflect.Float64:
				fv.SetFloat(fv.Float() + rv.Field(f).Float()/float64(len(rs)))
			case reflect.Int, reflect.Int64:
				fv.SetInt(fv.Int() + rv.Field(f).Int())
			}
		}
	}
	for f := range ov.NumField() {
		if fv := ov.Field(f); fv.Kind() == reflect.Int || fv.Kind() == reflect.Int64 {
			fv.SetInt(fv.Int() / int64(len(rs)))
		}
	}
	return out
}

// BySize groups rows by cluster size and averages each scheduler over the
// workloads of that size. Sizes and schedulers keep their order of first
// appearance.
func BySize(rows []Row) (sizes []int, tables map[int][]*sim.Result) {
	type key struct {
		n    int
		name string
	}
	groups := map[key][]*sim.Result{}
	names := map[int][]string{}
	for _, r := range rows {
		k := key{r.Nodes, r.Result.Scheduler}
		if _, seen := names[r.Nodes]; !seen {
			sizes = append(sizes, r.Nodes)
		}
		if _, seen := groups[k]; !seen {
			names[r.Nodes] = append(names[r.Nodes], k.name)
		}
		groups[k] = append(groups[k], r.Result)
	}
	tables = make(map[int][]*sim.Result, len(sizes))
	for _, n := range sizes {
		for _, name := range names[n] {
			tables[n] = append(tables[n], Mean(groups[key{n, name}]))
		}
	}
	return sizes, tables
}
