package model

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// logSoftmaxAllowed is the log-softmax of prior over the allowed entries.
func logSoftmaxAllowed(prior []float64, ok []bool) []float64 {
	z := 0.0
	for i, v := range prior {
		if ok[i] {
			z += math.Exp(v)
		}
	}
	out := make([]float64, len(prior))
	for i, v := range prior {
		out[i] = math.Inf(-1)
		if ok[i] {
			out[i] = v - math.Log(z)
		}
	}
	return out
}

// A policy with a zero learned correction (ZeroInit) and Prior acts as its
// prior: greedy Act picks the prior's best allowed action, and the
// log-probabilities are log-softmax(prior) over the allowed actions, on the
// host and in the graph. Hand-computed case: two samples of N = 3 nodes.
// Sample 0 masks node 1 (prior 5, ignored): log-softmax of (-1, -0.5, -2)
// over nodes 0, 2 and Pending, best node 2. Sample 1 has node 2 padding
// (prior NaN, ignored) and prefers Pending (prior 0 against -3 and -1).
func TestZeroCorrectionActsAsPrior(t *testing.T) {
	for _, f64 := range []bool{true, false} {
		cfg := testConfig(f64)
		cfg.Prior, cfg.ZeroInit = true, true
		p := mustNew(t, cfg)
		b := randomBatch(rand.New(rand.NewPCG(3, 3)), 2, 3, 5, 3, 2, true)
		b.Mask = []bool{true, false, true, true, true, true, true, true}
		b.NodeValid[5] = false
		b.Prior = []float64{-1, 5, -0.5, -2, -3, -1, math.NaN(), 0}
		tol := 1e-12
		if !f64 {
			tol = 1e-6
		}
		want := [][]float64{
			logSoftmaxAllowed([]float64{-1, 5, -0.5, -2}, []bool{true, false, true, true}),
			logSoftmaxAllowed([]float64{-3, -1, 0, 0}, []bool{true, true, false, true}),
		}
		// by hand for sample 0: log(e^-1 + e^-0.5 + e^-2)
		if z := math.Log(math.Exp(-1) + math.Exp(-0.5) + math.Exp(-2)); math.Abs(want[0][2]-(-0.5-z)) > 1e-15 {
			t.Fatalf("reference log-softmax %v, want %v", want[0][2], -0.5-z)
		}
		var gr Output
		if err := p.graphForward(b, &gr); err != nil {
			t.Fatal(err)
		}
		for name, out := range map[string]*Output{"host": mustForward(t, p, b), "graph": &gr} {
			for s := range 2 {
				for i := range 4 {
					got, w := out.LogP[s*4+i], want[s][i]
					if math.IsInf(w, -1) {
						if math.Exp(got) != 0 {
							t.Errorf("float64=%v %s: sample %d action %d: probability %v, want 0", f64, name, s, i, math.Exp(got))
						}
					} else if math.Abs(got-w) > tol {
						t.Errorf("float64=%v %s: sample %d action %d: log-prob %v, want %v", f64, name, s, i, got, w)
					}
				}
			}
		}
		var act ActResult
		if err := p.Act(b, true, nil, &act); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(act.Actions, []int{2, 3}) {
			t.Errorf("float64=%v: greedy actions %v, want [2 3] (the prior's choices)", f64, act.Actions)
		}
	}
}

// On random batches too, greedy Act of a zero-correction policy is the
// argmax of the prior over the allowed actions.
func TestZeroCorrectionGreedyIsPriorArgmax(t *testing.T) {
	cfg := testConfig(false)
	cfg.Prior, cfg.ZeroInit = true, true
	p := mustNew(t, cfg)
	rng := rand.New(rand.NewPCG(5, 6))
	b := randomBatch(rng, 64, 10, 5, 3, 3, false)
	addPrior(rng, b)
	var act ActResult
	if err := p.Act(b, true, nil, &act); err != nil {
		t.Fatal(err)
	}
	allow := make([]bool, len(b.Mask))
	allowed(allow, b)
	k := b.N + 1
	for s := range b.B {
		best := b.N
		for i := range k {
			if allow[s*k+i] && b.Prior[s*k+i] > b.Prior[s*k+best] {
				best = i
			}
		}
		if act.Actions[s] != best {
			t.Errorf("sample %d: greedy action %d, prior's argmax %d", s, act.Actions[s], best)
		}
	}
}

