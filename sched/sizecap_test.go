package sched_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

// TestSizeCapByHand: one node of 32 GiB; a 30-GiB service arrives, then
// three of 10 GiB. Best-fit places the large one, and the other three find
// 2 GiB free: 3 left pending. With a cap of 20 GiB the large one waits and
// the three small ones fit: 1 left pending, the same 30 GiB of memory. A
// cap at the large pod's size changes nothing; a cap below every pod
// leaves all four pending.
func TestSizeCapByHand(t *testing.T) {
	const gib = 1024
	svc := func(i int, at sim.Time, mem int64) sim.PodSpec {
		return sim.PodSpec{Name: fmt.Sprintf("s%d", i), Arrival: at, Priority: sim.High, Requests: sim.Resources{CPU: 100, Mem: mem * gib}}
	}
	w := &sim.Workload{
		Nodes: []sim.NodeSpec{{Name: "a", Allocatable: sim.Resources{CPU: 8000, Mem: 32 * gib}}},
		Pods:  []sim.PodSpec{svc(0, sim.Second, 30), svc(1, 2*sim.Second, 10), svc(2, 3*sim.Second, 10), svc(3, 4*sim.Second, 10)},
		End:   100 * sim.Second,
	}
	for _, c := range []struct {
		name          string
		pending       int64
		pendingMemGiB float64
	}{{"best-fit", 3, 30}, {"best-fit@cap20", 1, 30}, {"best-fit@cap30", 3, 30}, {"tetris@cap9.5", 4, 60},
		// an admission rule without conditions is the cap
		{"best-fit@adm:gib=20", 1, 30}} {
		s, err := sched.New(c.name, 1)
		if err != nil {
			t.Fatal(err)
		}
		if s.Name() != c.name {
			t.Errorf("Name() = %q, want %q", s.Name(), c.name)
		}
		r, err := sim.Run(context.Background(), w, sim.DefaultConfig(), s)
		if err != nil {
			t.Fatal(err)
		}
		if r.Unschedulable != c.pending || r.UnschedulableMemGiB != c.pendingMemGiB {
			t.Errorf("%s: %d pods (%v GiB) left pending, want %d (%v GiB)", c.name, r.Unschedulable, r.UnschedulableMemGiB, c.pending, c.pendingMemGiB)
		}
	}
}

// A cap that is not a positive number, or on an unknown heuristic, is an
// error wrapping ErrUnknownScheduler; capped names are not in Names(), so
// "all" never runs them.
func TestSizeCapNames(t *testing.T) {
	for _, name := range []string{"best-fit@cap", "best-fit@cap0", "best-fit@cap-3", "best-fit@capx", "nope@cap30", "@cap30"} {
		if _, err := sched.New(name, 1); !errors.Is(err, sched.ErrUnknownScheduler) {
			t.Errorf("New(%q): error %v, want ErrUnknownScheduler", name, err)
		}
	}
	if i := slices.IndexFunc(sched.Names(), func(n string) bool { return strings.Contains(n, "@") }); i >= 0 {
		t.Errorf("Names() lists %q", sched.Names()[i])
	}
}
