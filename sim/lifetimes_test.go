package sim_test

import (
	"math"
	"testing"

	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

// TestLifetimeEstimate: pods of task job-a/t1 finish after 10 s and 100 s;
// at 200 s the next pod of that task gets the task's mean log lifetime, a
// pod of another task of job-a the group's, a pod of job-b the run's, and a
// pod at time 0 none. The estimate never reads the pod's own duration.
func TestLifetimeEstimate(t *testing.T) {
	node := sim.NodeSpec{Name: "n", Allocatable: sim.Resources{CPU: 64000, Mem: 262144}}
	pod := func(name, group string, at, d sim.Time) sim.PodSpec {
		return sim.PodSpec{Name: name, Group: group, Arrival: at, Duration: d, Requests: sim.Resources{CPU: 1000, Mem: 1024}}
	}
	w := &sim.Workload{Nodes: []sim.NodeSpec{node}, Pods: []sim.PodSpec{
		pod("job-a/t1/1", "job-a", 0, 10*sim.Second),
		pod("job-a/t1/2", "job-a", 0, 100*sim.Second),
		pod("job-c/t1/1", "job-c", 0, 1000*sim.Second), // still running at 200 s
		pod("job-a/t1/3", "job-a", 200*sim.Second, 7*sim.Hour),
		pod("job-a/t2/1", "job-a", 200*sim.Second, sim.Second),
		pod("job-b/t1/1", "job-b", 200*sim.Second, sim.Minute),
		pod("service", "app", 200*sim.Second, 0),
	}}
	cfg := sim.DefaultConfig()
	cfg.StartupBase, cfg.StartupNoise = 0, 0
	e, err := sim.New(w, cfg)
	if err != nil {
		t.Fatal(err)
	}
	both := (math.Log1p(10) + math.Log1p(100)) / 2
	want := map[string]sim.LifetimeEstimate{
		"job-a/t1/3": {Level: sim.LifetimeTask, N: 2, LogMean: both},
		"job-a/t2/1": {Level: sim.LifetimeGroup, N: 2, LogMean: both},
		"job-b/t1/1": {Level: sim.LifetimeAll, N: 2, LogMean: both},
		"service":    {Level: sim.LifetimeAll, N: 2, LogMean: both},
	}
	for {
		p, ok := e.Next()
		if !ok {
			break
		}
		got := e.Cluster().Lifetime(p)
		if p.Spec.Arrival == 0 {
			if got != (sim.LifetimeEstimate{}) {
				t.Errorf("%s at 0: estimate %+v, want none", p.Spec.Name, got)
			}
		} else if w, ok := want[p.Spec.Name]; ok && p.Attempts == 0 {
			if got.Level != w.Level || got.N != w.N || math.Abs(got.LogMean-w.LogMean) > 1e-12 {
				t.Errorf("%s: estimate %+v, want %+v", p.Spec.Name, got, w)
			}
			delete(want, p.Spec.Name)
		}
		e.Decide(0)
	}
	if len(want) > 0 {
		t.Errorf("no decision for %v", want)
	}
}

// TestPendingQueueView replays a busy synthetic workload with the
// autoscaler and memory pressure (evictions) and checks after every event
// that the cluster's pending list holds exactly the pending pods with their
// requests, and that arrivals count first arrivals.
func TestPendingQueueView(t *testing.T) {
	o := sim.DefaultSyntheticOptions(8)
	o.Pods, o.Load = 3000, 1.2
	w, err := sim.Synthetic(o)
	if err != nil {
		t.Fatal(err)
	}
	cfg := sim.DefaultConfig()
	cfg.Autoscaler.Enabled = true
	cfg.Autoscaler.MinNodes, cfg.Autoscaler.MaxNodes = 4, 12
	cfg.Autoscaler.Template = w.Nodes[0]
	e, err := sim.New(w, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := sched.NewTetris(1)
	check := func(step int) {
		c := e.Cluster()
		var total sim.Resources
		pending := 0
		for i := range w.Pods {
			if p := e.Pod(sim.PodID(i)); p.State == sim.Pending {
				pending++
				total = total.Add(p.Spec.Requests)
			}
		}
		var sum sim.Resources
		for _, r := range c.PendingRequests() {
			sum = sum.Add(r)
		}
		if len(c.PendingRequests()) != pending || pending != e.Pending() || sum != total || c.PendingTotal() != total {
			t.Fatalf("step %d: %d listed (%v, total %v), %d pending (%v), engine says %d",
				step, len(c.PendingRequests()), sum, c.PendingTotal(), pending, total, e.Pending())
		}
		if c.Arrivals() != e.Counters().Arrived {
			t.Fatalf("step %d: %d arrivals, counters say %d", step, c.Arrivals(), e.Counters().Arrived)
		}
	}
	step := 0
	for ; ; step++ {
		p, ok := e.Next()
		if !ok {
			break
		}
		if step%7 == 0 {
			check(step)
		}
		if step%5 == 0 {
			e.Decide(sim.PendingDecision)
		} else {
			e.Decide(s.Schedule(e.Cluster(), p))
		}
	}
	check(step)
	if r := e.Result(); r.Evictions+r.Preemptions == 0 {
		t.Logf("no eviction in the replay")
	}
}

// TestArrivalRate: 60 pods arriving one per second read close to 60 per
// minute times the share of the decay window they fill, and the rate then
// decays by e every ArrivalTau.
func TestArrivalRate(t *testing.T) {
	node := sim.NodeSpec{Name: "n", Allocatable: sim.Resources{CPU: 640000, Mem: 2621440}}
	w := &sim.Workload{Nodes: []sim.NodeSpec{node}}
	for i := range 60 {
		w.Pods = append(w.Pods, sim.PodSpec{Name: "p", Arrival: sim.Time(i) * sim.Second, Duration: sim.Hour, Requests: sim.Resources{CPU: 1, Mem: 1}})
	}
	w.Pods = append(w.Pods, sim.PodSpec{Name: "late", Arrival: 59*sim.Second + sim.ArrivalTau, Duration: sim.Hour, Requests: sim.Resources{CPU: 1, Mem: 1}})
	e, err := sim.New(w, sim.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	tau := sim.ArrivalTau.Seconds()
	var at59 float64
	for {
		p, ok := e.Next()
		if !ok {
			break
		}
		c := e.Cluster()
		switch p.Spec.Name {
		case "p":
			if c.Now() == 59*sim.Second {
				// sum_{k=0}^{59} e^(-k/tau), per tau minutes
				var want float64
				for k := range 60 {
					want += math.Exp(-float64(k) / tau)
				}
				want /= tau / 60
				at59 = c.ArrivalRate()
				if math.Abs(at59-want) > 1e-9 {
					t.Errorf("rate at 59 s = %v, want %v", at59, want)
				}
			}
		case "late":
			// the 60 earlier arrivals decayed by e, plus this one
			want := at59/math.E + 1/(tau/60)
			if got := c.ArrivalRate(); math.Abs(got-want) > 1e-9 {
				t.Errorf("rate after ArrivalTau = %v, want %v", got, want)
			}
		}
		e.Decide(0)
	}
}

// TestServiceMem: nearest-rank quantiles of the services' memory, batch
// pods left out, the engine noting warm-started and arriving services.
func TestServiceMem(t *testing.T) {
	c := sim.NewCluster(0)
	if c.ServiceMem(0.5) != 0 || c.Services() != 0 {
		t.Fatal("an empty view has a hole size")
	}
	for _, m := range []int64{40, 10, 30, 20} {
		c.NoteService(&sim.PodSpec{Requests: sim.Resources{Mem: m}})
	}
	c.NoteService(&sim.PodSpec{Requests: sim.Resources{Mem: 99}, Duration: sim.Second})
	// sorted 10 20 30 40: rank ceil(q*4)
	for q, want := range map[float64]int64{0.01: 10, 0.25: 10, 0.5: 20, 0.51: 30, 0.75: 30, 1: 40} {
		if got := c.ServiceMem(q); got != want {
			t.Errorf("ServiceMem(%v) = %d, want %d", q, got, want)
		}
	}
	if c.Services() != 4 {
		t.Errorf("%d services, want 4 (the batch pod does not count)", c.Services())
	}

	// in a replay: one warm service, one arriving service, one batch pod
	w := &sim.Workload{
		Nodes: []sim.NodeSpec{{Name: "n", Allocatable: sim.Resources{CPU: 8000, Mem: 8192}}},
		Pods: []sim.PodSpec{
			{Name: "warm", Requests: sim.Resources{CPU: 100, Mem: 300}},
			{Name: "svc", Arrival: sim.Second, Requests: sim.Resources{CPU: 100, Mem: 100}},
			{Name: "job", Arrival: sim.Second, Requests: sim.Resources{CPU: 100, Mem: 500}, Duration: sim.Second},
		},
		Initial: []sim.Placement{{Pod: 0, Node: 0}},
	}
	e, err := sim.New(w, sim.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, ok := e.Next(); ok; _, ok = e.Next() {
		e.Decide(0) // one node: every pod goes there
	}
	if got := e.Cluster().Services(); got != 2 || e.Cluster().ServiceMem(1) != 300 || e.Cluster().ServiceMem(0.5) != 100 {
		t.Errorf("after the replay: %d services, max %d, median %d; want 2, 300, 100", got, e.Cluster().ServiceMem(1), e.Cluster().ServiceMem(0.5))
	}
}
