package ppo

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/kubesim/kubesim/agent"
	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/model"
	"github.com/kubesim/kubesim/sim"
)

// toyVec is a vectorised environment for tests: k independent copies of a
// small problem given by its reset and step functions, auto-reset like
// env.VecEnv.
type toyVec struct {
	k     int
	rng   []*rand.Rand
	state []toyState
	batch env.Batch
	reset func(r *rand.Rand, s *toyState)
	step  func(s *toyState, a int) (reward float64, done bool)
}

// toyState is one copy's state and its current observation.
type toyState struct {
	obs   env.Obs
	items []float64 // packing: item sizes still to place
	free  []float64 // packing: free capacity per bin
	ctx   int       // bandit: context
	perm  []int     // bandit: arm order
	ret   float64
	steps int
}

func newToyVec(k int, reset func(*rand.Rand, *toyState), step func(*toyState, int) (float64, bool)) *toyVec {
	v := &toyVec{k: k, reset: reset, step: step, state: make([]toyState, k), rng: make([]*rand.Rand, k)}
	v.batch = env.Batch{Obs: make([]env.Obs, k), Reward: make([]float64, k), Terminated: make([]bool, k),
		Truncated: make([]bool, k), Info: make([]env.Info, k)}
	return v
}

func (v *toyVec) Len() int { return v.k }

func (v *toyVec) Reset(seed uint64) (*env.Batch, error) {
	for i := range v.k {
		v.rng[i] = rand.New(rand.NewPCG(seed+uint64(i), 1))
		v.reset(v.rng[i], &v.state[i])
		v.batch.Obs[i] = v.state[i].obs
	}
	return &v.batch, nil
}

func (v *toyVec) Step(actions []int) (*env.Batch, error) {
	for i, a := range actions {
		s := &v.state[i]
		r, done := v.step(s, a)
		s.ret += r
		s.steps++
		v.batch.Reward[i], v.batch.Terminated[i], v.batch.Truncated[i] = r, done, false
		v.batch.Info[i] = env.Info{}
		if done {
			v.batch.Info[i].Episode = &env.Episode{Return: s.ret, Steps: s.steps}
			v.reset(v.rng[i], s)
		}
		v.batch.Obs[i] = s.obs
	}
	return &v.batch, nil
}

func blankObs(n int) env.Obs {
	o := env.Obs{N: n, Pod: make([]float64, env.PodFeatures), Nodes: make([]float64, n*env.NodeFeatures),
		Domain: make([]int32, n), Mask: make([]bool, n+1)}
	for i := range o.Domain {
		o.Domain[i] = -1
	}
	return o
}

// The contextual bandit: three arms, shown in a random order. Arm "a" pays 1
// in context 0, arm "b" pays 1 in context 1, arm "c" always pays 0.3 and
// Pending pays 0. The optimal policy earns 1 per step.
func banditReset(r *rand.Rand, s *toyState) {
	s.obs = blankObs(3)
	s.ctx = r.IntN(2)
	s.perm = r.Perm(3)
	s.ret, s.steps = 0, 0
	s.obs.Pod[0] = float64(s.ctx)
	for pos, arm := range s.perm {
		s.obs.Nodes[pos*env.NodeFeatures+arm] = 1 // one-hot arm identity
		s.obs.Mask[pos] = true
	}
	s.obs.Mask[3] = true
}

func banditStep(s *toyState, a int) (float64, bool) {
	if a >= 3 {
		return 0, true
	}
	switch arm := s.perm[a]; {
	case arm == s.ctx:
		return 1, true
	case arm == 2:
		return 0.3, true
	}
	return 0, true
}

func smallConfig(total int64) Config {
	c := DefaultConfig()
	c.NEnvs, c.NSteps, c.BatchSize, c.NEpochs = 4, 64, 64, 4
	c.TotalTimesteps = total
	c.LearningRate = 3e-3
	c.EvalFreq = 0
	c.Hidden = 32
	c.Seed = 3
	return c
}

