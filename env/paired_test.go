package env

import (
	"math"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

// pairedEnv returns an environment whose reward is P_wait and P_unplaced
// only, paired against heuristic, on a saturated synthetic workload cut
// at half its arrivals (pods left pending at the end).
func pairedEnv(t *testing.T, heuristic string, paired bool) *Env {
	t.Helper()
	return pairedEnvPrior(t, Prior{Heuristic: heuristic, Scale: 20, Pending: -10, Normalize: Range}, paired)
}

// pairedEnvPrior is pairedEnv with any prior (a gate's, say).
func pairedEnvPrior(t *testing.T, prior Prior, paired bool) *Env {
	t.Helper()
	o := sim.DefaultSyntheticOptions(6)
	o.Pods, o.Seed, o.Load = 600, 3, 1.4
	w, err := sim.Synthetic(o)
	if err != nil {
		t.Fatal(err)
	}
	w.End = w.Pods[len(w.Pods)/2].Arrival
	cfg := DefaultConfig()
	cfg.MinNodes, cfg.MaxNodes, cfg.MaxSteps = 6, 6, 0
	cfg.Sim.Autoscaler.Enabled = false // a fixed cluster, so pods are left pending
	cfg.Reward = Reward{Wait: 1, Unplaced: 1, WaitHigh: 2, Paired: paired, BalanceForm: Bounded, BalanceOf: Used}
	cfg.Prior = prior
	e, err := New(cfg, Fixed{Workload: w})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// actAs plays an episode deciding as the named heuristic with the
// episode's simulator seed (the paired replay's), and returns the return
// and the summed waiting and terminal terms.
func actAs(t *testing.T, e *Env, heuristic string) (ret, wait, unplaced float64) {
	t.Helper()
	obs, _, err := e.Reset(11)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sched.New(heuristic, e.simSeed)
	if err != nil {
		t.Fatal(err)
	}
	for {
		p, _ := e.eng.Next()
		a := s.Schedule(e.eng.Cluster(), p)
		if a == sim.PendingDecision {
			a = obs.N
		}
		var r float64
		var term, trunc bool
		var info Info
		obs, r, term, trunc, info = e.Step(a)
		ret += r
		wait += info.Wait
		unplaced += info.Unplaced
		if term || trunc {
			return ret, wait, unplaced
		}
	}
}

// TestPairedBaselineCancels: deciding exactly as the paired heuristic
// earns a return of 0 (up to rounding) from the waiting and terminal terms
// although both are large, while without pairing the return is their
// negated sum; and a different policy (first-fit) earns a non-zero paired
// return equal to its unpaired return minus the heuristic's.
func TestPairedBaselineCancels(t *testing.T) {
	const h = sched.NameTetris
	ret, wait, unplaced := actAs(t, pairedEnv(t, h, true), h)
	if wait <= 0 || unplaced <= 0 {
		t.Fatalf("waiting cost %v, pods left %v: the workload does not saturate, the test says nothing", wait, unplaced)
	}
	if math.Abs(ret) > 1e-6*(wait+unplaced) {
		t.Errorf("paired return acting as %s = %v; want 0 (waiting %v, unplaced %v)", h, ret, wait, unplaced)
	}
	plain, _, _ := actAs(t, pairedEnv(t, h, false), h)
	if want := -(wait + unplaced); math.Abs(plain-want) > 1e-6*-want {
		t.Errorf("unpaired return %v; want %v", plain, want)
	}
	other, _, _ := actAs(t, pairedEnv(t, h, true), sched.NameFirstFit)
	otherPlain, _, _ := actAs(t, pairedEnv(t, h, false), sched.NameFirstFit)
	if math.Abs(other-(otherPlain-plain)) > 1e-6*math.Abs(otherPlain) || other == 0 {
		t.Errorf("first-fit: paired return %v; want its unpaired %v minus %s's %v, non-zero", other, otherPlain, h, plain)
	}
}

// TestPairedGateBaseline: with a gate, the paired baseline is the first of
// prior.heuristics: acting as it earns 0, acting as the second does not
// (and earns its unpaired return minus the first's).
func TestPairedGateBaseline(t *testing.T) {
	first, second := sched.NameTetris, sched.NameBestFit
	gate := Prior{Heuristics: []string{first, second}, Scale: 20, Pending: -10, Normalize: Range}
	if got := gate.Baseline(); got != first {
		t.Fatalf("Baseline() = %q; want %q", got, first)
	}
	ret, wait, unplaced := actAs(t, pairedEnvPrior(t, gate, true), first)
	if wait <= 0 || unplaced <= 0 {
		t.Fatalf("waiting cost %v, pods left %v: the workload does not saturate, the test says nothing", wait, unplaced)
	}
	if math.Abs(ret) > 1e-6*(wait+unplaced) {
		t.Errorf("paired return acting as %s = %v; want 0", first, ret)
	}
	plain, _, _ := actAs(t, pairedEnvPrior(t, gate, false), first)
	other, _, _ := actAs(t, pairedEnvPrior(t, gate, true), second)
	otherPlain, _, _ := actAs(t, pairedEnvPrior(t, gate, false), second)
	if math.Abs(other-(otherPlain-plain)) > 1e-6*math.Abs(otherPlain) || other == 0 {
		t.Errorf("%s: paired return %v; want its unpaired %v minus %s's %v, non-zero", second, other, otherPlain, first, plain)
	}
}

// TestPairedNeedsPrior: reward.paired without a prior heuristic is refused
// with an error naming the key.
func TestPairedNeedsPrior(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Reward.Paired = true
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "reward.paired") {
		t.Errorf("Validate: %v; want an error naming reward.paired", err)
	}
}

// TestPairedCostAt: the replay's accrued cost is a step function of time
// that holds its last recorded value, the latest of equal times.
func TestPairedCostAt(t *testing.T) {
	r := &pairedRun{at: []sim.Time{10, 20, 20, 30}, cost: []float64{1, 2, 3, 4}}
	for _, c := range []struct {
		t    sim.Time
		want float64
	}{{5, 0}, {10, 1}, {15, 1}, {20, 3}, {25, 3}, {30, 4}, {99, 4}} {
		if got := r.costAt(c.t); got != c.want {
			t.Errorf("costAt(%d) = %v, want %v", c.t, got, c.want)
		}
	}
}
