package env

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/sim"
)

// TestScarceWorkloadHandMade: two models, model 0 with 2 nodes of 4 GPUs
// and model 1 with 1 node of 2 GPUs (10 GPUs in all), and 12 pods of 1
// GPU, one of 4 GPUs (fits only model 0's nodes), one CPU-only pod and one
// already pinned to model 1: demand 17 GPUs. Whatever model is drawn, the
// pinned pods reach the target f x capacity/10 x 17 GPUs by less than one
// pod, each pinned pod allows that model alone, the 4-GPU pod is never
// pinned to model 1, and the other pods are untouched.
func TestScarceWorkloadHandMade(t *testing.T) {
	w := &sim.GPUWorkload{Name: "hand", Models: []string{"A", "B"},
		Nodes: []sim.GPUNodeSpec{
			{Name: "a1", CPU: 64000, Mem: 262144, GPUs: 4, Model: 0},
			{Name: "a2", CPU: 64000, Mem: 262144, GPUs: 4, Model: 0},
			{Name: "b1", CPU: 32000, Mem: 131072, GPUs: 2, Model: 1},
			{Name: "cpu", CPU: 32000, Mem: 131072, GPUs: 0, Model: -1},
		}}
	for i := range 12 {
		w.Pods = append(w.Pods, sim.GPUPodSpec{Name: "one" + string(rune('a'+i)), CPU: 1000, Mem: 1024, GPU: sim.GPURequest{Count: 1, Milli: sim.GPUMilli}})
	}
	w.Pods = append(w.Pods,
		sim.GPUPodSpec{Name: "four", CPU: 1000, Mem: 1024, GPU: sim.GPURequest{Count: 4, Milli: sim.GPUMilli}},
		sim.GPUPodSpec{Name: "cpuonly", CPU: 1000, Mem: 1024},
		sim.GPUPodSpec{Name: "pinned", CPU: 1000, Mem: 1024, GPU: sim.GPURequest{Count: 1, Milli: sim.GPUMilli, Models: 1 << 1}},
	)
	if err := w.Validate(); err != nil {
		t.Fatal(err)
	}
	before := slices.Clone(w.Pods)
	seen := map[int8]int{}
	for seed := range uint64(400) {
		got, draw := ScarceWorkload(w, seed, ScarceDraw{})
		if len(draw) != 1 {
			t.Fatalf("seed %d: %d models drawn; the zero draw is one", seed, len(draw))
		}
		s := draw[0]
		seen[s.Model]++
		wantGPUs := map[int8]int64{0: 8, 1: 2}[s.Model]
		if s.GPUs != 10 || s.ModelGPUs != wantGPUs {
			t.Fatalf("seed %d: model %d with %d of %d GPUs; want %d of 10", seed, s.Model, s.ModelGPUs, s.GPUs, wantGPUs)
		}
		if !(s.F >= 0.5 && s.F < 1.3) {
			t.Fatalf("seed %d: f = %v, want [0.5, 1.3)", seed, s.F)
		}
		if want := int64(s.F * float64(wantGPUs) / 10 * 17000); s.TargetMilli != want {
			t.Fatalf("seed %d: target %d milli; want %d", seed, s.TargetMilli, want)
		}
		var pinned int64
		var n int
		for i := range got.Pods {
			p, q := got.Pods[i], w.Pods[i]
			if p == q {
				continue
			}
			if q.GPU.Count == 0 || q.GPU.Models != 0 || p.GPU.Models != 1<<uint(s.Model) {
				t.Fatalf("seed %d: pod %s changed from %+v to %+v", seed, q.Name, q.GPU, p.GPU)
			}
			if q.Name == "four" && s.Model == 1 {
				t.Fatalf("seed %d: the 4-GPU pod pinned to the 2-GPU model", seed)
			}
			p.GPU.Models = 0
			if p != q {
				t.Fatalf("seed %d: pod %s changed beyond its models", seed, q.Name)
			}
			pinned += q.GPU.Total()
			n++
		}
		if pinned != s.PinnedMilli || n != s.Pods {
			t.Fatalf("seed %d: %d pods, %d milli pinned; the draw says %d, %d", seed, n, pinned, s.Pods, s.PinnedMilli)
		}
		// the target is reached by less than one pod (4 GPUs at most), or
		// every pod that could be pinned is
		if pinned < s.TargetMilli || pinned >= s.TargetMilli+4000 {
			if all := map[int8]int64{0: 16000, 1: 12000}[s.Model]; pinned == all {
				continue // every pod that fits the model, all of them pinned
			}
			t.Fatalf("seed %d: %d milli pinned for a target of %d", seed, pinned, s.TargetMilli)
		}
	}
	if !reflect.DeepEqual(w.Pods, before) {
		t.Error("ScarceWorkload changed the workload it was given")
	}
	// the model is drawn in proportion to its GPUs: 8 of 10 for model 0
	if f := float64(seen[0]) / 400; math.Abs(f-0.8) > 0.06 {
		t.Errorf("model 0 drawn in %.3f of 400 seeds; want about 0.8", f)
	}
}

