package main

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/agent"
	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/model"
	"github.com/kubesim/kubesim/sched"
)

// TestReplayOpenb converts the openb default trace kept in testdata and
// replays it under fgd: one JSON line with both curves of 131 numbers;
// the same seed gives the same bytes.
func TestReplayOpenb(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "openb")
	if code, _, stderr := runCLI(t, "convert", "--in", "../../dataset/testdata/openb/default", "--out", trace); code != 0 {
		t.Fatalf("convert: exit %d: %s", code, stderr)
	}
	args := []string{"replay", "--trace", trace, "--scheduler", "fgd", "--inflate", "1.3", "--seed", "42", "--json"}
	code, out, stderr := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("replay: exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 1 {
		t.Fatalf("%d lines; want 1", len(lines))
	}
	var row struct {
		Scheduler string     `json:"scheduler"`
		Alloc     []*float64 `json:"gpu_alloc_curve"`
		Frag      []*float64 `json:"gpu_frag_curve"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &row); err != nil {
		t.Fatal(err)
	}
	if row.Scheduler != "fgd" || len(row.Alloc) != 131 || len(row.Frag) != 131 {
		t.Fatalf("scheduler %q, %d and %d points; want fgd, 131 and 131", row.Scheduler, len(row.Alloc), len(row.Frag))
	}
	if row.Alloc[100] == nil || *row.Alloc[100] < 90 || *row.Alloc[100] > 100 {
		t.Errorf("allocation at 100%% arrived = %v; want FGD's mid-90s", row.Alloc[100])
	}
	if _, again, _ := runCLI(t, args...); again != out {
		t.Error("same seed, different output")
	}
	for _, bad := range [][]string{
		{"replay", "--trace", trace, "--window", "day1"},
		{"replay", "--trace", trace, "--scheduler", "tetris"},
		{"replay", "--trace", trace, "--inflate", "-1"},
		{"replay", "--inflate", "1.3"},
	} {
		if code, _, _ := runCLI(t, bad...); code != 2 {
			t.Errorf("%v: exit %d; want 2", bad, code)
		}
	}
}

// TestEvalOpenb evaluates a fresh GPU policy whose correction is zero over
// FGD's prior on the openb default trace: eval prints the fgd row and the
// ppo row, each with 131-point curves; a CPU/memory checkpoint is refused
// with the feature widths.
func TestEvalOpenb(t *testing.T) {
	if testing.Short() {
		t.Skip("a policy's run on 1,213 nodes")
	}
	dir := t.TempDir()
	trace := filepath.Join(dir, "openb")
	if code, _, stderr := runCLI(t, "convert", "--in", "../../dataset/testdata/openb/default", "--out", trace); code != 0 {
		t.Fatalf("convert: exit %d: %s", code, stderr)
	}
	ec := env.DefaultGPUConfig()
	ec.Prior, ec.PriorScale = sched.NameFGD, 5
	data, _ := json.Marshal(ec)
	ckpt := filepath.Join(dir, "gpu.ckpt")
	pol, err := model.New(model.Config{NodeFeatures: env.GPUNodeFeatures, PodFeatures: env.GPUPodFeatures, Hidden: 8, Rounds: 1, Prior: true, ZeroInit: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := pol.Save(ckpt, map[string]string{agent.MetaGPUEnv: string(data)}); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI(t, "eval", "--checkpoint", ckpt, "--trace", trace, "--scheduler", "fgd", "--inflate", "0.5", "--seed", "42", "--json")
	if code != 0 {
		t.Fatalf("eval: exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines; want fgd and ppo", len(lines))
	}
	var fgd, ppo struct {
		Scheduler string     `json:"scheduler"`
		Pods      int        `json:"pods"`
		Alloc     []*float64 `json:"gpu_alloc_curve"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &fgd); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &ppo); err != nil {
		t.Fatal(err)
	}
	if fgd.Scheduler != "fgd" || ppo.Scheduler != "ppo" || len(ppo.Alloc) != 131 || ppo.Pods != fgd.Pods {
		t.Fatalf("rows %q (%d pods) and %q (%d pods, %d points); want fgd and ppo on the same arrivals, 131 points", fgd.Scheduler, fgd.Pods, ppo.Scheduler, ppo.Pods, len(ppo.Alloc))
	}
	// a zero correction over FGD's prior (ties by rank) is FGD: the same
	// curve (docs/gpu.md: also at 1.3x, bit for bit)
	for k := range ppo.Alloc {
		if (ppo.Alloc[k] == nil) != (fgd.Alloc[k] == nil) || ppo.Alloc[k] != nil && *ppo.Alloc[k] != *fgd.Alloc[k] {
			t.Fatalf("allocation at %d%%: ppo %v, fgd %v; want equal", k, ppo.Alloc[k], fgd.Alloc[k])
		}
	}
	// --by-model: the zero correction leaves FGD's node nowhere, and its
	// diagnosis is FGD's, model for model
	code, out, stderr = runCLI(t, "eval", "--checkpoint", ckpt, "--trace", trace, "--inflate", "0.5", "--seed", "42", "--by-model", "--json")
	if code != 0 {
		t.Fatalf("eval --by-model: exit %d: %s", code, stderr)
	}
	lines = strings.Split(strings.TrimSpace(out), "\n")
	var diag [2]agent.GPUDiag
	for k := range diag {
		if len(lines) != 2 {
			t.Fatalf("--by-model: %d lines; want fgd and ppo", len(lines))
		}
		if err := json.Unmarshal([]byte(lines[k]), &diag[k]); err != nil {
			t.Fatal(err)
		}
	}
	if diag[0].Scheduler != "fgd" || diag[1].Scheduler != "ppo" || diag[1].OffSelect != 0 || diag[1].Decisions == 0 ||
		!reflect.DeepEqual(diag[0].Models, diag[1].Models) || len(diag[0].Models) == 0 {
		t.Errorf("--by-model: %+v; want fgd and a ppo row equal to it, no decision off FGD's node", diag)
	}
	code, out, _ = runCLI(t, "eval", "--checkpoint", ckpt, "--trace", trace, "--inflate", "0.5", "--seed", "42", "--by-model")
	if code != 0 || !strings.Contains(out, "0 of") || !strings.Contains(out, "by GPU model") {
		t.Errorf("--by-model table: exit %d:\n%s", code, out)
	}
	if code, _, stderr = runCLI(t, "eval", "--checkpoint", ckpt, "--trace", trace, "--by-model", "--scheduler", "best-fit"); code != 2 || !strings.Contains(stderr, "--scheduler") {
		t.Errorf("--by-model --scheduler: exit %d, %q; want a usage error", code, stderr)
	}
	// --scarce-model: T4 made scarce; an unknown model is a usage error
	// that names the node models
	code, out, stderr = runCLI(t, "eval", "--checkpoint", ckpt, "--trace", trace, "--inflate", "0.5", "--seed", "42", "--by-model", "--scarce-model", "T4", "--json")
	if code != 0 {
		t.Fatalf("eval --scarce-model T4: exit %d: %s", code, stderr)
	}
	var scarce agent.GPUDiag
	if err := json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &scarce); err != nil {
		t.Fatal(err)
	}
	if scarce.Scheduler != "fgd" || reflect.DeepEqual(scarce.Models, diag[0].Models) {
		t.Errorf("--scarce-model T4: fgd's models %+v, as without a scarce model", scarce.Models)
	}
	if code, _, stderr = runCLI(t, "eval", "--checkpoint", ckpt, "--trace", trace, "--scarce-model", "H100"); code != 2 || !strings.Contains(stderr, "T4") || !strings.Contains(stderr, "H100") {
		t.Errorf("--scarce-model H100: exit %d, %q; want a usage error naming the node models", code, stderr)
	}
	cpu := filepath.Join(dir, "cpu.ckpt")
	cp, err := model.New(model.Config{NodeFeatures: env.NodeFeatures, PodFeatures: env.PodFeatures, Hidden: 8})
	if err != nil {
		t.Fatal(err)
	}
	if err := cp.Save(cpu, nil); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI(t, "eval", "--checkpoint", cpu, "--trace", trace, "--scheduler", "fgd", "--seed", "42")
	if code == 0 || !strings.Contains(stderr, "CPU/memory policy") || !strings.Contains(stderr, "17 and 16") {
		t.Errorf("eval of a CPU/memory checkpoint on an openb trace: exit %d, %q; want an error naming the widths", code, stderr)
	}
}
