package sim_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

// TestGraceByHand: one node with 4 GiB and a 60 s window. "long" (3 GiB)
// runs from about 2 s to about 102 s; "late" (2 GiB) arrives at 50 s and
// cannot fit before long finishes; "huge" (5 GiB) fits no node; "after"
// arrives at 70 s, past the window. At the window's end late and huge are
// pending (2 pods, 7 GiB). A grace period of 120 s places late when long
// finishes, so one pod (huge, 5 GiB) is left; a grace period of 30 s ends
// before that, so both are. after never arrives, grace or not.
func TestGraceByHand(t *testing.T) {
	const gib = 1024
	w := &sim.Workload{
		Nodes: []sim.NodeSpec{{Name: "a", Allocatable: sim.Resources{CPU: 4000, Mem: 4 * gib}}},
		Pods: []sim.PodSpec{
			{Name: "long", Arrival: 0, Requests: sim.Resources{CPU: 100, Mem: 3 * gib}, Duration: 100 * sim.Second},
			{Name: "huge", Arrival: 10 * sim.Second, Requests: sim.Resources{CPU: 100, Mem: 5 * gib}},
			{Name: "late", Arrival: 50 * sim.Second, Requests: sim.Resources{CPU: 100, Mem: 2 * gib}, Duration: 10 * sim.Second},
			{Name: "after", Arrival: 70 * sim.Second, Requests: sim.Resources{CPU: 100, Mem: 1 * gib}},
		},
		End: 60 * sim.Second,
	}
	cfg := sim.DefaultConfig()
	cfg.StartupNoise = 0
	for _, tc := range []struct {
		grace    sim.Time
		left     int64
		leftGiB  float64
		simulate float64
	}{
		{0, 2, 7, 60},
		{30 * sim.Second, 2, 7, 60},
		{120 * sim.Second, 1, 5, 60},
	} {
		cfg.Grace = tc.grace
		e := replayEngine(t, w, cfg, sched.NewFirstFit())
		r := e.Result()
		if st := e.Pod(3).State; st != sim.NotArrived {
			t.Errorf("grace %v: the pod due after the window is %v, want it never to arrive", tc.grace, st)
		}
		if r.Pods != 3 || r.Unschedulable != 2 || r.UnschedulableMemGiB != 7 {
			t.Errorf("grace %v: window figures: pods %d, unschedulable %d (%v GiB); want 3, 2 (7 GiB)",
				tc.grace, r.Pods, r.Unschedulable, r.UnschedulableMemGiB)
		}
		if r.UnschedulableAfterGrace != tc.left || r.UnschedulableAfterGraceMemGiB != tc.leftGiB {
			t.Errorf("grace %v: after grace %d (%v GiB), want %d (%v GiB)",
				tc.grace, r.UnschedulableAfterGrace, r.UnschedulableAfterGraceMemGiB, tc.left, tc.leftGiB)
		}
		if r.SimulatedSeconds != tc.simulate {
			t.Errorf("grace %v: simulated %v s, want the window's %v", tc.grace, r.SimulatedSeconds, tc.simulate)
		}
	}
}

// TestGraceKeepsWindowFigures: on a saturated synthetic workload, a grace
// period changes nothing that is measured at the window's end (every field
// of Result but the after-grace counts, and the samples), and the pods left
// after it are a subset of those pending at the end, so there are no more
// of them and no more memory. Checked for two heuristics and a warm-up.
func TestGraceKeepsWindowFigures(t *testing.T) {
	o := sim.DefaultSyntheticOptions(8)
	o.Load = 1.4
	w, err := sim.Synthetic(o)
	if err != nil {
		t.Fatal(err)
	}
	w.End = w.Pods[len(w.Pods)*3/4].Arrival
	for _, name := range []string{"kube-default", "best-fit"} {
		run := func(grace sim.Time) (*sim.Result, []sim.Sample) {
			cfg := sim.DefaultConfig()
			cfg.WarmUp = 10 * sim.Minute
			cfg.Grace = grace
			s, err := sched.New(name, 3)
			if err != nil {
				t.Fatal(err)
			}
			e := replayEngine(t, w, cfg, s)
			return e.Result(), e.Samples()
		}
		base, baseSamples := run(0)
		graced, gracedSamples := run(30 * sim.Minute)
		if base.Unschedulable == 0 {
			t.Fatalf("%s: no pod pending at the end; the workload does not test the grace period", name)
		}
		if base.UnschedulableAfterGrace != base.Unschedulable || base.UnschedulableAfterGraceMemGiB != base.UnschedulableMemGiB {
			t.Errorf("%s: without grace the after-grace counts %d (%v GiB) differ from %d (%v GiB)", name,
				base.UnschedulableAfterGrace, base.UnschedulableAfterGraceMemGiB, base.Unschedulable, base.UnschedulableMemGiB)
		}
		if graced.UnschedulableAfterGrace > graced.Unschedulable || graced.UnschedulableAfterGraceMemGiB > graced.UnschedulableMemGiB {
			t.Errorf("%s: after grace %d (%v GiB) above the window's %d (%v GiB)", name,
				graced.UnschedulableAfterGrace, graced.UnschedulableAfterGraceMemGiB, graced.Unschedulable, graced.UnschedulableMemGiB)
		}
		if graced.UnschedulableAfterGrace == graced.Unschedulable {
			t.Errorf("%s: 30 min of grace placed none of the %d pods pending at the end", name, graced.Unschedulable)
		}
		cmp := *graced
		cmp.UnschedulableAfterGrace, cmp.UnschedulableAfterGraceMemGiB = base.UnschedulableAfterGrace, base.UnschedulableAfterGraceMemGiB
		if d := differingFields(*base, cmp); len(d) > 0 {
			t.Errorf("%s: the window's figures changed with a grace period: %v", name, d)
		}
		if !reflect.DeepEqual(baseSamples, gracedSamples) {
			t.Errorf("%s: samples changed with a grace period (%d against %d)", name, len(baseSamples), len(gracedSamples))
		}
	}
}

// differingFields names the fields of a and b that differ.
func differingFields(a, b sim.Result) []string {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	var d []string
	for i := range va.NumField() {
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			d = append(d, va.Type().Field(i).Name)
		}
	}
	return d
}

// replayEngine runs w under cfg with s to the end and returns the engine.
func replayEngine(t *testing.T, w *sim.Workload, cfg sim.Config, s sim.Scheduler) *sim.Engine {
	t.Helper()
	e, err := sim.New(w, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for {
		p, ok := e.Next()
		if !ok {
			return e
		}
		e.Decide(s.Schedule(e.Cluster(), p))
	}
}

// TestGraceRefused: a negative grace period, or one with no window end to
// drain after, is a config error naming grace_ms.
func TestGraceRefused(t *testing.T) {
	w := &sim.Workload{Nodes: []sim.NodeSpec{{Name: "a", Allocatable: sim.Resources{CPU: 1000, Mem: 1024}}}}
	for _, g := range []sim.Time{-1, sim.Second} {
		cfg := sim.DefaultConfig()
		cfg.Grace = g
		_, err := sim.New(w, cfg)
		if !errors.Is(err, sim.ErrConfig) || !strings.Contains(err.Error(), "grace_ms") {
			t.Errorf("grace %v on a workload without an end: err = %v, want a config error naming grace_ms", g, err)
		}
	}
}
