package sched

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/kubesim/kubesim/sim"
)

// reserveWorkload is two nodes of one GPU each (8 CPUs, 16 GiB), and three
// pods: two 810-milli shares and one whole GPU.
func reserveWorkload() *sim.GPUWorkload {
	node := sim.GPUNodeSpec{CPU: 8000, Mem: 16384, GPUs: 1, Model: 0}
	n0, n1 := node, node
	n0.Name, n1.Name = "n0", "n1"
	return &sim.GPUWorkload{
		Name:   "reserve",
		Models: []string{"T4"},
		Nodes:  []sim.GPUNodeSpec{n0, n1},
		Pods: []sim.GPUPodSpec{
			{Name: "s0", CPU: 1000, Mem: 1024, GPU: sim.GPURequest{Count: 1, Milli: 810}},
			{Name: "s1", CPU: 1000, Mem: 1024, GPU: sim.GPURequest{Count: 1, Milli: 810}},
			{Name: "w", CPU: 1000, Mem: 1024, GPU: sim.GPURequest{Count: 1, Milli: 1000}},
		},
	}
}

// TestGPUReserveHand: the first share finds both devices idle (100%) and
// is placed; the second would open the last idle device while 1 of 2
// (50%) are idle. Under reserve60 it fails, and the whole GPU takes that
// device: 810 + 1000 of 2000 milli. Under reserve50 (50% is not fewer
// than 50%) and plain fgd it is placed and the whole GPU fails: 1620.
func TestGPUReserveHand(t *testing.T) {
	w := reserveWorkload()
	base := sim.NewGPUCluster(w, nil)
	for _, tc := range []struct {
		name           string
		placed, failed int
		alloc          float64
	}{
		{"fgd", 2, 1, 81},
		{"fgd@reserve50", 2, 1, 81},
		{"fgd@reserve60", 2, 1, 90.5},
		{"fgd-tiers@reserve60", 2, 1, 90.5},
	} {
		s, err := NewGPU(tc.name, 1)
		if err != nil {
			t.Fatal(err)
		}
		r, err := sim.RunGPUOrder(w, base, s, []int32{0, 1, 2})
		if err != nil {
			t.Fatal(err)
		}
		if r.Placed != tc.placed || r.Failed != tc.failed || r.AllocPct != tc.alloc {
			t.Errorf("%s: placed %d failed %d alloc %.2f%%, want %d, %d, %.2f%%", tc.name, r.Placed, r.Failed, r.AllocPct, tc.placed, tc.failed, tc.alloc)
		}
		if s.Name() != tc.name {
			t.Errorf("Name() = %q, want %q", s.Name(), tc.name)
		}
	}
}

// TestGPUReserveOnlyRefuses: on random clusters and pods the rule returns
// the inner policy's choice, or -1 exactly when that choice puts a share
// above ReserveMinMilli on an idle device while fewer than the given share
// of devices are idle. Pods are placed as decided, so the cluster fills.
func TestGPUReserveOnlyRefuses(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	refused := 0
	for trial := range 30 {
		c := &sim.GPUCluster{Rank: []int32{0, 1, 2, 3}}
		for range 4 {
			c.Nodes = append(c.Nodes, gpuNode(64000, 0, 0, 1000, 1000, 1000, 1000))
		}
		c.Types = threeNodes().Types
		c.TypeOf = make([]int32, 200)
		c.NumTypes = 1
		inner, _ := NewGPU(NameFGD, 0)
		r, err := NewGPU("fgd@reserve40", 0)
		if err != nil {
			t.Fatal(err)
		}
		for k := range 40 {
			milli := int16(1000)
			if rng.IntN(3) > 0 {
				milli = int16(100 + 100*rng.IntN(9)) // 100..900
			}
			p := &sim.GPUPodSpec{Name: "p", CPU: 500, Mem: 256, GPU: sim.GPURequest{Count: 1, Milli: milli}}
			n0, m0 := inner.Schedule(c, k, p)
			n, m := r.Schedule(c, k, p)
			if n >= 0 {
				if n != n0 || m != m0 {
					t.Fatalf("trial %d pod %d: reserve chose %d/%b, inner %d/%b", trial, k, n, m, n0, m0)
				}
				c.Place(n, p, m)
				continue
			}
			if n0 < 0 {
				continue
			}
			idle, devices := 0, 0
			for i := range c.Nodes {
				idle += c.Nodes[i].GPU.Idle()
				devices += int(c.Nodes[i].GPU.N)
			}
			d := 0
			for m0>>uint(d)&1 == 0 {
				d++
			}
			if milli <= ReserveMinMilli || milli == 1000 || c.Nodes[n0].GPU.Free[d] != sim.GPUMilli || float64(idle) >= 0.4*float64(devices) {
				t.Fatalf("trial %d pod %d: refused a %d-milli pod (device free %d, %d of %d idle)", trial, k, milli, c.Nodes[n0].GPU.Free[d], idle, devices)
			}
			refused++
		}
	}
	if refused == 0 {
		t.Fatal("no pod was refused: the test does not reach the rule")
	}
}

func TestGPUReserveNames(t *testing.T) {
	for _, name := range []string{"fgd@reserve", "fgd@reserve0", "fgd@reserve-5", "fgd@reserve101", "fgd@reserveNaN", "fgd@reservex", "nope@reserve20"} {
		if _, err := NewGPU(name, 0); !errors.Is(err, ErrUnknownScheduler) {
			t.Errorf("NewGPU(%q): err %v, want ErrUnknownScheduler", name, err)
		}
	}
	if _, err := NewGPUScoring("fgd@reserve20", 0); err == nil {
		t.Error("NewGPUScoring accepted an admission rule, which has no scores")
	}
	for _, n := range GPUNames() {
		if _, err := NewGPU(n+"@reserve20", 0); err != nil {
			t.Errorf("%s@reserve20: %v", n, err)
		}
	}
}
