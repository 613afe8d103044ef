package env

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kubesim/kubesim/sim"
)

// waiters is a two-node case for P_wait and P_unplaced: nodes A and B of
// 4000m/8192Mi, no preemption, and
//
//	q0   at  0 s: 1000m, batch, placed on A
//	big  at 10 s: 6000m, batch, fits no node ever
//	h    at 20 s: 4000m, online, deferred once (1 s backoff), then on B
//	q3   at 30 s: 1000m, batch, placed on A
//	bigh at 40 s: 5000m, online, fits no node ever
//
// every pod 1024Mi and long-running, and a window ending at 90 s.
func waiters() *sim.Workload {
	a := sim.NodeSpec{Name: "A", Allocatable: sim.Resources{CPU: 4000, Mem: 8192}}
	b := sim.NodeSpec{Name: "B", Allocatable: sim.Resources{CPU: 4000, Mem: 8192}}
	p := func(name string, at sim.Time, cpu int64, prio sim.Priority) sim.PodSpec {
		return sim.PodSpec{Name: name, Arrival: at, Requests: sim.Resources{CPU: cpu, Mem: 1024}, Priority: prio}
	}
	return &sim.Workload{
		Name:  "waiters",
		Nodes: []sim.NodeSpec{a, b},
		Pods: []sim.PodSpec{
			p("q0", 0, 1000, sim.Low),
			p("big", 10*sim.Second, 6000, sim.Low),
			p("h", 20*sim.Second, 4000, sim.High),
			p("q3", 30*sim.Second, 1000, sim.Low),
			p("bigh", 40*sim.Second, 5000, sim.High),
		},
		End: 90 * sim.Second,
	}
}

// waitConfig is quietConfig with the waiting cost w5 = 0.7, the terminal
// penalty w6 = 5 and a high-priority pod weighing 3.
func waitConfig() Config {
	cfg := quietConfig()
	cfg.Reward.Wait, cfg.Reward.Unplaced, cfg.Reward.WaitHigh = 0.7, 5, 3
	return cfg
}