// TestScarceWorkloadOpenb: on the default list and the whole openb
// cluster the pinned demand is the drawn share of the list's GPU demand
// (to within one pod), the draw is a function of the seed, and the
// episodes of an environment with scarce_rate are scarce in that share of
// its seeds; scarce_rate 0 keeps the workload's own pods.
func TestScarceWorkloadOpenb(t *testing.T) {
	w := openbDefault(t)
	var demand int64
	for i := range w.Pods {
		demand += w.Pods[i].GPU.Total()
	}
	models := map[int8]bool{}
	for seed := range uint64(20) {
		got, draw := ScarceWorkload(w, seed, ScarceDraw{})
		s := draw[0]
		models[s.Model] = true
		share := float64(s.PinnedMilli) / float64(demand)
		want := s.F * float64(s.ModelGPUs) / float64(s.GPUs)
		if share < want-1e-9 || share > want+8000/float64(demand) {
			t.Errorf("seed %d: pinned %.4f of the demand; want %.4f (model %d, f %.2f)", seed, share, want, s.Model, s.F)
		}
		again, d2 := ScarceWorkload(w, seed, ScarceDraw{Models: 1, FMax: 1.3})
		if len(d2) != 1 || d2[0] != s || !reflect.DeepEqual(again.Pods, got.Pods) {
			t.Fatalf("seed %d: two draws differ", seed)
		}
		if err := got.Validate(); err != nil {
			t.Fatal(err)
		}
	}
	if len(models) < 2 {
		t.Errorf("20 seeds drew models %v; want several", models)
	}
	var scarce int
	for seed := range uint64(200) {
		if got := withScarce(w, 0.5, ScarceDraw{}, seed); got != w {
			scarce++
		}
	}
	if scarce < 80 || scarce > 120 {
		t.Errorf("scarce_rate 0.5: %d of 200 episodes scarce", scarce)
	}
	if withScarce(w, 0, ScarceDraw{}, 3) != w {
		t.Error("scarce_rate 0: not the workload itself")
	}
	for key, set := range map[string]func(*GPUConfig){
		"scarce_rate":   func(c *GPUConfig) { c.ScarceRate = 1.5 },
		"scarce_models": func(c *GPUConfig) { c.ScarceModels = -1 },
		"scarce_f_max":  func(c *GPUConfig) { c.ScarceFMax = 0.4 },
	} {
		bad := DefaultGPUConfig()
		set(&bad)
		if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("bad %s: error %v", key, err)
		}
	}
}

