package sweep

import (
	"fmt"
	"math"
	"runtime"

	"github.com/kubesim/kubesim/agent"
	"github.com/kubesim/kubesim/dataset"
	"github.com/kubesim/kubesim/internal/memlimit"
	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

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

// checkSuiteMemory is checkMemory for a suite spec: each evaluated trace's
// windows against its own manifest.
func checkSuiteMemory(spec *Spec) error {
	ws, err := spec.Suite.EvalWindows(spec.Suite.Evaluate)
	if err != nil {
		return err
	}
	for _, w := range ws {
		s := *spec
		t := *spec.Trace
		t.Dir = w.Dir
		s.Trace, s.Suite = &t, nil
		if err := checkMemory(&s, []dataset.Window{w.Window}); err != nil {
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
