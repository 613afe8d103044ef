package sched

import (
	"slices"
	"testing"

	"github.com/kubesim/kubesim/sim"
)

func withTolerations(p *sim.Pod, tols ...sim.Toleration) *sim.Pod {
	p.Spec.Tolerations = tols
	return p
}

// Cases ported from kubernetes/kubernetes
// pkg/scheduler/framework/plugins/tainttoleration/taint_toleration_test.go
// (TestTaintTolerationScore).
func TestTaintTolerationScore(t *testing.T) {
	pns := sim.PreferNoSchedule
	arm := sim.Taint{Key: "cpu-type", Value: "arm64", Effect: pns}
	ssd := sim.Taint{Key: "disk-type", Value: "ssd", Effect: pns}
	tests := []struct {
		name  string
		pod   *sim.Pod
		nodes []sim.Node
		want  []int64
	}{
		{
			// counts 0 and 1; max 1: 100-0 = 100, 100-100 = 0
			name: "node with taints tolerated by the pod gets a higher score",
			pod:  withTolerations(mkPod(1, 1), sim.Toleration{Key: "foo", Value: "bar", Effect: pns}),
			nodes: []sim.Node{
				mkNode("nodeA", 1, 1, 0, 0, taints(sim.Taint{Key: "foo", Value: "bar", Effect: pns})),
				mkNode("nodeB", 1, 1, 0, 0, taints(sim.Taint{Key: "foo", Value: "blah", Effect: pns})),
			},
			want: []int64{100, 0},
		},
		{
			// counts 0, 0, 0: all MaxNodeScore
			name: "tolerated taints do not matter however many",
			pod: withTolerations(mkPod(1, 1),
				sim.Toleration{Key: "cpu-type", Value: "arm64", Effect: pns},
				sim.Toleration{Key: "disk-type", Value: "ssd", Effect: pns}),
			nodes: []sim.Node{mkNode("nodeA", 1, 1, 0, 0), mkNode("nodeB", 1, 1, 0, 0, taints(arm)), mkNode("nodeC", 1, 1, 0, 0, taints(arm, ssd))},
			want:  []int64{100, 100, 100},
		},
		{
			// counts 0, 1, 2; max 2: 100, 100-50 = 50, 100-100 = 0
			name:  "the more intolerable taints the lower the score",
			pod:   withTolerations(mkPod(1, 1), sim.Toleration{Key: "foo", Value: "bar", Effect: pns}),
			nodes: []sim.Node{mkNode("nodeA", 1, 1, 0, 0), mkNode("nodeB", 1, 1, 0, 0, taints(arm)), mkNode("nodeC", 1, 1, 0, 0, taints(arm, ssd))},
			want:  []int64{100, 50, 0},
		},
		{
			// the NoSchedule taint is not counted: counts 0, 0, 2
			name: "only PreferNoSchedule taints are scored",
			pod: withTolerations(mkPod(1, 1),
				sim.Toleration{Key: "cpu-type", Value: "arm64", Effect: sim.NoSchedule},
				sim.Toleration{Key: "disk-type", Value: "ssd", Effect: sim.NoSchedule}),
			nodes: []sim.Node{
				mkNode("nodeA", 1, 1, 0, 0),
				mkNode("nodeB", 1, 1, 0, 0, taints(sim.Taint{Key: "cpu-type", Value: "arm64", Effect: sim.NoSchedule})),
				mkNode("nodeC", 1, 1, 0, 0, taints(arm, ssd)),
			},
			want: []int64{100, 100, 0},
		},
		{
			name:  "no tolerations lands on the node without taints",
			pod:   mkPod(1, 1),
			nodes: []sim.Node{mkNode("nodeA", 1, 1, 0, 0), mkNode("nodeB", 1, 1, 0, 0, taints(arm))},
			want:  []int64{100, 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := make([]int64, len(tt.nodes))
			if !(TaintToleration{}).Score(tt.nodes, tt.pod.Spec, allCand(len(tt.nodes)), dst) {
				t.Fatal("Score returned false; want true")
			}
			if !slices.Equal(dst, tt.want) {
				t.Errorf("scores = %v; want %v", dst, tt.want)
			}
		})
	}
}

// Cases ported from kubernetes/kubernetes
// pkg/scheduler/framework/plugins/tainttoleration/taint_toleration_test.go
// (TestTaintTolerationFilter). Operator Equal is Exists == false.
func TestTaintTolerationFilter(t *testing.T) {
	user1 := sim.Taint{Key: "dedicated", Value: "user1", Effect: sim.NoSchedule}
	tests := []struct {
		name string
		tols []sim.Toleration
		ts   []sim.Taint
		want bool
	}{
		{"no tolerations, NoSchedule taint", nil, []sim.Taint{user1}, false},
		{"Equal toleration matching key, value and effect", []sim.Toleration{{Key: "dedicated", Value: "user1", Effect: sim.NoSchedule}}, []sim.Taint{user1}, true},
		{"Equal toleration with another value", []sim.Toleration{{Key: "dedicated", Value: "user2", Effect: sim.NoSchedule}}, []sim.Taint{user1}, false},
		{"Exists toleration ignores the value", []sim.Toleration{{Key: "foo", Exists: true, Effect: sim.NoSchedule}}, []sim.Taint{{Key: "foo", Value: "bar", Effect: sim.NoSchedule}}, true},
		{
			"every taint tolerated",
			[]sim.Toleration{{Key: "dedicated", Value: "user2", Effect: sim.NoSchedule}, {Key: "foo", Exists: true, Effect: sim.NoSchedule}},
			[]sim.Taint{{Key: "dedicated", Value: "user2", Effect: sim.NoSchedule}, {Key: "foo", Value: "bar", Effect: sim.NoSchedule}},
			true,
		},
		{"matching key and value but another effect", []sim.Toleration{{Key: "foo", Value: "bar", Effect: sim.PreferNoSchedule}}, []sim.Taint{{Key: "foo", Value: "bar", Effect: sim.NoSchedule}}, false},
		{"empty toleration effect matches every effect", []sim.Toleration{{Key: "foo", Value: "bar"}}, []sim.Taint{{Key: "foo", Value: "bar", Effect: sim.NoSchedule}}, true},
		{"PreferNoSchedule taint never blocks", []sim.Toleration{{Key: "dedicated", Value: "user2", Effect: sim.NoSchedule}}, []sim.Taint{{Key: "dedicated", Value: "user1", Effect: sim.PreferNoSchedule}}, true},
		{"PreferNoSchedule taint, no tolerations", nil, []sim.Taint{{Key: "dedicated", Value: "user1", Effect: sim.PreferNoSchedule}}, true},
		{"NoExecute taint blocks", nil, []sim.Taint{{Key: "dedicated", Value: "user1", Effect: sim.NoExecute}}, false},
		{"empty key Exists tolerates everything", []sim.Toleration{{Exists: true}}, []sim.Taint{user1, {Key: "x", Effect: sim.NoExecute}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := sim.NewCluster(0, mkNode("nodeA", 1000, 1000, 0, 0, taints(tt.ts...)))
			p := withTolerations(mkPod(1, 1), tt.tols...)
			got := len((TaintToleration{}).Filter(c.Nodes(), p.Spec, []int32{0})) == 1
			if got != tt.want {
				t.Errorf("Filter kept the node = %v; want %v", got, tt.want)
			}
			if want := sim.ToleratesTaints(&c.Nodes()[0], p.Spec); got != want {
				t.Errorf("Filter = %v disagrees with sim.ToleratesTaints = %v", got, want)
			}
		})
	}
}