// Without Config.Prior, Batch.Prior changes nothing.
func TestPriorOffIgnoresBatchPrior(t *testing.T) {
	p := mustNew(t, testConfig(true))
	rng := rand.New(rand.NewPCG(7, 8))
	perturb(p, rng)
	b := randomBatch(rng, 4, 6, 5, 3, 2, false)
	x := mustForward(t, p, b)
	var gx Output
	if err := p.graphForward(b, &gx); err != nil {
		t.Fatal(err)
	}
	addPrior(rng, b)
	y := mustForward(t, p, b)
	var gy Output
	if err := p.graphForward(b, &gy); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(x.LogP, y.LogP) || !slices.Equal(x.Values, y.Values) {
		t.Error("host outputs changed with a prior the policy does not use")
	}
	if !slices.Equal(gx.LogP, gy.LogP) {
		t.Error("graph outputs changed with a prior the policy does not use")
	}
}

// With ZeroInit the query layer is zero, but gradients reach it: cloning
// steps move the policy away from its prior towards a teacher that
// disagrees with it, and the rollout's log-probs (Act, host) are those the
// PPO graph recomputes (ratio 1 on the first step).
func TestZeroInitLearns(t *testing.T) {
	cfg := testConfig(true)
	cfg.Prior, cfg.ZeroInit = true, true
	p := mustNew(t, cfg)
	rng := rand.New(rand.NewPCG(9, 10))
	b := randomBatch(rng, 8, 5, 5, 3, 2, true)
	for i := range b.Mask {
		b.Mask[i] = true
	}
	addPrior(rng, b)
	var act ActResult
	if err := p.Act(b, false, rng, &act); err != nil {
		t.Fatal(err)
	}
	v := make([]float64, b.B)
	lc := LossConfig{ClipCoef: 0.2, VFCoef: 0.5, MaxGradNorm: 0.5, LearningRate: 0}
	st, err := p.TrainStep(b, act.Actions, act.LogP, v, v, act.Values, lc)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(st.ApproxKL) > 1e-12 || st.ClipFraction != 0 {
		t.Errorf("first PPO step with a prior: approx_kl %v, clip fraction %v, want 0 and 0", st.ApproxKL, st.ClipFraction)
	}
	teacher := make([]int, b.B) // node 0: rarely the prior's choice
	before := mustForward(t, p, b)
	var first CloneStats
	for i := range 20 {
		cs, err := p.CloneStep(b, teacher, CloneConfig{LearningRate: 0.01, MaxGradNorm: 1})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = cs
		}
	}
	if !(first.GradNorm > 0) {
		t.Fatalf("gradient norm %v at a zero query layer, want > 0", first.GradNorm)
	}
	after := mustForward(t, p, b)
	k := b.N + 1
	for s := range b.B {
		if after.LogP[s*k] <= before.LogP[s*k] {
			t.Errorf("sample %d: log p(teacher) %v after cloning, %v before", s, after.LogP[s*k], before.LogP[s*k])
		}
	}
}

