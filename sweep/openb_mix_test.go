package sweep

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/internal/openbtest"
	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

func TestParseOpenbMix(t *testing.T) {
	base := "name: m\nmode: openb\ndir: x\npod_lists: [default]\nseeds: [1]\nschedulers: [fgd]\n"
	s, err := ParseOpenbSpec([]byte(base + "mix: {class: cpu, share: 0.5}\n"))
	if err != nil || s.Mix == nil || s.Mix.class() != env.MixCPU || s.Mix.Share != 0.5 {
		t.Fatalf("mix cpu 0.5: %+v, %v", s, err)
	}
	for _, c := range []struct{ mix, key string }{
		{"{class: gpu, share: 0.5}", "mix.class"},
		{"{class: cpu, share: 0}", "mix.share"},
		{"{class: cpu, share: 1.5}", "mix.share"},
		{"{class: cpu}", "mix.share"},
		{"{class: cpu, share: 0.5, rate: 1}", "rate"},
	} {
		if _, err := ParseOpenbSpec([]byte(base + "mix: " + c.mix + "\n")); err == nil || !strings.Contains(err.Error(), c.key) {
			t.Errorf("mix %s: %v; want an error naming %s", c.mix, err, c.key)
		}
	}
}

// TestOpenbMix: a cell of a spec with a mix is the run, by hand, of the
// scheduler on env.MixWorkload of the pod list at the cell's seed, which
// differs from the unshifted run; the mix is part of the cell's key and
// the summary says the lists are shifted.
func TestOpenbMix(t *testing.T) {
	dir := smallOpenbDir(t, 30)
	spec := "name: mix-test\nmode: openb\ndir: " + dir + "\npod_lists: [default]\nseeds: [7]\nschedulers: [fgd]\n"
	plain, err := ParseOpenbSpec([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	mixed, err := ParseOpenbSpec([]byte(spec + "mix: {class: cpu, share: 0.5}\n"))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	res, err := RunOpenb(context.Background(), mixed, OpenbOptions{Out: out})
	if err != nil {
		t.Fatal(err)
	}
	w := openbtest.FromDir(t, dir)
	run := func(w *sim.GPUWorkload) sim.GPUResult {
		order, rank := sim.GPUArrivals(w, mixed.Inflate, 7)
		sc, err := sched.NewGPU("fgd", 7)
		if err != nil {
			t.Fatal(err)
		}
		r, err := sim.RunGPUOrder(w, sim.NewGPUCluster(w, rank), sc, order)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	bits := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
	want, unshifted := run(env.MixWorkload(w, env.MixCPU, 0.5, 7)), run(w)
	got := res.Runs[0]
	if got.Pods != want.Pods || got.Placed != want.Placed || !slices.EqualFunc(got.AllocCurve, want.AllocCurve, bits) {
		t.Errorf("mixed cell: %d pods, %d placed; want the run on env.MixWorkload: %d, %d", got.Pods, got.Placed, want.Pods, want.Placed)
	}
	cpuOnly := func(w *sim.GPUWorkload) (n int) {
		for _, p := range w.Pods {
			if env.PodClass(p.GPU) == env.MixCPU {
				n++
			}
		}
		return n
	}
	if m := env.MixWorkload(w, env.MixCPU, 0.5, 7); cpuOnly(m) <= cpuOnly(w) {
		t.Fatalf("the shift raised the CPU-only pods from %d to %d: the test would not see a mix", cpuOnly(w), cpuOnly(m))
	}
	if got.Pods == unshifted.Pods && slices.EqualFunc(got.AllocCurve, unshifted.AllocCurve, bits) {
		t.Error("the mixed cell equals the unshifted run")
	}
	pl, err := planOpenb(plain)
	if err != nil {
		t.Fatal(err)
	}
	if pl.cellKey(plain, "default", 7) == pl.cellKey(mixed, "default", 7) {
		t.Error("the mix is not part of the cell's key")
	}
	sum, err := os.ReadFile(filepath.Join(out, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(sum), "shifted toward its own cpu pods") {
		t.Errorf("the summary does not say the lists are shifted:\n%s", sum)
	}
}
