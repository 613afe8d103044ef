package sched

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/sim"
)

// TestParseAdmission: each key sets its field (gib in MiB, t in simulated
// milliseconds), k defaults to 1, and a bad rule is an error that wraps
// ErrUnknownScheduler and names the parameter at fault.
func TestParseAdmission(t *testing.T) {
	for _, c := range []struct {
		name string
		rule string
		want admission // inner and name left out
	}{
		// 40 GiB = 40 * 1024 MiB = 40960; 30 min = 1,800,000 ms.
		{"gib and t", "gib=40,t=30m", admission{capMiB: 40960, k: 1, maxDefer: 30 * sim.Minute}},
		// 0.5 GiB = 512 MiB.
		{"fractional gib", "gib=0.5", admission{capMiB: 512, k: 1}},
		{"q and k", "q=0.9,k=1.5", admission{q: 0.9, k: 1.5}},
		{"every gate", "gib=24,free=0.15,smaller=10,qmem=3,hi=1", admission{capMiB: 24576, k: 1, free: 0.15, smaller: 10, qmem: 3, hiOnly: true}},
		{"hi=0 is the default", "gib=30,hi=0", admission{capMiB: 30720, k: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseAdmission(c.rule)
			if err != nil {
				t.Fatal(err)
			}
			if *got != c.want {
				t.Errorf("parseAdmission(%q) = %+v, want %+v", c.rule, *got, c.want)
			}
		})
	}
	for _, c := range []struct {
		name, sched, names string // names: the parameter the error must name
	}{
		{"no value", "holes@adm:gib", `"gib"`},
		{"empty rule", "holes@adm:", `""`},
		{"unknown key", "holes@adm:gib=40,size=3", "size"},
		{"not a number", "holes@adm:gib=x", "gib"},
		{"zero gib", "holes@adm:gib=0", "gib"},
		{"gib below 1 MiB", "holes@adm:gib=0.0001", "gib"},
		{"q above 1", "holes@adm:q=1.5", "q"},
		{"negative k", "holes@adm:q=0.9,k=-1", "k"},
		{"k without q", "holes@adm:gib=40,k=2", "k"},
		{"bad duration", "holes@adm:gib=40,t=30", "t"},
		{"zero duration", "holes@adm:gib=40,t=0s", "t"},
		{"free above 1", "holes@adm:gib=40,free=2", "free"},
		{"fractional smaller", "holes@adm:gib=40,smaller=1.5", "smaller"},
		{"zero smaller", "holes@adm:gib=40,smaller=0", "smaller"},
		{"infinite qmem", "holes@adm:gib=40,qmem=+Inf", "qmem"},
		{"hi=2", "holes@adm:gib=40,hi=2", "hi"},
		{"twice", "holes@adm:gib=40,gib=30", "gib"},
		{"no size threshold", "holes@adm:t=30m", "gib or q"},
		{"unknown inner", "nope@adm:gib=40", "nope"},
		{"bad inner cap", "holes@capx@adm:gib=40", "@cap"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := New(c.sched, 1)
			if !errors.Is(err, ErrUnknownScheduler) || !strings.Contains(err.Error(), c.names) {
				t.Errorf("New(%q): error %v, want ErrUnknownScheduler naming %s", c.sched, err, c.names)
			}
		})
	}
	// A cap inside the rule's inner name is the cap's; admission names are
	// not in Names(), so "all" never runs them.
	s, err := New("best-fit@cap30@adm:gib=20", 1)
	if err != nil || s.Name() != "best-fit@cap30@adm:gib=20" {
		t.Errorf("New(best-fit@cap30@adm:gib=20) = %v, %v", s, err)
	}
	if i := slices.IndexFunc(Names(), func(n string) bool { return strings.Contains(n, admSuffix) }); i >= 0 {
		t.Errorf("Names() lists %q", Names()[i])
	}
}

// TestAdmissionDecisions: two 64-GiB nodes, a with 10 GiB requested and b
// with 40, so 128 GiB allocatable and 78 GiB free; it is minute 20, and a
// 48-GiB pod that arrived at 0 is decided. first-fit places what the rule
// lets through on a (54 GiB free), node 0. Services seen: 8, 16 and 48 GiB;
// also pending: a 4-GiB and a 60-GiB pod.
func TestAdmissionDecisions(t *testing.T) {
	const gib = 1024
	const place, wait = 0, sim.PendingDecision
	view := func() *sim.Cluster {
		c := sim.NewCluster(20*sim.Minute,
			sim.Node{Alloc: sim.Resources{CPU: 64000, Mem: 64 * gib}, Requested: sim.Resources{CPU: 1000, Mem: 10 * gib}},
			sim.Node{Alloc: sim.Resources{CPU: 64000, Mem: 64 * gib}, Requested: sim.Resources{CPU: 1000, Mem: 40 * gib}})
		for _, m := range []int64{8, 16, 48} {
			c.NoteService(&sim.PodSpec{Requests: sim.Resources{Mem: m * gib}})
		}
		for id, m := range []int64{48, 4, 60} { // id 0 is the pod decided
			c.NotePending(&sim.Pod{ID: sim.PodID(id), Spec: &sim.PodSpec{Requests: sim.Resources{CPU: 100, Mem: m * gib}}}, true)
		}
		return c
	}
	pod := func(prio sim.Priority) *sim.Pod {
		return &sim.Pod{ID: 0, Spec: &sim.PodSpec{Priority: prio, Requests: sim.Resources{CPU: 100, Mem: 48 * gib}}}
	}
	for _, c := range []struct {
		name string
		rule string
		low  bool // the pod is low-priority
		want int
	}{
		{"above gib", "gib=40", false, wait},           // 48 > 40: large, no other condition
		{"at gib", "gib=48", false, place},             // 48 <= 48: not large
		{"within t", "gib=40,t=30m", false, wait},      // 20 min since arrival < 30
		{"past t", "gib=40,t=20m", false, place},       // 20 min >= 20
		{"free low", "gib=40,free=0.3", false, wait},   // 78 - 48 = 30 GiB free after; 0.3 x 128 = 38.4 > 30
		{"free high", "gib=40,free=0.2", false, place}, // 0.2 x 128 = 25.6 <= 30
		{"hi, high pod", "gib=40,hi=1", false, wait},
		{"hi, low pod", "gib=40,hi=1", true, place},
		{"q", "q=0.5", false, wait},                     // ceil(0.5 x 3) = 2nd smallest service: 16 GiB; 48 > 16
		{"q=1", "q=1", false, place},                    // largest service 48 GiB; 48 <= 48
		{"q and k", "q=0.5,k=3", false, place},          // 3 x 16 = 48; 48 <= 48
		{"q and gib", "q=0.5,gib=50", false, place},     // above 16 but not above 50
		{"smaller 1", "gib=40,smaller=1", false, wait},  // pending smaller than 48: the 4-GiB pod, 1 >= 1
		{"smaller 2", "gib=40,smaller=2", false, place}, // 1 < 2
		{"qmem low", "gib=40,qmem=0.05", false, wait},   // 4 GiB > 0.05 x 78 = 3.9 GiB
		{"qmem high", "gib=40,qmem=0.1", false, place},  // 4 GiB <= 0.1 x 78 = 7.8 GiB
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := New("first-fit@adm:"+c.rule, 1)
			if err != nil {
				t.Fatal(err)
			}
			prio := sim.High
			if c.low {
				prio = sim.Low
			}
			if got := s.Schedule(view(), pod(prio)); got != c.want {
				t.Errorf("Schedule = %d, want %d", got, c.want)
			}
		})
	}
}