// CloneStep's loss is the mean cross-entropy of the teacher's actions, its
// agreement that of the greedy action, and bad inputs are errors.
func TestCloneStepStatistics(t *testing.T) {
	p := mustNew(t, testConfig(true))
	rng := rand.New(rand.NewPCG(11, 12))
	perturb(p, rng)
	b := randomBatch(rng, 4, 5, 5, 3, 2, false)
	out := mustForward(t, p, b)
	var act ActResult
	if err := p.Act(b, true, nil, &act); err != nil {
		t.Fatal(err)
	}
	teacher := slices.Clone(act.Actions)
	teacher[0] = b.N // Pending: allowed; agrees unless it was the greedy choice
	wantAgree, wantLoss := 0.0, 0.0
	for s, a := range teacher {
		if a == act.Actions[s] {
			wantAgree += 0.25
		}
		wantLoss -= out.LogP[s*(b.N+1)+a] / 4
	}
	st, err := p.CloneStep(b, teacher, CloneConfig{LearningRate: 0, MaxGradNorm: 1})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(st.Loss-wantLoss) > 1e-9 || st.Agreement != wantAgree {
		t.Errorf("loss %v agreement %v, want %v and %v", st.Loss, st.Agreement, wantLoss, wantAgree)
	}
	for _, tc := range []struct {
		name    string
		teacher []int
		cc      CloneConfig
		want    string
	}{
		{"short", teacher[:2], CloneConfig{MaxGradNorm: 1}, "2 teacher actions"},
		{"outside", append([]int{9}, teacher[1:]...), CloneConfig{MaxGradNorm: 1}, "outside"},
		{"no clip", teacher, CloneConfig{}, "MaxGradNorm"},
		{"nan lr", teacher, CloneConfig{LearningRate: math.NaN(), MaxGradNorm: 1}, "LearningRate"},
	} {
		if _, err := p.CloneStep(b, tc.teacher, tc.cc); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	for s := range b.B {
		for i := range b.N {
			if !b.Mask[s*(b.N+1)+i] || !b.NodeValid[s*b.N+i] {
				bad := slices.Clone(teacher)
				bad[s] = i
				if _, err := p.CloneStep(b, bad, CloneConfig{MaxGradNorm: 1}); err == nil || !strings.Contains(err.Error(), "masked") {
					t.Errorf("masked teacher action: error %v", err)
				}
				return
			}
		}
	}
}

// A synthetic teacher that is a simple function of the node features (the
// allowed node with the largest first feature, Pending when it is below
// 0.2) is learned from the features alone (Prior off) to over 95%
// agreement on held-out decisions.
func TestCloneLearnsTeacher(t *testing.T) {
	p := mustNew(t, Config{NodeFeatures: 5, PodFeatures: 3, Hidden: 32, Rounds: 1, Seed: 3})
	teach := func(b *Batch) []int {
		k := b.N + 1
		out := make([]int, b.B)
		for s := range b.B {
			best, bv := b.N, 0.2
			for i := range b.N {
				if b.Mask[s*k+i] && b.NodeValid[s*b.N+i] && b.Nodes[(s*b.N+i)*5] > bv {
					best, bv = i, b.Nodes[(s*b.N+i)*5]
				}
			}
			out[s] = best
		}
		return out
	}
	rng := rand.New(rand.NewPCG(13, 14))
	test := randomBatch(rand.New(rand.NewPCG(99, 99)), 512, 8, 5, 3, 2, false)
	testT := teach(test)
	var st CloneStats
	for range 1000 {
		b := randomBatch(rng, 64, 8, 5, 3, 2, false)
		var err error
		if st, err = p.CloneStep(b, teach(b), CloneConfig{LearningRate: 3e-3, MaxGradNorm: 1}); err != nil {
			t.Fatal(err)
		}
	}
	var act ActResult
	if err := p.Act(test, true, nil, &act); err != nil {
		t.Fatal(err)
	}
	agree := 0.0
	for s, a := range act.Actions {
		if a == testT[s] {
			agree++
		}
	}
	agree /= float64(test.B)
	t.Logf("held-out agreement %.3f (last training batch %.3f, loss %.3f)", agree, st.Agreement, st.Loss)
	if agree < 0.95 {
		t.Errorf("held-out agreement %.3f, want > 0.95", agree)
	}
}

// Prior and ZeroInit survive a checkpoint round trip; a checkpoint header
// without them (written before they existed) loads with Prior off, and
// Restore refuses a prior mismatch.
func TestCheckpointPriorFields(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(false)
	cfg.Prior, cfg.ZeroInit = true, true
	p := mustNew(t, cfg)
	path := filepath.Join(dir, "prior.ckpt")
	if err := p.Save(path, nil); err != nil {
		t.Fatal(err)
	}
	q, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if c := q.Config(); !c.Prior || !c.ZeroInit {
		t.Errorf("loaded config %+v, want prior and zero_init on", c)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"prior":true,"zero_init":true`) {
		t.Fatalf("header lacks the prior fields: %.300s", data)
	}
	old := rewrite(t, data, func(h string) string { return strings.Replace(h, `,"prior":true,"zero_init":true`, "", 1) })
	oldPath := filepath.Join(dir, "old.ckpt")
	if err := os.WriteFile(oldPath, old, 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := Load(oldPath)
	if err != nil {
		t.Fatalf("old header: %v", err)
	}
	if c := o.Config(); c.Prior || c.ZeroInit {
		t.Errorf("old header loads as %+v, want prior off", c)
	}
	plain := mustNew(t, testConfig(false))
	if err := plain.Restore(path); err == nil || !errors.Is(err, ErrCheckpoint) || !strings.Contains(err.Error(), "prior is true in the checkpoint, false in the policy") {
		t.Errorf("Restore of a prior checkpoint into a policy without: error %v", err)
	}
	if err := plain.Restore(oldPath); err != nil {
		t.Errorf("Restore of an old checkpoint: %v", err)
	}
	// A policy without the fields writes the header it wrote before them.
	plainPath := filepath.Join(dir, "plain.ckpt")
	if err := plain.Save(plainPath, nil); err != nil {
		t.Fatal(err)
	}
	if d, _ := os.ReadFile(plainPath); strings.Contains(string(d), `"prior"`) || strings.Contains(string(d), `"zero_init"`) {
		t.Error("a policy without a prior writes prior fields")
	}
}

// A prior of the wrong length or with a non-finite value on an allowed
// action is an error.
func TestPriorInputErrors(t *testing.T) {
	cfg := testConfig(true)
	cfg.Prior = true
	p := mustNew(t, cfg)
	b := randomBatch(rand.New(rand.NewPCG(15, 16)), 2, 3, 5, 3, 2, true)
	b.Prior = make([]float64, 7)
	var out Output
	if err := p.Forward(b, &out); err == nil || !strings.Contains(err.Error(), "7 prior entries") {
		t.Errorf("short prior: error %v", err)
	}
	b.Prior = make([]float64, 8)
	b.Prior[7] = math.Inf(1) // Pending of sample 1: always allowed
	if err := p.Forward(b, &out); err == nil || !strings.Contains(err.Error(), "sample 1 action 3 prior is +Inf") {
		t.Errorf("infinite prior: error %v", err)
	}
}

// PendingClip survives a checkpoint round trip, is absent from the header
// when 0, and Restore refuses a checkpoint whose Pending clip differs; 0 and
// an explicit PendingClip equal to LogitClip are the same architecture.
func TestCheckpointPendingClip(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(false)
	cfg.Prior, cfg.LogitClip, cfg.PendingClip = true, 3, 15
	path := filepath.Join(dir, "pclip.ckpt")
	if err := mustNew(t, cfg).Save(path, nil); err != nil {
		t.Fatal(err)
	}
	q, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if c := q.Config(); c.PendingClip != 15 || c.LogitClip != 3 {
		t.Errorf("loaded clips %v / %v, want 3 / 15", c.LogitClip, c.PendingClip)
	}
	same := cfg
	same.PendingClip = 0
	plain := mustNew(t, same)
	if err := plain.Restore(path); err == nil || !errors.Is(err, ErrCheckpoint) || !strings.Contains(err.Error(), "pending_clip is 15 in the checkpoint, 3 in the policy") {
		t.Errorf("Restore of a pending-clip checkpoint into a policy without: error %v", err)
	}
	plainPath := filepath.Join(dir, "plain.ckpt")
	if err := plain.Save(plainPath, nil); err != nil {
		t.Fatal(err)
	}
	if d, _ := os.ReadFile(plainPath); strings.Contains(string(d), "pending_clip") {
		t.Error("a policy without a pending clip writes the field")
	}
	same.PendingClip = 3
	if err := mustNew(t, same).Restore(plainPath); err != nil {
		t.Errorf("PendingClip = LogitClip against 0: %v", err)
	}
}
