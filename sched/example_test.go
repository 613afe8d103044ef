package sched_test

import (
	"fmt"

	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

// A pod of 1000 millicores and 2000 MiB on three nodes: kube-default prefers
// the node whose CPU and memory stay balanced (y), first-fit takes the first
// node with room (x), and a taint keeps every scheduler off z for a pod
// without the matching toleration.
func Example() {
	node := func(name string, reqCPU, reqMem int64, taints ...sim.Taint) sim.Node {
		return sim.Node{
			Alloc:     sim.Resources{CPU: 4000, Mem: 8000},
			Requested: sim.Resources{CPU: reqCPU, Mem: reqMem},
			Spec:      &sim.NodeSpec{Name: name, Allocatable: sim.Resources{CPU: 4000, Mem: 8000}, Taints: taints},
		}
	}
	c := sim.NewCluster(0,
		node("x", 0, 4000),
		node("y", 1200, 2400),
		node("z", 0, 0, sim.Taint{Key: "gpu", Value: "true", Effect: sim.NoSchedule}),
	)
	pod := &sim.Pod{Spec: &sim.PodSpec{Name: "web", Requests: sim.Resources{CPU: 1000, Mem: 2000}}}

	fmt.Println(sched.Names())
	for _, name := range []string{"kube-default", "first-fit"} {
		s, err := sched.New(name, 1)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s -> %s\n", name, c.Nodes()[s.Schedule(c, pod)].Spec.Name)
	}
	kd, _ := sched.NewKubeDefault(1, sched.KubeDefaultOptions{})
	fmt.Println("kube-default scores:", kd.Scores(c, pod, nil))
	_, err := sched.New("binpack", 1)
	fmt.Println(err)
	// Output:
	// [best-fit first-fit holes kube-default kube-default-nospread most-allocated random tetris]
	// kube-default -> y
	// first-fit -> x
	// kube-default scores: [425 445 -1]
	// unknown scheduler "binpack" (valid: best-fit, first-fit, holes, kube-default, kube-default-nospread, most-allocated, random, tetris)
}
