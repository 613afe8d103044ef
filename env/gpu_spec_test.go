package env

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

// TestWithSpecsShare draws constraints on the default list (no pod of it
// names a model): about rate of its GPU pods get one, each of 1..M-1 of
// the node list's M models, every model named somewhere; CPU-only pods get
// none, and the workload itself is not changed.
func TestWithSpecsShare(t *testing.T) {
	w := openbDefault(t)
	before := slices.Clone(w.Pods)
	models := nodeModels(w)
	if len(models) < 2 {
		t.Fatalf("node list models %v; want several", models)
	}
	var all sim.GPUModels
	for _, m := range models {
		all |= 1 << uint(m)
	}
	for _, rate := range []float64{0.1, 0.3, 1} {
		got := withSpecs(w, models, rate, 7)
		var gpu, spec int
		var seen sim.GPUModels
		for i := range got.Pods {
			g := got.Pods[i].GPU
			if g.Count == 0 {
				if g.Models != 0 {
					t.Fatalf("rate %v: CPU-only pod %d got models %b", rate, i, g.Models)
				}
				continue
			}
			gpu++
			if g.Models == 0 {
				continue
			}
			spec++
			seen |= g.Models
			if k := bits.OnesCount32(uint32(g.Models)); k < 1 || k > len(models)-1 {
				t.Fatalf("rate %v: pod %d allows %d models; want 1..%d", rate, i, k, len(models)-1)
			}
			if g.Models&^all != 0 {
				t.Fatalf("rate %v: pod %d allows models %b outside the node list's %b", rate, i, g.Models, all)
			}
			// only the constraint changes
			p, q := got.Pods[i], w.Pods[i]
			p.GPU.Models = 0
			if p != q {
				t.Fatalf("rate %v: pod %d changed beyond its models: %+v, was %+v", rate, i, p, q)
			}
		}
		share := float64(spec) / float64(gpu)
		if math.Abs(share-rate) > 0.03 {
			t.Errorf("rate %v: %d of %d GPU pods (%.3f) constrained", rate, spec, gpu, share)
		}
		if seen != all {
			t.Errorf("rate %v: models named %b; want every node model %b", rate, seen, all)
		}
		if err := got.Validate(); err != nil {
			t.Errorf("rate %v: %v", rate, err)
		}
	}
	if !reflect.DeepEqual(w.Pods, before) {
		t.Error("withSpecs changed the workload it was given")
	}
	if got := withSpecs(w, models, 0, 7); got != w {
		t.Error("rate 0: not the workload itself")
	}
}

// TestWithSpecsDeterministic: the same seed draws the same constraints,
// another seed others.
func TestWithSpecsDeterministic(t *testing.T) {
	w := openbDefault(t)
	models := nodeModels(w)
	a := withSpecs(w, models, 0.3, 11)
	b := withSpecs(w, models, 0.3, 11)
	c := withSpecs(w, models, 0.3, 12)
	if !reflect.DeepEqual(a.Pods, b.Pods) {
		t.Error("seed 11 twice: different constraints")
	}
	if reflect.DeepEqual(a.Pods, c.Pods) {
		t.Error("seeds 11 and 12: the same constraints")
	}
}

// TestGPUEnvSpecRate runs episodes with spec_rate on subclusters: the
// subcluster of a seed is the one without constraints (their own stream),
// the same seed and actions replay bit for bit, constrained pods show
// their constraint in the observation, and the mask refuses every node
// whose model they do not allow.
func TestGPUEnvSpecRate(t *testing.T) {
	w := openbDefault(t)
	cfg := DefaultGPUConfig()
	cfg.MinNodes, cfg.MaxNodes = 20, 40
	cfg.Prior, cfg.PriorScale = sched.NameFGD, 3
	plain, err := NewGPUEnv(cfg, w)
	if err != nil {
		t.Fatal(err)
	}
	cfg.SpecRate = 0.5
	e1, _, _ := twinEpisodes(t, cfg, w, 3, 2)
	if _, err := plain.Reset(3); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(plain.sub.Nodes, e1.sub.Nodes) {
		t.Error("spec_rate changed the subcluster of seed 3")
	}

	obs, err := e1.Reset(4)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 3))
	var spec, refused int
	for step := 0; ; step++ {
		_, p := e1.st.Pod()
		m := p.GPU.Models
		if got := obs.Pod[GPUPodModels]; got != float64(min(bits.OnesCount32(uint32(m)), 1)) {
			t.Fatalf("step %d: gpu_spec feature %v for models %b", step, got, m)
		}
		if m != 0 {
			spec++
		}
		var ok []int
		for i := range obs.N {
			allowed := m.Allows(e1.c.Nodes[i].GPU.Model)
			if obs.Nodes[i*GPUNodeFeatures+GPUNodeModelOK] != map[bool]float64{false: 0, true: 1}[allowed] {
				t.Fatalf("step %d: node %d model feature disagrees with models %b", step, i, m)
			}
			if !allowed {
				refused++
				if obs.Mask[i] {
					t.Fatalf("step %d: node %d of model %d allowed for a pod of models %b", step, i, e1.c.Nodes[i].GPU.Model, m)
				}
			}
			if obs.Mask[i] {
				ok = append(ok, i)
			}
		}
		a := obs.N
		if len(ok) > 0 {
			a = ok[rng.IntN(len(ok))]
		}
		next, _, done, _, err := e1.Step(a)
		if err != nil {
			t.Fatal(err)
		}
		if done {
			break
		}
		obs = next
	}
	if spec == 0 || refused == 0 {
		t.Errorf("%d constrained pods, %d refused nodes: the case tests nothing", spec, refused)
	}
}

// TestGPUEnvSpecRateZero: spec_rate 0 leaves the episode's pod list as the
// workload's own (the same slice), so every result without it is unchanged.
func TestGPUEnvSpecRateZero(t *testing.T) {
	w := openbDefault(t)
	cfg := DefaultGPUConfig()
	cfg.MinNodes, cfg.MaxNodes = 20, 40
	e, err := NewGPUEnv(cfg, w)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Reset(9); err != nil {
		t.Fatal(err)
	}
	if len(e.sub.Pods) != len(w.Pods) || &e.sub.Pods[0] != &w.Pods[0] {
		t.Error("spec_rate 0: the episode's pods are not the workload's")
	}
}
