package env

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/sim"
)

func classCount(w *sim.GPUWorkload, c int) int {
	n := 0
	for _, p := range w.Pods {
		if PodClass(p.GPU) == c {
			n++
		}
	}
	return n
}

// TestMixWorkload: each class's share rises by about f of the other pods
// (binomial: within 5 standard deviations), the pods keep their slots'
// names, the input is unchanged, the same seed gives the same pods and f
// 0 returns the input itself.
func TestMixWorkload(t *testing.T) {
	w := openbDefault(t)
	before := reflectCopy(w)
	n := len(w.Pods)
	for c := range MixClasses {
		k := classCount(w, c)
		if k == 0 {
			t.Fatalf("class %s: the default list holds none", MixClassNames[c])
		}
		m := MixWorkload(w, c, 0.3, 7)
		got := classCount(m, c)
		// each pod of another class turns into class c with probability 0.3
		others := float64(n - k)
		want, sd := float64(k)+0.3*others, math.Sqrt(0.3*0.7*others)
		if d := float64(got) - want; d > 5*sd || d < -5*sd {
			t.Errorf("class %s: %d pods after the shift, want about %.0f ± %.0f", MixClassNames[c], got, want, sd)
		}
		for i := range m.Pods {
			if m.Pods[i].Name != w.Pods[i].Name {
				t.Fatalf("class %s: pod %d is named %q, want its slot's %q", MixClassNames[c], i, m.Pods[i].Name, w.Pods[i].Name)
			}
		}
		if err := m.Validate(); err != nil {
			t.Errorf("class %s: %v", MixClassNames[c], err)
		}
		if again := MixWorkload(w, c, 0.3, 7); !reflect.DeepEqual(again.Pods, m.Pods) {
			t.Errorf("class %s: the same seed drew other pods", MixClassNames[c])
		}
	}
	if !reflect.DeepEqual(w.Pods, before) {
		t.Fatal("MixWorkload changed its input")
	}
	if MixWorkload(w, MixMulti, 0, 7) != w {
		t.Error("f 0 did not return the workload itself")
	}
	if withMix(w, 0, 0.3, 7) != w {
		t.Error("rate 0 did not return the workload itself")
	}
	// rate 1: every episode shifted, by seed; some seeds shift different classes
	shifted := map[int]bool{}
	for seed := range uint64(40) {
		m := withMix(w, 1, 0.3, seed)
		for c := range MixClasses {
			if classCount(m, c) > classCount(w, c) {
				shifted[c] = true
			}
		}
	}
	if len(shifted) != MixClasses {
		t.Errorf("over 40 seeds withMix raised the classes %v; want all %d", shifted, MixClasses)
	}
}

func reflectCopy(w *sim.GPUWorkload) []sim.GPUPodSpec {
	return append([]sim.GPUPodSpec(nil), w.Pods...)
}

// TestMixConfig: the keys' errors name them; a mixed episode is reproducible.
func TestMixConfig(t *testing.T) {
	for _, tc := range []struct {
		key       string
		rate, max float64
	}{{"mix_rate", -0.1, 0.3}, {"mix_rate", 1.5, 0.3}, {"mix_max", 0.5, 0}, {"mix_max", 0.5, 1.5}, {"mix_max", 0, 0.3}} {
		c := DefaultGPUConfig()
		c.MixRate, c.MixMax = tc.rate, tc.max
		if err := c.Validate(); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("mix_rate %v mix_max %v: %v; want ErrConfig naming %s", tc.rate, tc.max, err, tc.key)
		}
	}
	w := openbDefault(t)
	c := DefaultGPUConfig()
	c.MinNodes, c.MaxNodes, c.MixRate, c.MixMax = 20, 40, 1, 0.3
	e1, err := NewGPUEnv(c, w)
	if err != nil {
		t.Fatal(err)
	}
	e2, _ := NewGPUEnv(c, w)
	if _, err := e1.Reset(3); err != nil {
		t.Fatal(err)
	}
	if _, err := e2.Reset(3); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(e1.sub.Pods, e2.sub.Pods) || reflect.DeepEqual(e1.sub.Pods, w.Pods) {
		t.Error("mix_rate 1: the same seed must shift the same way, and shift")
	}
}
