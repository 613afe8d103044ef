package sweep

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// heuristicSweep is a heuristic-only synthetic sweep: 2 sizes x 2 seeds,
// so 4 evaluation cells of 2 schedulers each.
const heuristicSweep = `name: h
cluster:
  min_nodes: 3
  max_nodes: 5
  workload:
    pods_per_node: 10
  sim:
    autoscaler:
      enabled: false
eval:
  schedulers: [first-fit, kube-default]
  seeds: 2
  train: false
grid:
  eval.nodes: [3, 9]
`

// trainSweep trains a tiny policy per ppo.seed (two training cells) and
// evaluates each at two sizes: the grid over eval.nodes shares training.
const trainSweep = `name: t
cluster:
  min_nodes: 3
  max_nodes: 5
  max_steps: 64
  workload:
    pods_per_node: 10
ppo:
  n_envs: 2
  n_steps: 32
  batch_size: 32
  n_epochs: 1
  total_timesteps: 64
  eval_freq: 64
  eval_episodes: 1
  hidden: 8
eval:
  schedulers: [first-fit]
  seeds: 1
grid:
  ppo.seed: [1, 2]
  eval.nodes: [3, 4]
`

func mustSpec(t *testing.T, y string) *Spec {
	t.Helper()
	s, err := ParseSpec([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSweepCachesCells: a sweep writes its tables; run again with nothing
// changed it runs no cell and writes the same cells.csv; with one cell's
// result gone (an interrupted sweep) it runs that cell only.
func TestSweepCachesCells(t *testing.T) {
	out := t.TempDir()
	s := mustSpec(t, heuristicSweep)
	var sum bytes.Buffer
	o, err := Sweep(context.Background(), s, SweepOptions{Out: out, Jobs: 2, Summary: &sum})
	if err != nil {
		t.Fatal(err)
	}
	if o.Evaluated != 4 || o.Trained != 0 || o.Cached != 0 {
		t.Errorf("first run: %d evaluated, %d trained, %d cached; want 4, 0, 0", o.Evaluated, o.Trained, o.Cached)
	}
	csv := readFile(t, filepath.Join(out, CellsCSV))
	lines := strings.Split(strings.TrimSpace(csv), "\n")
	// 2 sizes x 2 seeds x (2 schedulers + the fluid relaxation + the
	// admission bound), plus the header
	if len(lines) != 17 || !strings.HasPrefix(lines[0], "eval.nodes,nodes,seed,workload,scheduler,") || !strings.HasPrefix(lines[1], "3,3,1,synthetic-1,first-fit,") {
		t.Errorf("cells.csv:\n%s", csv)
	}
	// the bound row has pods and unschedulable, every other column empty
	if len(lines) > 4 {
		f, filled := strings.Split(lines[4], ","), 0
		for _, v := range f {
			if v != "" {
				filled++
			}
		}
		if f[4] != AdmissionBound || filled != 7 { // 5 leading columns, pods, unschedulable
			t.Errorf("admission-bound row (%d filled): %s", filled, lines[4])
		}
	}
	md := readFile(t, filepath.Join(out, SummaryFile))
	if md != sum.String() || !strings.Contains(md, "h: 9 nodes, outside the training range") || !strings.Contains(md, "kube-default") || strings.Contains(md, AfterGrace.Header) {
		t.Errorf("summary.md (printed the same: %v):\n%s", md == sum.String(), md)
	}
	if y := readFile(t, filepath.Join(out, SpecFile)); !strings.Contains(y, "revision:") || !strings.Contains(y, "go_version:") || !strings.Contains(y, "key: eval.nodes") {
		t.Errorf("spec.yaml:\n%s", y)
	}

	for _, f := range []string{"all-unschedulable.png", "all-frag_exp_cpu.png", "all-bars.png"} {
		if b, err := os.ReadFile(filepath.Join(out, PlotsDir, f)); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
			t.Errorf("plot %s: not a PNG (%v)", f, err)
		}
	}
	o, err = Sweep(context.Background(), s, SweepOptions{Out: out, Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if o.Evaluated != 0 || o.Cached != 4 {
		t.Errorf("re-run: %d evaluated, %d cached; want 0, 4", o.Evaluated, o.Cached)
	}
	if again := readFile(t, filepath.Join(out, CellsCSV)); again != csv {
		t.Error("re-run changed cells.csv")
	}

	os.Remove(cellPath(out, o.Plan.Eval[1].Hash))
	o, err = Sweep(context.Background(), s, SweepOptions{Out: out, Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if o.Evaluated != 1 || o.Cached != 3 {
		t.Errorf("resumed: %d evaluated, %d cached; want 1, 3", o.Evaluated, o.Cached)
	}
	if again := readFile(t, filepath.Join(out, CellsCSV)); again != csv {
		t.Error("resumed sweep wrote a different cells.csv")
	}

	// a changed setting changes the hashes of the cells it determines
	s2 := mustSpec(t, strings.Replace(heuristicSweep, "pods_per_node: 10", "pods_per_node: 12", 1))
	o, err = Sweep(context.Background(), s2, SweepOptions{Out: out, Jobs: 2})
	if err != nil || o.Evaluated != 4 {
		t.Errorf("changed spec: %d evaluated (%v); want 4", o.Evaluated, err)
	}
}

// TestSweepTrainsOncePerTrainingCell: ppo.seed x eval.nodes trains two
// policies (not four) and evaluates each beside the heuristic; a re-run
// trains nothing.
func TestSweepTrainsOncePerTrainingCell(t *testing.T) {
	out := t.TempDir()
	s := mustSpec(t, trainSweep)
	o, err := Sweep(context.Background(), s, SweepOptions{Out: out, Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Plan.Train) != 2 || o.Trained != 2 || o.Evaluated != 4 {
		t.Fatalf("%d training cells, %d trained, %d evaluated; want 2, 2, 4", len(o.Plan.Train), o.Trained, o.Evaluated)
	}
	for _, c := range o.Plan.Train {
		if !exists(filepath.Join(out, trainDir, c.Hash, "progress.csv")) {
			t.Errorf("training cell %s has no progress.csv", c.Hash)
		}
	}
	if !exists(filepath.Join(out, PlotsDir, "learning-curves.png")) || !exists(filepath.Join(out, PlotsDir, "ppo.seed-2-unschedulable.png")) {
		t.Error("no learning curves, or no plot against size for ppo.seed=2")
	}
	csv := readFile(t, filepath.Join(out, CellsCSV))
	if n := strings.Count(csv, ",ppo,"); n != 4 {
		t.Errorf("%d ppo rows; want 4:\n%s", n, csv)
	}
	o, err = Sweep(context.Background(), s, SweepOptions{Out: out, Jobs: 2})
	if err != nil || o.Trained+o.Evaluated != 0 || o.Cached != 6 {
		t.Errorf("re-run: %d trained, %d evaluated, %d cached (%v); want 0, 0, 6", o.Trained, o.Evaluated, o.Cached, err)
	}
	// a training cell cut off before done.json (its folder has history) is
	// trained again from the start, replacing the folder
	os.Remove(filepath.Join(out, trainDir, o.Plan.Train[1].Hash, doneFile))
	o, err = Sweep(context.Background(), s, SweepOptions{Out: out, Jobs: 2})
	if err != nil || o.Trained != 1 || o.Evaluated != 0 {
		t.Errorf("after a cut-off training: %d trained, %d evaluated (%v); want 1, 0", o.Trained, o.Evaluated, err)
	}
}

// TestSweepShardsMerge: two shards into two folders, merged, give the
// unsharded sweep's cells.csv and summary.
func TestSweepShardsMerge(t *testing.T) {
	s := mustSpec(t, heuristicSweep)
	whole := t.TempDir()
	if _, err := Sweep(context.Background(), s, SweepOptions{Out: whole, Jobs: 1}); err != nil {
		t.Fatal(err)
	}
	var dirs []string
	total := 0
	for i := range 2 {
		d := t.TempDir()
		o, err := Sweep(context.Background(), s, SweepOptions{Out: d, Shard: i, Shards: 2})
		if err != nil {
			t.Fatal(err)
		}
		total += o.Evaluated
		if exists(filepath.Join(d, CellsCSV)) {
			t.Errorf("shard %d wrote cells.csv", i)
		}
		dirs = append(dirs, d)
	}
	if total != 4 {
		t.Errorf("shards evaluated %d cells; want 4", total)
	}
	merged := t.TempDir()
	if err := Merge(dirs[:1], merged, nil); err == nil || !strings.Contains(err.Error(), "a shard has not finished") {
		t.Errorf("merge of one shard: %v; want a missing-cell error", err)
	}
	if err := Merge(dirs, merged, nil); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{CellsCSV, SummaryFile} {
		if readFile(t, filepath.Join(merged, f)) != readFile(t, filepath.Join(whole, f)) {
			t.Errorf("merged %s differs from the unsharded one", f)
		}
	}
}

// TestSweepCheckpoint: eval.checkpoint (relative to the spec file)
// evaluates that policy instead of training.
func TestSweepCheckpoint(t *testing.T) {
	dir := t.TempDir()
	s := mustSpec(t, strings.Replace(trainSweep, "  ppo.seed: [1, 2]\n", "", 1))
	o, err := Sweep(context.Background(), s, SweepOptions{Out: filepath.Join(dir, "a"), Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	ckpt := policyOf(filepath.Join(dir, "a", trainDir, o.Plan.Train[0].Hash))
	os.Rename(ckpt, filepath.Join(dir, "policy.ckpt"))
	path := filepath.Join(dir, "spec.yaml")
	os.WriteFile(path, []byte(strings.Replace(heuristicSweep, "  train: false\n", "  checkpoint: policy.ckpt\n", 1)), 0o644)
	s2, err := ReadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	o, err = Sweep(context.Background(), s2, SweepOptions{Out: filepath.Join(dir, "b"), Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Plan.Train) != 0 || o.Evaluated != 4 || !strings.Contains(readFile(t, filepath.Join(dir, "b", CellsCSV)), ",ppo,") {
		t.Errorf("%d training cells, %d evaluated, or no ppo rows", len(o.Plan.Train), o.Evaluated)
	}
	os.WriteFile(path, []byte(strings.Replace(heuristicSweep, "  train: false\n", "  checkpoint: nowhere.ckpt\n", 1)), 0o644)
	s3, _ := ReadSpec(path)
	if _, err := Sweep(context.Background(), s3, SweepOptions{Out: filepath.Join(dir, "c")}); err == nil || !strings.Contains(err.Error(), "eval.checkpoint") {
		t.Errorf("missing checkpoint: %v; want an error naming eval.checkpoint", err)
	}
}

// TestSweepTrace: a sweep over a trace's load factor trains once per load
// factor on the training and validation windows (the sizes share it),
// replays every test window, names the data by its manifest's hash, and a
// re-run does no work.
func TestSweepTrace(t *testing.T) {
	s, out := smallTraceSpec(t, `name: tr
trace:
  dir: TRACE
windows:
  train: [0h-1h, 1h-2h]
  validation: [2h-3h]
  test: [4h-5h, 5h-6h]
cluster:
  min_nodes: 3
  max_nodes: 5
  max_steps: 64
ppo:
  n_envs: 2
  n_steps: 32
  batch_size: 32
  n_epochs: 1
  hidden: 8
  total_timesteps: 64
  eval_freq: 64
  eval_episodes: 1
eval:
  schedulers: [first-fit]
  seeds: 1
grid:
  trace.load_factor: [1, 1.3]
  eval.nodes: [3, 6]
`)
	o, err := Sweep(context.Background(), s, SweepOptions{Out: out, Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	// 2 load factors x 2 sizes x 1 seed x 2 test windows
	if o.Trained != 2 || o.Evaluated != 8 {
		t.Errorf("%d trained, %d evaluated; want 2, 8", o.Trained, o.Evaluated)
	}
	csv := readFile(t, filepath.Join(out, CellsCSV))
	if n := strings.Count(csv, "\n"); n != 1+8*3 || !strings.Contains(csv, "1.3,6,6,1,4h-5h,ppo,") {
		t.Errorf("cells.csv (%d lines):\n%s", n, csv)
	}
	if y := readFile(t, filepath.Join(out, SpecFile)); !strings.Contains(y, "data_manifest_sha256:") {
		t.Errorf("spec.yaml has no manifest hash:\n%s", y)
	}
	o, err = Sweep(context.Background(), s, SweepOptions{Out: out, Jobs: 2})
	if err != nil || o.Trained+o.Evaluated != 0 {
		t.Errorf("re-run: %d trained, %d evaluated (%v); want no work", o.Trained, o.Evaluated, err)
	}
}

// TestSweepInterrupted: a sweep cancelled after its second cell keeps the
// cells it finished; the next run runs the rest only and writes the
// cells.csv of an uninterrupted sweep. A corrupt cell file (a crash can
// leave one) runs again.
func TestSweepInterrupted(t *testing.T) {
	s := mustSpec(t, heuristicSweep)
	whole := t.TempDir()
	if _, err := Sweep(context.Background(), s, SweepOptions{Out: whole, Jobs: 1}); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	done := 0
	_, err := Sweep(ctx, s, SweepOptions{Out: out, Jobs: 1, CellDone: func(string) {
		if done++; done == 2 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted sweep: %v; want context.Canceled", err)
	}
	if exists(filepath.Join(out, CellsCSV)) {
		t.Error("an interrupted sweep wrote cells.csv")
	}
	o, err := Sweep(context.Background(), s, SweepOptions{Out: out, Jobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if o.Cached != 2 || o.Evaluated != 2 {
		t.Errorf("resumed: %d cached, %d evaluated; want 2, 2", o.Cached, o.Evaluated)
	}
	if readFile(t, filepath.Join(out, CellsCSV)) != readFile(t, filepath.Join(whole, CellsCSV)) {
		t.Error("the resumed sweep's cells.csv differs from an uninterrupted one")
	}
	os.WriteFile(cellPath(out, o.Plan.Eval[0].Hash), []byte(`[{"nodes":`), 0o644)
	if o, err = Sweep(context.Background(), s, SweepOptions{Out: out, Jobs: 1}); err != nil || o.Evaluated != 1 {
		t.Errorf("corrupt cell: %d evaluated (%v); want it run again", o.Evaluated, err)
	}
}

// TestSweepGraceColumn: a sweep whose simulator runs a grace period gets the
// AfterGrace column in its tables, with the mean of cells.csv's
// unschedulable_after_grace, never above the count at the window's end; the
// bound rows read n/a there. (sim's TestGraceByHand has a grace period that
// places some of the pods; here the pods left are long-running services.)
// A sweep without one has no such column (TestSweepCachesCells's tables).
func TestSweepGraceColumn(t *testing.T) {
	s, out := smallTraceSpec(t, `name: g
trace:
  dir: TRACE
  load_factor: 2.6
windows:
  train: [0h-1h]
  validation: [2h-3h]
  test: [4h-5h]
cluster:
  min_nodes: 3
  max_nodes: 5
  sim:
    grace_ms: 1800000
eval:
  schedulers: [first-fit]
  seeds: 2
  train: false
grid:
  eval.nodes: [3]
`)
	if _, err := Sweep(context.Background(), s, SweepOptions{Out: out, Jobs: 1}); err != nil {
		t.Fatal(err)
	}
	// first-fit's rows, read as sweep compare reads them
	end, err := readSide(Side{Path: out, Scheduler: "first-fit"}, "unschedulable")
	if err != nil {
		t.Fatal(err)
	}
	after, err := readSide(Side{Path: out, Scheduler: "first-fit"}, AfterGrace.Key)
	if err != nil {
		t.Fatal(err)
	}
	var ne, na float64 // summed over the seeds
	for k, e := range end.vals {
		if a := after.vals[k]; a > e {
			t.Fatalf("first-fit, %s: unschedulable %v, after grace %v", k, e, a)
		}
		ne, na = ne+e, na+after.vals[k]
	}
	if ne == 0 || len(end.vals) != 2 {
		t.Fatalf("first-fit: %d rows, %v pods left pending; want 2 rows (seeds) and some pods, or the sweep does not test the column", len(end.vals), ne)
	}
	na /= 2
	md := readFile(t, filepath.Join(out, SummaryFile))
	header, row, bound := "", "", ""
	for _, l := range strings.Split(md, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) > 0 && f[0] == "scheduler" && header == "":
			header = l
		case len(f) > 0 && f[0] == "first-fit" && row == "":
			row = l
		case len(f) > 0 && f[0] == FluidBound && bound == "":
			bound = l
		}
	}
	hf, rf, bf := strings.Fields(header), strings.Fields(row), strings.Fields(bound)
	if len(hf) == 0 || hf[len(hf)-1] != AfterGrace.Header || len(rf) == 0 || len(bf) == 0 {
		t.Fatalf("summary.md has no %q column last:\n%s", AfterGrace.Header, md)
	}
	if want := strconv.FormatFloat(na, 'f', 1, 64) + "±"; !strings.HasPrefix(rf[len(rf)-1], want) || bf[len(bf)-1] != "n/a" {
		t.Errorf("last column: first-fit %q (want %s...), %s %q (want n/a)", rf[len(rf)-1], want, FluidBound, bf[len(bf)-1])
	}
}

// smallTraceSpec writes spec (TRACE standing for the path of a fresh
// smallTrace, relative to the spec's folder) into a temporary folder, reads
// it back, and returns it with an output folder beside it.
func smallTraceSpec(t *testing.T, spec string) (*Spec, string) {
	t.Helper()
	trace := smallTrace(t)
	dir := t.TempDir()
	rel, err := filepath.Rel(dir, trace)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "sweep.yaml")
	if err := os.WriteFile(path, []byte(strings.Replace(spec, "TRACE", rel, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ReadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	return s, filepath.Join(dir, "out")
}