// TestWaitAndUnplaced steps the waiters case by hand, with H = 3 the weight
// of a high-priority pod. The environment takes big's first decision at 10 s
// itself (nothing fits it); with forced steps on, the agent takes it (the
// only legal action, Pending) as an extra step, and the sums are the same.
//
//	decision at  0 s (q0 on A) to 20 s (h): big pending 10-20 s: 10/60
//	decision at 20 s (h deferred) to 21 s: big and h, 1 s each: (1 + H)/60
//	decision at 21 s (h on B) to 30 s (q3): big, 9 s: 9/60
//	decision at 30 s (q3 on A) to the end at 90 s: big 60 s, bigh 50 s:
//	(60 + 50H)/60
//
// So P_wait sums to (80 + 51H)/60: big's 80 s from 10 s to 90 s, h's 1 s
// and bigh's 50 s at weight H. At the end big and bigh are pending:
// P_unplaced = 1 + H on the last step, 0 before.
func TestWaitAndUnplaced(t *testing.T) {
	const H = 3.0
	type step struct {
		action   int
		at       sim.Time
		wait     float64
		unplaced float64
	}
	cases := []struct {
		name   string
		forced bool
		steps  []step
	}{
		{"forced steps taken by the environment", false, []step{
			{0, 20 * sim.Second, 10.0 / 60, 0},
			{2, 21 * sim.Second, (1 + H) / 60, 0},
			{1, 30 * sim.Second, 9.0 / 60, 0},
			{0, 90 * sim.Second, (60 + 50*H) / 60, 1 + H},
		}},
		{"forced steps taken by the agent", true, []step{
			{0, 10 * sim.Second, 0, 0},
			{2, 20 * sim.Second, 10.0 / 60, 0}, // big: Pending, the only legal action
			{2, 21 * sim.Second, (1 + H) / 60, 0},
			{1, 30 * sim.Second, 9.0 / 60, 0},
			{0, 40 * sim.Second, 10.0 / 60, 0},
			{2, 90 * sim.Second, (50 + 50*H) / 60, 1 + H}, // bigh: Pending, the only legal action
		}},
	}
	for _, c := range cases {
		cfg := waitConfig()
		cfg.ForcedSteps = c.forced
		off := cfg // the same without the new terms
		off.Reward.Wait, off.Reward.Unplaced = 0, 0
		e, ref := startPair(t, cfg, off, waiters)
		var wait, unplaced, ret float64
		for k, s := range c.steps {
			_, r, term, trunc, info := e.Step(s.action)
			_, r0, _, _, info0 := ref.Step(s.action)
			wait += info.Wait
			unplaced += info.Unplaced
			ret += r
			last := k == len(c.steps)-1
			if info.Time != s.at || term != last || trunc {
				t.Fatalf("%s: step %d at %v, terminated %v truncated %v; want %v, %v", c.name, k, info.Time, term, trunc, s.at, last)
			}
			if !near(info.Wait, s.wait) || info.Unplaced != s.unplaced {
				t.Errorf("%s: step %d: wait %v unplaced %v; want %v and %v", c.name, k, info.Wait, info.Unplaced, s.wait, s.unplaced)
			}
			// The terms are reported whatever their weights; the reward
			// differs by exactly the weighted new terms.
			if info0.Wait != info.Wait || info0.Unplaced != info.Unplaced ||
				!near(r, r0-0.7*info.Wait-5*info.Unplaced) {
				t.Errorf("%s: step %d: reward %v (wait %v, unplaced %v), without the terms %v (wait %v, unplaced %v)",
					c.name, k, r, info.Wait, info.Unplaced, r0, info0.Wait, info0.Unplaced)
			}
			if last && (info.Episode == nil || info.Episode.Return != ret || info.Episode.Result.Unschedulable != 2) {
				t.Errorf("%s: episode %+v; want return %v and 2 unschedulable pods", c.name, info.Episode, ret)
			}
		}
		if !near(wait, (80+51*H)/60) || unplaced != 1+H {
			t.Errorf("%s: wait sums to %v, unplaced to %v; want (80 + 51H)/60 = %v and 1 + H = %v",
				c.name, wait, unplaced, (80+51*H)/60, 1+H)
		}
	}
}

// TestUnplacedNotOnTruncation: truncated after the third decision (at 30 s,
// with big still pending), the episode has no terminal penalty.
func TestUnplacedNotOnTruncation(t *testing.T) {
	cfg := waitConfig()
	cfg.MaxSteps = 3
	e, err := New(cfg, Fixed{waiters()})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.Reset(1); err != nil {
		t.Fatal(err)
	}
	for k, a := range []int{0, 2, 1} {
		_, _, term, trunc, info := e.Step(a)
		if info.Unplaced != 0 || term || trunc != (k == 2) {
			t.Errorf("step %d: unplaced %v, terminated %v truncated %v; want 0, false, %v", k, info.Unplaced, term, trunc, k == 2)
		}
	}
}

// TestBalanceDelta steps the two-node case of TestRewardTwoNodes with the
// delta form over requested CPU (A 4000m, B 8000m). s is the standard
// deviation of requested CPU over allocatable; delta = (s_before - s_after)/0.5.
//
//	p0 on A:  (0, 0) -> (0.5, 0): s 0 -> 0.25, delta -0.5
//	p1 on A:  masked, nothing moves: 0
//	p1 on B:  (0.5, 0) -> (0.5, 0.5): s 0.25 -> 0, delta +0.5
//	p2 Pending: a deferral: 0
//	p2 on A:  (0.5, 0.5) -> (0.75, 0.5): s 0 -> 0.125, delta -0.25
//
// The sum, -0.25, is the bounded balance of the end (1 - 0.125/0.5 = 0.75)
// minus that of the empty cluster (1). The other terms are those of
// TestRewardTwoNodes, so the reward differs from the bounded form's by the
// balance alone.
func TestBalanceDelta(t *testing.T) {
	want := []float64{-0.5, 0, 0.5, 0, -0.25}
	actions := []int{0, 0, 1, 2, 0}
	cfg := quietConfig()
	cfg.Reward.BalanceOf = Requested
	lvl := cfg
	cfg.Reward.BalanceForm = Delta
	e, ref := startPair(t, cfg, lvl, twoNodes)
	var sum float64
	for k, a := range actions {
		_, r, _, _, info := e.Step(a)
		_, r0, _, _, info0 := ref.Step(a)
		sum += info.Balance
		if !near(info.Balance, want[k]) || !near(r-info.Balance, r0-info0.Balance) {
			t.Errorf("step %d: delta balance %v (reward %v); want %v (reward %v)",
				k, info.Balance, r, want[k], r0-info0.Balance+want[k])
		}
	}
	if !near(sum, -0.25) {
		t.Errorf("delta balance sums to %v; want -0.25", sum)
	}
}

