package ppo

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/kubesim/kubesim/agent"
	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/model"
)

// bestFitPrior gives the packing toy's observation the env's prior form
// for a best-fit heuristic: for feasible bins scale*(s_i/max_s - 1) with
// s_i = 1 - left_i/10 (tighter is better), -2*scale for Pending, 0 for
// infeasible bins.
func bestFitPrior(s *toyState) {
	const scale = 3.0
	o := &s.obs
	o.Prior = make([]float64, o.N+1)
	size, maxS := s.items[0], 0.0
	for i, f := range s.free {
		if o.Mask[i] {
			maxS = max(maxS, 1-(f-size)/10)
		}
	}
	for i, f := range s.free {
		if o.Mask[i] {
			o.Prior[i] = scale * ((1-(f-size)/10)/maxS - 1)
		}
	}
	o.Prior[o.N] = -2 * scale
}

func packPriorReset(r *rand.Rand, s *toyState) {
	packReset(r, s)
	bestFitPrior(s)
}

func packPriorStep(s *toyState, a int) (float64, bool) {
	r, done := packStep(s, a)
	if !done {
		bestFitPrior(s)
	}
	return r, done
}

// With ppo.prior and ppo.zero_init the first policy is the prior's
// heuristic (best fit places both items), and the update's forward pass
// sees the prior the rollout saw: with a negligible learning rate every
// ratio stays 1 over all epochs (approx_kl within float32 rounding, no
// clipping; without the prior in the update, log-probs would move by the
// prior's size, up to 6).
func TestPriorTraining(t *testing.T) {
	cfg := smallConfig(256)
	cfg.Prior, cfg.ZeroInit = true, true
	cfg.LearningRate = 1e-12
	cfg.AnnealLR = false
	tr := train(t, cfg, newToyVec(4, packPriorReset, packPriorStep), Options{})
	if !tr.Policy().Config().Prior {
		t.Fatal("ppo.prior did not build a policy with a prior")
	}
	if got := greedyPriorReturn(t, tr, 200); got != 2 {
		t.Errorf("zero-correction policy placed %.3f items per episode, want best fit's 2", got)
	}
	prog, err := ReadProgress(filepath.Join(tr.opts.Out, ProgressFile))
	if err != nil {
		t.Fatal(err)
	}
	for key, bound := range map[string]float64{"train/approx_kl": 1e-6, "train/clip_fraction": 0} {
		col, ok := prog.Column(key)
		if !ok || len(col) == 0 {
			t.Fatalf("progress.csv lacks %s", key)
		}
		for _, v := range col {
			if math.Abs(v) > bound {
				t.Errorf("%s = %v with the prior in both passes, want <= %v", key, v, bound)
			}
		}
	}
}

// greedyPriorReturn is the greedy policy's mean return on packing
// instances with the best-fit prior.
func greedyPriorReturn(t *testing.T, tr *Trainer, n int) float64 {
	t.Helper()
	return greedyReturn(t, tr.Policy(), packPriorReset, packPriorStep, n, 321)
}

// ppo.prior without a prior in the observations is a configuration error.
func TestPriorNeedsObservationPrior(t *testing.T) {
	cfg := smallConfig(256)
	cfg.Prior = true
	vec := newToyVec(4, packReset, packStep)
	tr, err := New(cfg, env.DefaultConfig(), nil, nil, Options{Out: t.TempDir(), NewVec: func(int) (Vec, error) { return vec, nil }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Train(context.Background()); !errors.Is(err, ErrConfig) {
		t.Errorf("training with ppo.prior on observations without one: error %v, want ErrConfig", err)
	}
}

// TestPriorParityAtStart: with a tetris prior and a zero-initialised
// correction, the untrained greedy policy is the prior heuristic: its
// validation evaluation equals the heuristic's on the same episodes
// (training starts at parity). The trainer logs the heuristic's figures as
// eval/prior_ beside the policy's.
func TestPriorParityAtStart(t *testing.T) {
	ec := env.DefaultConfig()
	ec.MinNodes, ec.MaxNodes = 3, 6
	ec.Workload.PodsPerNode = 20
	ec.MaxSteps = 128
	ec.Prior = env.Prior{Heuristic: "tetris", Scale: 20, Pending: -10, Normalize: env.Range}
	cfg := smallConfig(512)
	cfg.Prior, cfg.ZeroInit = true, true
	cfg.EvalFreq, cfg.EvalEpisodes = 256, 3
	dir := t.TempDir()
	tr, err := New(cfg, ec, nil, nil, Options{Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pol, err := agent.Evaluate(ctx, tr.Policy(), ec, nil, 3, agent.EvalSeed)
	if err != nil {
		t.Fatal(err)
	}
	heur, err := agent.EvaluateActor(ctx, ec, nil, 3, agent.EvalSeed, TeacherAction)
	if err != nil {
		t.Fatal(err)
	}
	if pol != heur {
		t.Errorf("untrained zero-correction policy %+v; the prior heuristic %+v; want equal", pol, heur)
	}
	if _, err := tr.Train(ctx); err != nil {
		t.Fatal(err)
	}
	prog, err := ReadProgress(filepath.Join(dir, ProgressFile))
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]float64{"mean_reward": heur.MeanReward, "unschedulable": heur.Unschedulable, "pending_p95_ms": heur.PendingP95Ms} {
		col, ok := prog.Column("eval/prior_" + k)
		if !ok || len(col) != 2 {
			t.Fatalf("progress.csv: eval/prior_%s %v; want one value per evaluation (2)", k, col)
		}
		for _, v := range col {
			if v != want {
				t.Errorf("eval/prior_%s = %v; want the heuristic's %v", k, v, want)
			}
		}
	}
}

// TestLogitClipReachesThePolicy: ppo.logit_clip bounds the policy's scores
// (0 keeps the model's default), ppo.pending_clip Pending's (here 4 times
// logit_clip), and a checkpoint keeps both.
func TestLogitClipReachesThePolicy(t *testing.T) {
	for clip, want := range map[float64]float64{0: model.DefaultLogitClip, 3: 3} {
		cfg := smallConfig(256)
		cfg.LogitClip, cfg.PendingClip = clip, 4*want
		dir := t.TempDir()
		if _, err := trainToy(t, cfg, toyOpts(dir)); err != nil {
			t.Fatal(err)
		}
		pol, _, err := agent.Load(filepath.Join(dir, LastCheckpoint))
		if err != nil {
			t.Fatal(err)
		}
		if got := pol.Config().LogitClip; got != want {
			t.Errorf("ppo.logit_clip %v: the checkpoint's policy clips at %v, want %v", clip, got, want)
		}
		if got := pol.Config().PendingClip; got != 4*want {
			t.Errorf("ppo.pending_clip %v: the checkpoint's policy clips Pending at %v", 4*want, got)
		}
	}
}