func train(t *testing.T, cfg Config, vec Vec, opts Options) *Trainer {
	t.Helper()
	opts.Out = t.TempDir()
	opts.NewVec = func(int) (Vec, error) { return vec, nil }
	tr, err := New(cfg, env.DefaultConfig(), nil, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	return tr
}

// greedyReturn plays n greedy episodes of a toy problem and returns the mean
// return.
func greedyReturn(t *testing.T, pol *model.Policy, reset func(*rand.Rand, *toyState), step func(*toyState, int) (float64, bool), n int, seed uint64) float64 {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	var b model.Batch
	var act model.ActResult
	var total float64
	for range n {
		var s toyState
		reset(r, &s)
		for {
			agent.Fill(&b, []env.Obs{s.obs})
			if err := pol.Act(&b, true, nil, &act); err != nil {
				t.Fatal(err)
			}
			rew, done := step(&s, agent.ToEnv(act.Actions[0], s.obs.N, b.N))
			total += rew
			if done {
				break
			}
		}
	}
	return total / float64(n)
}

func TestBandit(t *testing.T) {
	tr := train(t, smallConfig(256*30), newToyVec(4, banditReset, banditStep), Options{})
	got := greedyReturn(t, tr.Policy(), banditReset, banditStep, 400, 99)
	if got < 0.95 {
		t.Errorf("greedy mean reward %.3f; want > 0.95 of the optimum 1", got)
	}
	t.Logf("greedy mean reward %.3f after %d steps", got, tr.Steps())
}

// The packing problem: two bins, a small bin (2-4 units) and a large one
// (8-10), in random order; a small item that fits both, then a large item
// that fits the large bin only if the small item did not go there. Each
// placed item pays 1. Best fit (the tightest bin) places both every time; a
// greedy "most free space" choice places one.
func packReset(r *rand.Rand, s *toyState) {
	small := 2 + 2*r.Float64()
	large := 8 + 2*r.Float64()
	s.free = []float64{small, large}
	if r.IntN(2) == 1 {
		s.free[0], s.free[1] = s.free[1], s.free[0]
	}
	item := 0.5 + (small-0.5)*r.Float64()
	s.items = []float64{item, large - item/2} // fits the large bin only if item is elsewhere
	s.ret, s.steps = 0, 0
	packObs(s)
}

func packObs(s *toyState) {
	if s.obs.N != 2 {
		s.obs = blankObs(2)
	}
	size := s.items[0]
	s.obs.Pod[0] = size / 10
	for i, f := range s.free {
		row := s.obs.Nodes[i*env.NodeFeatures : (i+1)*env.NodeFeatures]
		row[0], row[1] = f/10, (f-size)/10
		s.obs.Mask[i] = size <= f
	}
	s.obs.Mask[2] = true
}

func packStep(s *toyState, a int) (float64, bool) {
	var r float64
	if a < 2 && s.items[0] <= s.free[a] {
		s.free[a] -= s.items[0]
		r = 1
	}
	s.items = s.items[1:]
	if len(s.items) == 0 {
		return r, true
	}
	packObs(s)
	return r, false
}

// bestFitReturn is best fit's mean return on the same instances.
func bestFitReturn(n int, seed uint64) float64 {
	r := rand.New(rand.NewPCG(seed, 7))
	var total float64
	for range n {
		var s toyState
		packReset(r, &s)
		for {
			a, best := 2, math.Inf(1)
			for i, f := range s.free {
				if left := f - s.items[0]; left >= 0 && left < best {
					a, best = i, left
				}
			}
			rew, done := packStep(&s, a)
			total += rew
			if done {
				break
			}
		}
	}
	return total / float64(n)
}

func TestPackingMatchesBestFit(t *testing.T) {
	tr := train(t, smallConfig(256*40), newToyVec(4, packReset, packStep), Options{})
	want := bestFitReturn(300, 123)
	got := greedyReturn(t, tr.Policy(), packReset, packStep, 300, 123)
	if want != 2 {
		t.Fatalf("best fit placed %.3f items per episode; the instances should let it place 2", want)
	}
	if got != want {
		t.Errorf("greedy policy placed %.3f items per episode; best fit %.3f", got, want)
	}
}

// cancelVec cancels a context after a number of steps.
type cancelVec struct {
	*toyVec
	after  int
	cancel context.CancelFunc
}

func (c *cancelVec) Step(a []int) (*env.Batch, error) {
	if c.after--; c.after == 0 {
		c.cancel()
	}
	return c.toyVec.Step(a)
}

// interruptedRun trains a 4-update run into a new folder whose context is
// cancelled during its second update, as Ctrl-C would, and returns the
// configuration and options it ran with and its outcome.
func interruptedRun(t *testing.T) (Config, Options, Summary, error) {
	t.Helper()
	cfg := smallConfig(256 * 4)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts := Options{Out: t.TempDir(), NewVec: func(int) (Vec, error) {
		return &cancelVec{toyVec: newToyVec(4, banditReset, banditStep), after: 2 * 64, cancel: cancel}, nil
	}}
	tr, err := New(cfg, env.DefaultConfig(), nil, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := tr.Train(ctx)
	return cfg, opts, sum, err
}

// TestResume: a 4-update run interrupted (its context cancelled) during its
// second update stops after that update with last.ckpt saved; resumed, it
// continues the step count, the update count and the learning-rate schedule.
func TestResume(t *testing.T) {
	cfg, opts, sum, err := interruptedRun(t)
	dir := opts.Out
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Interrupted || sum.Steps != 512 || sum.Updates != 2 {
		t.Fatalf("interrupted run: %+v; want interrupted at step 512 after 2 updates", sum)
	}
	opts.Resume = filepath.Join(dir, LastCheckpoint)
	opts.NewVec = func(int) (Vec, error) { return newToyVec(4, banditReset, banditStep), nil }
	tr2, err := New(cfg, env.DefaultConfig(), nil, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	if tr2.Steps() != 512 {
		t.Fatalf("resumed at step %d; want 512", tr2.Steps())
	}
	sum, err = tr2.Train(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if sum.Steps != 1024 || sum.Updates != 4 || sum.Interrupted {
		t.Errorf("resumed run: %+v; want step 1024, update 4, not interrupted", sum)
	}
	prog, err := ReadProgress(filepath.Join(dir, ProgressFile))
	if err != nil {
		t.Fatal(err)
	}
	steps, _ := prog.Column("time/total_timesteps")
	lrs, _ := prog.Column("train/learning_rate")
	// Four rows; learning rate 3e-3 * (1 - u/4) for updates u = 0..3 of the
	// whole run, the first two from the first process.
	wantSteps := []float64{256, 512, 768, 1024}
	wantLR := []float64{3e-3, 3e-3 * 0.75, 3e-3 * 0.5, 3e-3 * 0.25}
	if len(steps) != 4 {
		t.Fatalf("%d progress rows; want 4", len(steps))
	}
	for i := range 4 {
		if steps[i] != wantSteps[i] || math.Abs(lrs[i]-wantLR[i]) > 1e-12 {
			t.Errorf("row %d: step %v lr %v; want %v and %v", i, steps[i], lrs[i], wantSteps[i], wantLR[i])
		}
	}
}

// TestLearningRateSchedule checks the linear annealing by hand.
func TestLearningRateSchedule(t *testing.T) {
	c := smallConfig(256 * 10)
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		u    int64
		want float64
	}{{0, 3e-3}, {5, 1.5e-3}, {9, 3e-4}} {
		if got := c.LearningRateAt(tc.u); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("update %d: lr %v; want %v", tc.u, got, tc.want)
		}
	}
	c.AnnealLR = false
	if got := c.LearningRateAt(9); got != 3e-3 {
		t.Errorf("without annealing: lr %v; want 3e-3", got)
	}
}

func TestConfigValidate(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Config)
	}{
		{"batch does not divide rollout", func(c *Config) { c.BatchSize = 100 }},
		{"no envs", func(c *Config) { c.NEnvs = 0 }},
		{"gamma above 1", func(c *Config) { c.Gamma = 1.5 }},
		{"budget below a rollout", func(c *Config) { c.TotalTimesteps = 10 }},
		{"negative lr", func(c *Config) { c.LearningRate = -1 }},
		{"negative bc_steps", func(c *Config) { c.BCSteps = -1 }},
		{"bc without epochs", func(c *Config) { c.BCSteps, c.BCEpochs = 100, 0 }},
		{"bc without lr", func(c *Config) { c.BCSteps, c.BCLearningRate = 100, 0 }},
		{"bc holdout of 1", func(c *Config) { c.BCSteps, c.BCHoldout = 100, 1 }},
		{"bc too few to hold out", func(c *Config) { c.BCSteps = 2 }},
		{"negative logit_clip", func(c *Config) { c.LogitClip = -1 }},
		{"NaN logit_clip", func(c *Config) { c.LogitClip = math.NaN() }},
	}
	for _, tc := range cases {
		c := DefaultConfig()
		tc.edit(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	c := DefaultConfig()
	if err := c.Validate(); err != nil || c.RolloutSize != 16384 || c.Minibatches != 256 || c.Updates != 12 {
		t.Errorf("defaults: %v, rollout %d, minibatches %d, updates %d; want 16384, 256, 12", err, c.RolloutSize, c.Minibatches, c.Updates)
	}
}

// TestTrainOnSimulator trains briefly on the real environment with
// evaluation on, checks the run folder, and replays a workload with the best
// checkpoint acting as a sim.Scheduler.
func TestTrainOnSimulator(t *testing.T) {
	ec := env.DefaultConfig()
	ec.MinNodes, ec.MaxNodes = 3, 6
	ec.Workload.PodsPerNode = 20
	ec.MaxSteps = 100
	c := DefaultConfig()
	c.NEnvs, c.NSteps, c.BatchSize, c.NEpochs = 2, 64, 32, 2
	c.TotalTimesteps = 256
	c.EvalFreq, c.EvalEpisodes = 128, 1
	c.Hidden = 16
	dir := t.TempDir()
	tr, err := New(c, ec, nil, nil, Options{Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := tr.Train(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if sum.Steps != 256 || math.IsNaN(sum.BestEvalScore) {
		t.Errorf("summary %+v; want 256 steps and an evaluation", sum)
	}
	for _, f := range []string{LastCheckpoint, BestCheckpoint, ConfigFile, ProgressFile, MonitorFile, CurvePNG} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("run folder lacks %s: %v", f, err)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "events.out.tfevents.*")); len(m) == 0 {
		t.Error("no TensorBoard event file")
	}
	prog, err := ReadProgress(filepath.Join(dir, ProgressFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"rollout/ep_rew_mean", "train/approx_kl", "train/explained_variance", "eval/mean_reward", "reward/balance_mean", "time/fps"} {
		if _, ok := prog.Column(k); !ok {
			t.Errorf("progress.csv lacks %s", k)
		}
	}
	pol, err := model.Load(filepath.Join(dir, BestCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	s, err := agent.NewScheduler("ppo", pol, ec)
	if err != nil {
		t.Fatal(err)
	}
	o := sim.DefaultSyntheticOptions(5)
	o.Pods = 300
	w, err := sim.Synthetic(o)
	if err != nil {
		t.Fatal(err)
	}
	r, err := sim.Run(context.Background(), w, sim.DefaultConfig(), s)
	if err != nil || s.Err != nil {
		t.Fatalf("replay with the learned policy: %v, %v", err, s.Err)
	}
	if r.Pods != 300 || r.Scheduler != "ppo" {
		t.Errorf("replay: %d pods by %q; want 300 by ppo", r.Pods, r.Scheduler)
	}
}
