package sim_test

import (
	"context"
	"slices"
	"testing"

	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

// TestAdmissionOracleByHand: the window ends at 100 s. Twenty
// high-priority pods, so A = 20 - ceil(0.95 x 20) = 1 of them may be old
// and pending: three old ones (arrived at 10, 20 and 60 s: 90, 80 and 40 s
// before the end) of 50, 40 and 30 MiB, and seventeen young ones (at 80 s)
// of 1 MiB; two low-priority pods of 20 and 10 MiB, old but never in the
// high-priority tail. With p95 = 30 s the candidates are the largest old
// one (50) and every other pod not old and high: 50, 20, 10, 1 x 17 (97 MiB
// in all).
func TestAdmissionOracleByHand(t *testing.T) {
	const s = sim.Second
	pods := []sim.OraclePod{
		{Arrival: 10 * s, Mem: 50, High: true}, {Arrival: 20 * s, Mem: 40, High: true}, {Arrival: 60 * s, Mem: 30, High: true},
		{Arrival: 0, Mem: 20}, {Arrival: 0, Mem: 10},
	}
	for range 17 {
		pods = append(pods, sim.OraclePod{Arrival: 80 * s, Mem: 1, High: true})
	}
	for _, c := range []struct {
		name    string
		p95     sim.Time
		atLeast float64
		want    int
		ok      bool
	}{
		{"largest alone", 30 * s, 50, 1, true},             // 50 >= 50
		{"two", 30 * s, 60, 2, true},                       // 50 + 20 = 70 >= 60
		{"exactly three", 30 * s, 80, 3, true},             // 50 + 20 + 10 = 80
		{"small ones too", 30 * s, 85, 8, true},            // 80 + 5 x 1
		{"every candidate", 30 * s, 97, 20, true},          // 50 + 20 + 10 + 17
		{"beyond the candidates", 30 * s, 98, 0, false},    // 40 and 30 are old: only one old slot
		{"nothing to hold", 30 * s, 0, 0, true},            // the empty set
		{"age equal to p95 is young", 40 * s, 80, 2, true}, // the 30-MiB pod (40 s) joins: 50 + 30
		{"longer p95", 50 * s, 80, 2, true},                // same candidates
		{"every pod young", 100 * s, 120, 3, true},         // 50 + 40 + 30 = 120
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := sim.AdmissionOracle(pods, 100*s, c.p95, c.atLeast)
			if got != c.want || ok != c.ok {
				t.Errorf("AdmissionOracle(p95 %v, %v MiB) = %d, %v; want %d, %v", c.p95, c.atLeast, got, ok, c.want, c.ok)
			}
		})
	}
}

// TestOraclePods: of six pods, the warm-started one, the one that arrives
// during the warm-up (before 10 s) and the one that arrives at the end (100
// s) have no pending-latency sample; the other three are listed, in
// workload order. With a replay's own p95 and pending memory the oracle
// never counts more pods than the replay left pending: its pending set is
// one the oracle may choose.
func TestOraclePods(t *testing.T) {
	const gib = 1024
	pod := func(name string, at sim.Time, prio sim.Priority, mem int64) sim.PodSpec {
		return sim.PodSpec{Name: name, Arrival: at, Priority: prio, Requests: sim.Resources{CPU: 100, Mem: mem * gib}}
	}
	w := &sim.Workload{
		Nodes: []sim.NodeSpec{{Name: "a", Allocatable: sim.Resources{CPU: 8000, Mem: 16 * gib}}},
		Pods: []sim.PodSpec{
			pod("warm", 0, sim.High, 4), pod("early", 5*sim.Second, sim.High, 1),
			pod("big", 20*sim.Second, sim.High, 10), pod("mid", 30*sim.Second, sim.Low, 6),
			pod("small", 40*sim.Second, sim.High, 2), pod("late", 100*sim.Second, sim.High, 1),
		},
		Initial: []sim.Placement{{Pod: 0, Node: 0}},
		End:     100 * sim.Second,
	}
	cfg := sim.DefaultConfig()
	cfg.WarmUp = 10 * sim.Second
	got, err := sim.OraclePods(w, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := []sim.OraclePod{
		{Arrival: 20 * sim.Second, Mem: 10 * gib, High: true},
		{Arrival: 30 * sim.Second, Mem: 6 * gib},
		{Arrival: 40 * sim.Second, Mem: 2 * gib, High: true},
	}
	if !slices.Equal(got, want) {
		t.Errorf("OraclePods = %+v, want %+v", got, want)
	}
	r, err := sim.Run(context.Background(), w, cfg, sched.NewFirstFit())
	if err != nil {
		t.Fatal(err)
	}
	// 16 GiB: warm 4 + early 1 + big 10 leave 1; mid (6) and small (2) wait.
	if r.Unschedulable != 2 {
		t.Fatalf("first-fit left %d pending; want 2", r.Unschedulable)
	}
	n, ok := sim.AdmissionOracle(got, w.End, sim.Time(r.HighPrioPendingP95CensoredMs), r.UnschedulableMemGiB*gib)
	if !ok || n > int(r.Unschedulable) {
		t.Errorf("oracle = %d, %v; want at most first-fit's %d", n, ok, r.Unschedulable)
	}
	dag := *w
	dag.Pods = slices.Clone(w.Pods)
	dag.Pods[4].After = []int32{2}
	if _, err := sim.OraclePods(&dag, cfg); err == nil {
		t.Error("OraclePods with dependencies: no error")
	}
}