// TestScarceWorkloadSeveralModels: three models of 8, 4 and 2 GPUs on
// three nodes, 40 one-GPU pods and 4 two-GPU pods (48 GPUs asked of 14).
// With scarce_models 3 and scarce_f_max 2, each draw names 1-3 distinct
// models, k about uniform over 400 seeds; each model's f lies in [0.5, 2)
// and its pinned pods reach its own target (f x its GPUs/14 x 48) by less
// than one pod; every changed pod is a GPU pod pinned to one drawn model
// alone, and the counts add up.
func TestScarceWorkloadSeveralModels(t *testing.T) {
	w := &sim.GPUWorkload{Name: "three", Models: []string{"A", "B", "C"},
		Nodes: []sim.GPUNodeSpec{
			{Name: "a", CPU: 64000, Mem: 262144, GPUs: 8, Model: 0},
			{Name: "b", CPU: 64000, Mem: 262144, GPUs: 4, Model: 1},
			{Name: "c", CPU: 64000, Mem: 262144, GPUs: 2, Model: 2},
		}}
	for i := range 44 {
		n := int8(1)
		if i >= 40 {
			n = 2
		}
		w.Pods = append(w.Pods, sim.GPUPodSpec{Name: fmt.Sprintf("p%d", i), CPU: 1000, Mem: 1024, GPU: sim.GPURequest{Count: n, Milli: sim.GPUMilli}})
	}
	if err := w.Validate(); err != nil {
		t.Fatal(err)
	}
	capm := map[int8]int64{0: 8, 1: 4, 2: 2}
	ks := map[int]int{}
	for seed := range uint64(400) {
		got, draw := ScarceWorkload(w, seed, ScarceDraw{Models: 3, FMax: 2})
		ks[len(draw)]++
		if len(draw) < 1 || len(draw) > 3 {
			t.Fatalf("seed %d: %d models drawn", seed, len(draw))
		}
		pinned := map[int8]int64{}
		pods := map[int8]int{}
		for i := range got.Pods {
			p, q := got.Pods[i], w.Pods[i]
			if p == q {
				continue
			}
			k := slices.IndexFunc(draw, func(s Scarce) bool { return p.GPU.Models == 1<<uint(s.Model) })
			if k < 0 {
				t.Fatalf("seed %d: pod %s pinned to models %b, none drawn alone", seed, q.Name, p.GPU.Models)
			}
			pinned[draw[k].Model] += q.GPU.Total()
			pods[draw[k].Model]++
		}
		for j, s := range draw {
			for _, o := range draw[:j] {
				if o.Model == s.Model {
					t.Fatalf("seed %d: model %d drawn twice", seed, s.Model)
				}
			}
			if !(s.F >= 0.5 && s.F < 2) {
				t.Fatalf("seed %d: f = %v, want [0.5, 2)", seed, s.F)
			}
			if want := int64(s.F * float64(capm[s.Model]) / 14 * 48000); s.TargetMilli != want || s.ModelGPUs != capm[s.Model] || s.GPUs != 14 {
				t.Fatalf("seed %d: %+v; want target %d", seed, s, want)
			}
			if pinned[s.Model] != s.PinnedMilli || pods[s.Model] != s.Pods {
				t.Fatalf("seed %d: model %d: %d pods, %d milli pinned; the draw says %d, %d", seed, s.Model, pods[s.Model], pinned[s.Model], s.Pods, s.PinnedMilli)
			}
			// a target missed only when every pod is pinned (all 48 GPUs; every
			// pod fits every model)
			if s.PinnedMilli < s.TargetMilli {
				var all int64
				for _, v := range pinned {
					all += v
				}
				if all != 48000 {
					t.Fatalf("seed %d: model %d pinned %d milli of a target of %d with pods left", seed, s.Model, s.PinnedMilli, s.TargetMilli)
				}
			}
			if s.PinnedMilli >= s.TargetMilli+2000 {
				t.Fatalf("seed %d: model %d pinned %d milli, past its target %d by a pod or more", seed, s.Model, s.PinnedMilli, s.TargetMilli)
			}
		}
	}
	for k := 1; k <= 3; k++ {
		if ks[k] < 100 || ks[k] > 170 {
			t.Errorf("%d models drawn in %d of 400 seeds; want about a third", k, ks[k])
		}
	}
}