// TestDefaultRewardUnchanged: under DefaultConfig (w5 = w6 = 0) the reward
// is the old five-term expression of the Info terms bit for bit, while the
// new terms are still reported, on a busy episode with a misbehaving random
// policy.
func TestDefaultRewardUnchanged(t *testing.T) {
	e, err := New(busyConfig(6), nil)
	if err != nil {
		t.Fatal(err)
	}
	w := DefaultConfig().Reward
	if e.cfg.Reward != w || w.Wait != 0 || w.Unplaced != 0 || w.BalanceForm != Bounded {
		t.Fatalf("default reward %+v", w)
	}
	obs, _, err := e.Reset(3)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	var wait float64
	for {
		var rew float64
		var term, trunc bool
		var info Info
		obs, rew, term, trunc, info = e.Step(randomAction(r, obs))
		old := w.Balance*info.Balance + w.Fragment*info.Fragment -
			w.Violation*info.Violation - w.Failure*info.Failure - w.Pending*info.Pending
		if rew != old {
			t.Fatalf("step %d: reward %v; the old expression gives %v", info.Steps, rew, old)
		}
		wait += info.Wait
		if term || trunc {
			if !term || wait <= 0 {
				t.Errorf("episode ended (terminated %v) with %v pod-minutes of waiting; want terminated, some waiting", term, wait)
			}
			break
		}
	}
}

// TestRewardTermsValidate: the new weights must be finite and
// non-negative, the delta form needs the requested signal; errors name the
// YAML key.
func TestRewardTermsValidate(t *testing.T) {
	cases := []struct {
		name string
		key  string
		edit func(*Reward)
	}{
		{"negative wait", "reward.wait", func(r *Reward) { r.Wait = -1 }},
		{"NaN unplaced", "reward.unplaced", func(r *Reward) { r.Unplaced = math.NaN() }},
		{"infinite high weight", "reward.wait_high", func(r *Reward) { r.WaitHigh = math.Inf(1) }},
		{"negative high weight", "reward.wait_high", func(r *Reward) { r.WaitHigh = -2 }},
		{"delta of used CPU", "reward.balance_form", func(r *Reward) { r.BalanceForm = Delta }},
	}
	for _, c := range cases {
		cfg := DefaultConfig()
		c.edit(&cfg.Reward)
		if err := cfg.Validate(); !errors.Is(err, ErrConfig) || !containsKey(err.Error(), c.key) {
			t.Errorf("%s: error %v; want ErrConfig naming %s", c.name, err, c.key)
		}
	}
	cfg := DefaultConfig()
	cfg.Reward.BalanceForm, cfg.Reward.BalanceOf = Delta, Requested
	cfg.Reward.Wait, cfg.Reward.Unplaced, cfg.Reward.WaitHigh = 1, 1, 0
	if err := cfg.Validate(); err != nil {
		t.Errorf("delta over requested CPU with the new weights: %v", err)
	}
}

// startPair starts two environments on fresh copies of the same workload,
// one under cfg and one under ref (the reward without the term under
// test), both reset with seed 1.
func startPair(t *testing.T, cfg, ref Config, workload func() *sim.Workload) (*Env, *Env) {
	t.Helper()
	var out [2]*Env
	for i, c := range []Config{cfg, ref} {
		e, err := New(c, Fixed{workload()})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.Reset(1); err != nil {
			t.Fatal(err)
		}
		out[i] = e
	}
	return out[0], out[1]
}
