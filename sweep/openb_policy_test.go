package sweep

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/agent"
	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/internal/openbtest"
	"github.com/kubesim/kubesim/model"
	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

// smallOpenbDir writes an openb folder of the first n GPU nodes of the
// test data's node list and its default pod list.
func smallOpenbDir(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	f, err := os.Open(filepath.Join(openbTestdata, "openb_node_list_gpu_node.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b strings.Builder
	sc := bufio.NewScanner(f)
	for i := 0; i <= n && sc.Scan(); i++ { // the header and n nodes
		b.WriteString(sc.Text() + "\n")
	}
	pods, err := os.ReadFile(filepath.Join(openbTestdata, "openb_pod_list_default.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if os.WriteFile(filepath.Join(dir, "openb_node_list_gpu_node.csv"), []byte(b.String()), 0o644) != nil ||
		os.WriteFile(filepath.Join(dir, "openb_pod_list_default.csv"), pods, 0o644) != nil {
		t.Fatal("writing the openb folder")
	}
	return dir
}

// zeroGPUPolicy saves a GPU policy whose learned correction is zero over
// FGD's prior: greedy, it is FGD (agent.TestEvaluateGPUZeroCorrection).
func zeroGPUPolicy(t *testing.T, seed uint64) string {
	t.Helper()
	ec := env.DefaultGPUConfig()
	ec.Prior, ec.PriorScale, ec.PriorPending = sched.NameFGD, 5, -10
	data, _ := json.Marshal(ec)
	pol, err := model.New(model.Config{NodeFeatures: env.GPUNodeFeatures, PodFeatures: env.GPUPodFeatures, Hidden: 16, Prior: true, ZeroInit: true, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "zero.ckpt")
	if err := pol.Save(path, map[string]string{agent.MetaGPUEnv: string(data)}); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestOpenbPolicyRow runs a policy row beside fgd and best-fit: a
// zero-correction policy over FGD's prior is FGD's run bit for bit in
// every cell, the summary pairs it with fgd (Δ 0), and a second run into
// the same folder reads every cell from cells/, a corrupt cell file runs
// again, and another checkpoint runs every cell again.
func TestOpenbPolicyRow(t *testing.T) {
	dir, ckpt := smallOpenbDir(t, 30), zeroGPUPolicy(t, 1)
	spec := "name: policy-test\nmode: openb\ndir: " + dir + "\npod_lists: [default]\nseeds: [7, 8]\n" +
		"schedulers: [fgd, best-fit]\npolicies:\n  - name: zero\n    checkpoint: " + ckpt + "\n"
	s, err := ParseOpenbSpec([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	if s.Reference != "fgd" {
		t.Errorf("reference %q; want fgd by default", s.Reference)
	}
	out := t.TempDir()
	res, err := RunOpenb(context.Background(), s, OpenbOptions{Out: out, Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 6 || res.Cached != 0 {
		t.Fatalf("%d runs, %d cached; want 6 and 0", len(res.Runs), res.Cached)
	}
	bits := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
	for c := range 2 {
		fgd, zero := res.Runs[3*c], res.Runs[3*c+2]
		if fgd.Scheduler != "fgd" || zero.Scheduler != "zero" || zero.Seed != fgd.Seed || zero.PodList != "default" {
			t.Fatalf("cell %d: rows %s, %s (seed %d, %d); want fgd and zero on one seed", c, fgd.Scheduler, zero.Scheduler, fgd.Seed, zero.Seed)
		}
		if !slices.EqualFunc(fgd.AllocCurve, zero.AllocCurve, bits) || fgd.Placed != zero.Placed {
			t.Errorf("seed %d: the zero-correction policy placed %d, fgd %d; want FGD's run", fgd.Seed, zero.Placed, fgd.Placed)
		}
	}
	sum, err := os.ReadFile(filepath.Join(out, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Policies against fgd, paired by seed", "| default | 2 |", "| +0.00 ± 0.00 | +0.0% |",
		"zero: 1 pod lists; below fgd with an interval below zero on 0, above with an interval above zero on 0, of which 0 with at least 20% fewer unallocated GPUs; " +
			"0.10 points or more below fgd at some arrived level of 50-130% (mean over seeds) on 0.",
		// the zero correction is FGD: no difference anywhere on the curve
		"| +0.00 ± 0.00 | +0.00 (50%) |"} {
		if !strings.Contains(string(sum), want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}

	// again: every cell from the cache, the same runs
	again, err := RunOpenb(context.Background(), s, OpenbOptions{Out: out, Jobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if again.Cached != 2 {
		t.Errorf("%d cells cached; want 2", again.Cached)
	}
	for i := range res.Runs {
		a, b := res.Runs[i], again.Runs[i]
		same := func(x, y float64) bool { return bits(x, y) || math.IsNaN(x) && math.IsNaN(y) } // JSON null is NaN
		if a.Scheduler != b.Scheduler || a.Seed != b.Seed || a.Placed != b.Placed || a.Failed != b.Failed || a.GPUs != b.GPUs ||
			!slices.EqualFunc(a.AllocCurve, b.AllocCurve, same) || !slices.EqualFunc(a.FragCurve, b.FragCurve, same) {
			t.Errorf("run %d from the cache differs: %s seed %d", i, b.Scheduler, b.Seed)
		}
	}
	// a corrupt cell runs again
	if err := os.WriteFile(openbCellPath(out, "default", 8), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r, err := RunOpenb(context.Background(), s, OpenbOptions{Out: out, Jobs: 1}); err != nil || r.Cached != 1 {
		t.Errorf("after corrupting a cell: %v, %d cached; want 1", err, r.Cached)
	}
	// another checkpoint (another seed: other weights) is another key
	s.Policies[0].Checkpoint = zeroGPUPolicy(t, 2)
	if r, err := RunOpenb(context.Background(), s, OpenbOptions{Out: out, Jobs: 1}); err != nil || r.Cached != 0 {
		t.Errorf("with another checkpoint: %v, %d cached; want 0", err, r.Cached)
	}
	// a checkpoint that is not a GPU policy fails before any run, naming the row
	s.Policies[0].Checkpoint = filepath.Join(out, "summary.md")
	if _, err := RunOpenb(context.Background(), s, OpenbOptions{}); err == nil || !strings.Contains(err.Error(), "policies[0] (zero)") {
		t.Errorf("bad checkpoint: %v; want an error naming policies[0] (zero)", err)
	}
}

func TestParseOpenbPolicies(t *testing.T) {
	base := "name: t\nmode: openb\ndir: x\npod_lists: [default]\nseeds: [42]\nschedulers: [fgd, best-fit]\n"
	for bad, key := range map[string]string{
		base + "policies:\n  - name: fgd\n    checkpoint: a\n":                                           "policies[0].name",
		base + "policies:\n  - name: p\n    checkpoint: a\n  - name: p\n    checkpoint: b\n":             "policies[1].name",
		base + "policies:\n  - name: bound\n    checkpoint: a\n":                                         "policies[0].name",
		base + "policies:\n  - name: p\n":                                                                "policies[0].checkpoint",
		base + "policies:\n  - name: a b\n    checkpoint: a\n":                                           "policies[0].name",
		base + "policies:\n  - name: p\n    checkpoint: a\n    guard: always\n":                          "policies[0].guard",
		base + "reference: dot-product\npolicies:\n  - name: p\n    checkpoint: a\n":                     "reference",
		base + "policies:\n  - name: p\n    checkpoint: a\n    typo: 1\n":                                "typo",
		base + "policies:\n  - name: p\n    lookahead: {horizon: 0, candidates: 2}\n":                    "policies[0].lookahead",
		base + "policies:\n  - name: p\n    checkpoint: a\n    lookahead: {horizon: 5, candidates: 2}\n": "policies[0]: lookahead with a checkpoint",
		base + "policies:\n  - name: p\n    lookahead: {horizon: 5, candidates: 2, typo: 1}\n":           "typo",
	} {
		_, err := ParseOpenbSpec([]byte(bad))
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%q: error %v; want one naming %s", bad, err, key)
		}
	}
	s, err := ParseOpenbSpec([]byte(base + "reference: best-fit\npolicies:\n  - name: p\n    checkpoint: a\n"))
	if err != nil || s.Reference != "best-fit" || len(s.Policies) != 1 || s.Policies[0].Checkpoint != "a" {
		t.Errorf("spec %+v, %v", s, err)
	}
}

// TestOpenbLookaheadRow: a lookahead row (30 nodes, where it leaves FGD) is sched.GPULookahead's run on the
// cell's arrivals, paired against fgd in the summary; its options are part
// of the cell's key.
func TestOpenbLookaheadRow(t *testing.T) {
	dir := smallOpenbDir(t, 30)
	spec := "name: look-test\nmode: openb\ndir: " + dir + "\npod_lists: [default]\nseeds: [3]\n" +
		"schedulers: [fgd, best-fit]\npaired: [best-fit]\npolicies:\n  - name: oracle\n    lookahead: {horizon: 8, candidates: 4}\n"
	s, err := ParseOpenbSpec([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	res, err := RunOpenb(context.Background(), s, OpenbOptions{Out: out, Jobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	w := openbtest.FromDir(t, dir)
	order, rank := sim.GPUArrivals(w, s.Inflate, 3)
	l, err := sched.NewGPULookahead(w, order, sched.LookaheadOptions{Horizon: 8, Candidates: 4, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	want, err := sim.RunGPUOrder(w, sim.NewGPUCluster(w, rank), l, order)
	if err != nil {
		t.Fatal(err)
	}
	got := res.Runs[2]
	if got.Scheduler != "oracle" || got.Placed != want.Placed || got.AllocPct != want.AllocPct {
		t.Errorf("row %s placed %d (%.4f%%); the lookahead run placed %d (%.4f%%)", got.Scheduler, got.Placed, got.AllocPct, want.Placed, want.AllocPct)
	}
	if got.AllocPct == res.Runs[0].AllocPct {
		t.Errorf("the oracle allocated FGD's %.4f%%: this cell no longer tells the rows apart", got.AllocPct)
	}
	sum, err := os.ReadFile(filepath.Join(out, "summary.md"))
	for _, want := range []string{"## Policies against fgd, paired by seed", "### best-fit (heuristic)",
		"### oracle (lookahead: horizon 8, 4 candidates, 0 samples)", "best-fit: 1 pod lists; below fgd"} {
		if err != nil || !strings.Contains(string(sum), want) {
			t.Errorf("summary lacks %q (%v):\n%s", want, err, sum)
		}
	}
	s.Policies[0].Lookahead.Horizon = 9
	if r, err := RunOpenb(context.Background(), s, OpenbOptions{Out: out, Jobs: 1}); err != nil || r.Cached != 0 {
		t.Errorf("another horizon: %v, %d cached; want a new run", err, r.Cached)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := RunOpenb(ctx, s, OpenbOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestOpenbPolicyAgainstFGD: with a reference other than FGD, the summary
// pairs the policies with the reference and, since FGD ran, with FGD too
// (issue 27's bar): the zero-correction policy over FGD's prior is FGD, so
// its Δ against FGD is 0 on every seed.
func TestOpenbPolicyAgainstFGD(t *testing.T) {
	dir, ckpt := smallOpenbDir(t, 30), zeroGPUPolicy(t, 1)
	spec := "name: policy-test\nmode: openb\ndir: " + dir + "\npod_lists: [default]\nseeds: [7, 8]\n" +
		"schedulers: [fgd, best-fit]\nreference: best-fit\npolicies:\n  - name: zero\n    checkpoint: " + ckpt + "\n"
	s, err := ParseOpenbSpec([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if _, err := RunOpenb(context.Background(), s, OpenbOptions{Out: out, Jobs: 1}); err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(out, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(sum)
	i, j := strings.Index(text, "## Policies against best-fit, paired by seed"), strings.Index(text, "## Policies against fgd, paired by seed")
	if i < 0 || j < i {
		t.Fatalf("want the table against best-fit, then the one against fgd:\n%s", text)
	}
	if !strings.Contains(text[j:], "| +0.00 ± 0.00 | +0.0% |") {
		t.Errorf("against fgd: want Δ 0 for the zero-correction policy:\n%s", text[j:])
	}
}