// TestScarceModelAndUniformPick: ScarceModel pins to the model it is given
// at the factor it is given (the hand-made two-model workload of
// TestScarceWorkloadHandMade: model 1, 2 of 10 GPUs, f 1.2 of 17 GPUs
// asked: a target of 4,080 milli, reached by 5 one-GPU pods, none of them
// the 4-GPU pod), and a model no node has pins nothing; a uniform pick
// draws the 2-GPU model in about half of 400 seeds, where a pick in
// proportion to GPUs draws it in about a fifth.
func TestScarceModelAndUniformPick(t *testing.T) {
	w := &sim.GPUWorkload{Name: "hand", Models: []string{"A", "B", "C"},
		Nodes: []sim.GPUNodeSpec{
			{Name: "a1", CPU: 64000, Mem: 262144, GPUs: 4, Model: 0},
			{Name: "a2", CPU: 64000, Mem: 262144, GPUs: 4, Model: 0},
			{Name: "b1", CPU: 32000, Mem: 131072, GPUs: 2, Model: 1},
		}}
	for i := range 12 {
		w.Pods = append(w.Pods, sim.GPUPodSpec{Name: fmt.Sprintf("one%d", i), CPU: 1000, Mem: 1024, GPU: sim.GPURequest{Count: 1, Milli: sim.GPUMilli}})
	}
	w.Pods = append(w.Pods, sim.GPUPodSpec{Name: "four", CPU: 1000, Mem: 1024, GPU: sim.GPURequest{Count: 4, Milli: sim.GPUMilli}},
		sim.GPUPodSpec{Name: "pinned", CPU: 1000, Mem: 1024, GPU: sim.GPURequest{Count: 1, Milli: sim.GPUMilli, Models: 1 << 1}})
	if err := w.Validate(); err != nil {
		t.Fatal(err)
	}
	for seed := range uint64(20) {
		got, s := ScarceModel(w, seed, 1, 1.2)
		if s.Model != 1 || s.F != 1.2 || s.TargetMilli != 4080 || s.Pods != 5 || s.PinnedMilli != 5000 {
			t.Fatalf("seed %d: %+v; want model 1, target 4080, 5 pods of 1,000 milli", seed, s)
		}
		var n int
		for i := range got.Pods {
			if got.Pods[i] != w.Pods[i] {
				if w.Pods[i].Name == "four" || got.Pods[i].GPU.Models != 1<<1 {
					t.Fatalf("seed %d: pod %s changed to %+v", seed, w.Pods[i].Name, got.Pods[i].GPU)
				}
				n++
			}
		}
		if n != 5 {
			t.Fatalf("seed %d: %d pods changed; want 5", seed, n)
		}
	}
	if got, s := ScarceModel(w, 1, 2, 1.2); s.Pods != 0 || !reflect.DeepEqual(got.Pods, w.Pods) {
		t.Errorf("a model without nodes: %+v", s)
	}
	if _, s, err := ScarceModelNamed(w, 3, "B", 1.2); err != nil || s.Model != 1 || s.Pods != 5 {
		t.Errorf("model B by name: %+v, %v", s, err)
	}
	for _, bad := range []struct {
		name string
		f    float64
		want string
	}{{"C", 1.2, "A, B"}, {"H100", 1.2, "H100"}, {"A", 0, "factor"}} {
		if _, _, err := ScarceModelNamed(w, 3, bad.name, bad.f); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("model %s at %v: error %v; want it to name %q", bad.name, bad.f, err, bad.want)
		}
	}
	count := func(d ScarceDraw) int {
		n := 0
		for seed := range uint64(400) {
			if _, ds := ScarceWorkload(w, seed, d); ds[0].Model == 1 {
				n++
			}
		}
		return n
	}
	if n := count(ScarceDraw{Uniform: true}); n < 170 || n > 230 {
		t.Errorf("uniform pick: the 2-GPU model drawn in %d of 400 seeds; want about 200", n)
	}
	if n := count(ScarceDraw{}); n < 55 || n > 105 {
		t.Errorf("pick by GPUs: the 2-GPU model drawn in %d of 400 seeds; want about 80", n)
	}
}
