package sched

import (
	"slices"
	"testing"

	"github.com/kubesim/kubesim/sim"
)

func withAffinity(p *sim.Pod, a *sim.Affinity) *sim.Pod {
	p.Spec.Affinity = a
	return p
}

func TestNodeAffinityFilter(t *testing.T) {
	nodes := []sim.Node{
		mkNode("zone-a", 1000, 1000, 0, 0, labels(sim.LabelZone, "a")),
		mkNode("zone-b", 1000, 1000, 0, 0, labels(sim.LabelZone, "b")),
		mkNode("no-zone", 1000, 1000, 0, 0),
	}
	tests := []struct {
		name string
		aff  *sim.Affinity
		want []int32
	}{
		{"no affinity keeps every node", nil, []int32{0, 1, 2}},
		{"preferred terms only keep every node", &sim.Affinity{Preferred: []sim.PreferredTerm{{Weight: 1, Term: sim.Term{{Key: sim.LabelZone, Op: sim.OpIn, Values: []string{"a"}}}}}}, []int32{0, 1, 2}},
		{"In", &sim.Affinity{Required: []sim.Term{{{Key: sim.LabelZone, Op: sim.OpIn, Values: []string{"a"}}}}}, []int32{0}},
		// NotIn matches nodes without the label, as in Kubernetes
		{"NotIn", &sim.Affinity{Required: []sim.Term{{{Key: sim.LabelZone, Op: sim.OpNotIn, Values: []string{"a"}}}}}, []int32{1, 2}},
		{"Exists", &sim.Affinity{Required: []sim.Term{{{Key: sim.LabelZone, Op: sim.OpExists}}}}, []int32{0, 1}},
		{"DoesNotExist", &sim.Affinity{Required: []sim.Term{{{Key: sim.LabelZone, Op: sim.OpDoesNotExist}}}}, []int32{2}},
		{
			"terms are ORed",
			&sim.Affinity{Required: []sim.Term{
				{{Key: sim.LabelZone, Op: sim.OpIn, Values: []string{"b"}}},
				{{Key: sim.LabelZone, Op: sim.OpDoesNotExist}},
			}},
			[]int32{1, 2},
		},
		{
			"requirements of a term are ANDed",
			&sim.Affinity{Required: []sim.Term{{
				{Key: sim.LabelZone, Op: sim.OpExists},
				{Key: sim.LabelZone, Op: sim.OpNotIn, Values: []string{"a"}},
			}}},
			[]int32{1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := withAffinity(mkPod(1, 1), tt.aff)
			got := (NodeAffinity{}).Filter(nodes, p.Spec, allCand(len(nodes)))
			if !slices.Equal(got, tt.want) {
				t.Errorf("Filter kept %v; want %v", got, tt.want)
			}
			for i := range nodes {
				if kept, want := slices.Contains(got, int32(i)), sim.MatchesAffinity(&nodes[i], p.Spec); kept != want {
					t.Errorf("node %d: Filter = %v disagrees with sim.MatchesAffinity = %v", i, kept, want)
				}
			}
		})
	}
}

func TestNodeAffinityScore(t *testing.T) {
	nodes := []sim.Node{
		mkNode("a-ssd", 1000, 1000, 0, 0, labels(sim.LabelZone, "a", "disk", "ssd")),
		mkNode("a", 1000, 1000, 0, 0, labels(sim.LabelZone, "a")),
		mkNode("b-ssd", 1000, 1000, 0, 0, labels(sim.LabelZone, "b", "disk", "ssd")),
		mkNode("bare", 1000, 1000, 0, 0),
	}
	zoneA := sim.Term{{Key: sim.LabelZone, Op: sim.OpIn, Values: []string{"a"}}}
	ssd := sim.Term{{Key: "disk", Op: sim.OpExists}}
	tests := []struct {
		name     string
		aff      *sim.Affinity
		wantSkip bool
		want     []int64
	}{
		{name: "no affinity is skipped", aff: nil, wantSkip: true},
		{name: "required terms only are skipped", aff: &sim.Affinity{Required: []sim.Term{zoneA}}, wantSkip: true},
		{
			// raw sums: a-ssd 2+8 = 10, a 2, b-ssd 8, bare 0; max 10:
			// 100*10/10 = 100, 100*2/10 = 20, 100*8/10 = 80, 0
			name: "weights of matching terms add up, then normalise",
			aff:  &sim.Affinity{Preferred: []sim.PreferredTerm{{Weight: 2, Term: zoneA}, {Weight: 8, Term: ssd}}},
			want: []int64{100, 20, 80, 0},
		},
		{
			// raw 3, 3, 0, 0; max 3: 100, 100, 0, 0
			name: "single term",
			aff:  &sim.Affinity{Preferred: []sim.PreferredTerm{{Weight: 3, Term: zoneA}}},
			want: []int64{100, 100, 0, 0},
		},
		{
			// no node matches: all raw 0 stay 0
			name: "no node matches",
			aff:  &sim.Affinity{Preferred: []sim.PreferredTerm{{Weight: 5, Term: sim.Term{{Key: "gpu", Op: sim.OpExists}}}}},
			want: []int64{0, 0, 0, 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := withAffinity(mkPod(1, 1), tt.aff)
			dst := make([]int64, len(nodes))
			ok := (NodeAffinity{}).Score(nodes, p.Spec, allCand(len(nodes)), dst)
			if ok == tt.wantSkip {
				t.Fatalf("Score returned %v; want %v", ok, !tt.wantSkip)
			}
			if ok && !slices.Equal(dst, tt.want) {
				t.Errorf("scores = %v; want %v", dst, tt.want)
			}
		})
	}
}
