package sim_test

import (
	"context"
	"fmt"

	"github.com/kubesim/kubesim/sim"
)

// firstFit places each pod on the first node that passes the filters.
type firstFit struct{}

func (firstFit) Name() string { return "first-fit" }

func (firstFit) Schedule(c *sim.Cluster, p *sim.Pod) int {
	for i := range c.Nodes() {
		if sim.Feasible(&c.Nodes()[i], p.Spec) {
			return i
		}
	}
	return sim.PendingDecision
}

// Replay a two-node workload: the third pod waits until the first finishes.
func ExampleRun() {
	w := &sim.Workload{
		Nodes: []sim.NodeSpec{
			{Name: "a", Allocatable: sim.Resources{CPU: 4000, Mem: 8192}},
			{Name: "b", Allocatable: sim.Resources{CPU: 4000, Mem: 8192}},
		},
		Pods: []sim.PodSpec{
			{Name: "web", Requests: sim.Resources{CPU: 3000, Mem: 4096}, Duration: 10 * sim.Second},
			{Name: "db", Requests: sim.Resources{CPU: 3000, Mem: 4096}, Duration: 20 * sim.Second},
			{Name: "job", Arrival: sim.Second, Requests: sim.Resources{CPU: 2000, Mem: 1024}, Duration: 5 * sim.Second},
		},
	}
	cfg := sim.DefaultConfig()
	cfg.StartupNoise = 0 // startup takes exactly StartupBase (2 s)
	r, err := sim.Run(context.Background(), w, cfg, firstFit{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("pods %d, unschedulable %d, ended at %.0f s\n", r.Pods, r.Unschedulable, r.SimulatedSeconds)
	fmt.Printf("pending latency p99 %.0f ms\n", r.PendingLatencyP99Ms)
	// Output:
	// pods 3, unschedulable 0, ended at 22 s
	// pending latency p99 11000 ms
}
