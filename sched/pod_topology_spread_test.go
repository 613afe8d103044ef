package sched

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kubesim/kubesim/sim"
)

// groupPod returns a pod requesting cpu and mem in group g ("" when g is
// sim.NoGroup).
func groupPod(cpu, mem int64, g sim.GroupID) *sim.Pod {
	p := mkPod(cpu, mem)
	p.Group = g
	if g >= 0 {
		p.Spec.Group = fmt.Sprintf("g%d", g)
	}
	return p
}

// spreadCluster is the hand-computed cases' cluster: zones a and b, with
// the given pods of group 0 on each node, and disk=ssd on n1 and n3.
//
//	node  zone  ssd  group-0 pods
//	n0    a          2
//	n1    a     yes  0
//	n2    b          1
//	n3    b     yes  0
//	n4    -          1     (no zone label; only when withUnzoned)
func spreadCluster(withUnzoned bool) *sim.Cluster {
	nodes := []sim.Node{
		mkNode("n0", 4000, 8000, 0, 0, labels(sim.LabelZone, "a")),
		mkNode("n1", 4000, 8000, 0, 0, labels(sim.LabelZone, "a", "disk", "ssd")),
		mkNode("n2", 4000, 8000, 0, 0, labels(sim.LabelZone, "b")),
		mkNode("n3", 4000, 8000, 0, 0, labels(sim.LabelZone, "b", "disk", "ssd")),
	}
	pods := []int32{2, 0, 1, 0}
	if withUnzoned {
		nodes = append(nodes, mkNode("n4", 4000, 8000, 0, 0))
		pods = append(pods, 1)
	}
	c := sim.NewCluster(0, nodes...)
	for i, k := range pods {
		c.AddGroupPods(i, 0, k)
	}
	return c
}

func TestPodTopologySpreadScores(t *testing.T) {
	ssd := &sim.Affinity{Required: []sim.Term{{{Key: "disk", Op: sim.OpExists}}}}
	tests := []struct {
		name     string
		unzoned  bool
		cand     []int32
		group    sim.GroupID
		affinity *sim.Affinity
		want     []int64 // nil: skipped
	}{
		// w_host = ln(4+2) = 1.7918, two zones: w_zone = ln(2+2) = 1.3863;
		// zone a has 2 pods, b 1.
		// n0: 2*1.7918 + 2 + 2*1.3863 + 4 = 12.356 -> 12
		// n1: 0 + 2 + 2*1.3863 + 4 = 8.773 -> 9
		// n2: 1.7918 + 2 + 1.3863 + 4 = 9.178 -> 9
		// n3: 0 + 2 + 1.3863 + 4 = 7.386 -> 7
		// min 7, max 12: 100*(19-s)/12 = 700/12, 1000/12, 1000/12, 1200/12
		{name: "two zones", cand: []int32{0, 1, 2, 3}, want: []int64{58, 83, 83, 100}},
		// The order of the candidates does not matter.
		{name: "two zones, reversed", cand: []int32{3, 2, 1, 0}, want: []int64{100, 83, 83, 58}},
		// n4 has no zone label: it scores the hostname term only, and the
		// missing label counts as a third zone value.
		// w_host = ln(5+2) = 1.9459, w_zone = ln(3+2) = 1.6094
		// n0: 2*1.9459 + 2 + 2*1.6094 + 4 = 13.111 -> 13
		// n1: 2 + 2*1.6094 + 4 = 9.219 -> 9
		// n2: 1.9459 + 2 + 1.6094 + 4 = 9.555 -> 10
		// n3: 2 + 1.6094 + 4 = 7.609 -> 8
		// n4: 1.9459 + 2 = 3.946 -> 4
		// min 4, max 13: 100*(17-s)/13 = 400/13, 800/13, 700/13, 900/13, 1300/13
		{name: "a node without a zone", unzoned: true, cand: []int32{0, 1, 2, 3, 4}, want: []int64{30, 61, 53, 69, 100}},
		// Only n1 and n3 passed the filters; the pods on n0 and n2 still
		// count in their zones. w_host = ln(2+2) = 1.3863, w_zone = ln(4)
		// n1: 2 + 2*1.3863 + 4 = 8.773 -> 9
		// n3: 2 + 1.3863 + 4 = 7.386 -> 7
		// min 7, max 9: 100*(16-9)/9 = 77, 100*9/9 = 100
		{name: "candidates see the whole zone", cand: []int32{1, 3}, want: []int64{77, 100}},
		// Required affinity disk=ssd: only n1 and n3 match, so zone counts
		// leave out n0 and n2 (nodeAffinityPolicy Honor): both zones 0.
		// n1 = n3 = 0 + 2 + 0 + 4 = 6: max = min = 6, 100*(12-6)/6 = 100.
		{name: "required affinity honoured", cand: []int32{1, 3}, affinity: ssd, want: []int64{100, 100}},
		// Group 1 has no pods anywhere: every zoned node scores 2 + 4 = 6,
		// 100*(6+6-6)/6 = 100.
		{name: "group without pods", cand: []int32{0, 1, 2, 3}, group: 1, want: []int64{100, 100, 100, 100}},
		// ... but n4, without a zone, scores 2 against the others' 6:
		// min 2, max 6: zoned 100*(8-6)/6 = 33, n4 100*(8-2)/6 = 100.
		{name: "group without pods, a node without a zone", unzoned: true, cand: []int32{0, 1, 4}, group: 1, want: []int64{33, 33, 100}},
		{name: "no group: skipped", cand: []int32{0, 1, 2, 3}, group: sim.NoGroup, want: nil},
	}
	pl := NewPodTopologySpread()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := spreadCluster(tt.unzoned)
			p := groupPod(100, 100, tt.group)
			p.Spec.Affinity = tt.affinity
			dst := make([]int64, len(tt.cand))
			ok := pl.ScoreCluster(c, p, tt.cand, dst)
			if ok != (tt.want != nil) || (ok && !slices.Equal(dst, tt.want)) {
				t.Errorf("ScoreCluster = %v, %v; want %v", dst, ok, tt.want)
			}
			if pl.Score(c.Nodes(), p.Spec, tt.cand, dst) {
				t.Error("Score without the cluster did not skip")
			}
		})
	}
}

// TestKubeDefaultSpreads: on two identical nodes in one zone z, where a
// holds 3 pods of the pod's group, kube-default-nospread ties and draws
// either, and kube-default goes to b. Spreading:
// w_host = ln(2+2) = 1.3863, w_zone = ln(1+2) = 1.0986, zone z holds 3;
// a: 3*1.3863 + 2 + 3*1.0986 + 4 = 13.455 -> 13; b: 2 + 3.296 + 4 = 9.296 -> 9;
// min 9, max 13: a 100*(22-13)/13 = 69, b 100*13/13 = 100; weight 2: b by 62.
func TestKubeDefaultSpreads(t *testing.T) {
	c := sim.NewCluster(0,
		mkNode("a", 4000, 8000, 1000, 2000, labels(sim.LabelZone, "z")),
		mkNode("b", 4000, 8000, 1000, 2000, labels(sim.LabelZone, "z")),
	)
	c.AddGroupPods(0, 0, 3)
	p := groupPod(500, 1000, 0)
	spread, _ := New(NameKubeDefault, 1)
	nospread, _ := New(NameKubeDefaultNoSpread, 1)
	seen := map[int]int{}
	for range 100 {
		if got := spread.Schedule(c, p); got != 1 {
			t.Fatalf("kube-default chose node %d; want 1 (b, no pod of the group)", got)
		}
		seen[nospread.Schedule(c, p)]++
	}
	if len(seen) != 2 {
		t.Errorf("kube-default-nospread chose %v; want both nodes (a tie)", seen)
	}
}

// refSpread is PodTopologySpread's system-default scoring written the way
// upstream's scoring.go computes it: zone values as label strings in maps
// (the missing label as ""), counts summed over every node from per-node
// pod counts, float64 scores rounded with math.Round.
func refSpread(nodes []sim.Node, counts [][]int32, p *sim.Pod, cand []int32) ([]int64, bool) {
	if p.Spec.Group == "" {
		return nil, false
	}
	cnt := func(i int) int64 {
		if int(p.Group) < len(counts[i]) {
			return int64(counts[i][p.Group])
		}
		return 0
	}
	zoneCount := map[string]*int64{}
	size := 0
	for _, i := range cand {
		v := nodes[i].Spec.Labels[sim.LabelZone]
		if zoneCount[v] == nil {
			zoneCount[v] = new(int64)
			size++
		}
	}
	wHost, wZone := math.Log(float64(len(cand)+2)), math.Log(float64(size+2))
	for i := range nodes {
		if !sim.MatchesAffinity(&nodes[i], p.Spec) {
			continue
		}
		if c := zoneCount[nodes[i].Spec.Labels[sim.LabelZone]]; c != nil {
			*c += cnt(i)
		}
	}
	scores := make([]int64, len(cand))
	for j, i := range cand {
		var score float64
		score += float64(cnt(int(i)))*wHost + float64(hostnameMaxSkew-1)
		if v, ok := nodes[i].Spec.Labels[sim.LabelZone]; ok {
			score += float64(*zoneCount[v])*wZone + float64(zoneMaxSkew-1)
		}
		scores[j] = int64(math.Round(score))
	}
	minS, maxS := int64(math.MaxInt64), int64(0)
	for _, s := range scores {
		minS, maxS = min(minS, s), max(maxS, s)
	}
	for j, s := range scores {
		if maxS == 0 {
			scores[j] = MaxNodeScore
			continue
		}
		scores[j] = MaxNodeScore * (maxS + minS - s) / maxS
	}
	return scores, true
}

// addRandomGroups puts 0-3 pods of each of groups groups on random nodes
// of c (about a third of the node-group pairs) and returns the counts per
// node slot and group.
func addRandomGroups(r *rand.Rand, c *sim.Cluster, groups int) [][]int32 {
	counts := make([][]int32, c.Len())
	for i := range counts {
		counts[i] = make([]int32, groups)
		for g := range groups {
			if r.IntN(3) == 0 {
				k := int32(1 + r.IntN(3))
				counts[i][g] = k
				c.AddGroupPods(i, sim.GroupID(g), k)
			}
		}
	}
	return counts
}

// randomGroup gives p one of groups+1 groups (the last one has no pods in
// clusters from addRandomGroups), or, one time in noGroup, none.
func randomGroup(r *rand.Rand, p *sim.Pod, noGroup int) {
	if r.IntN(noGroup) == 0 {
		p.Group, p.Spec.Group = sim.NoGroup, ""
		return
	}
	g := r.IntN(5)
	p.Group, p.Spec.Group = sim.GroupID(g), fmt.Sprintf("g%d", g)
}

// TestPodTopologySpreadMatchesReference compares the plugin, which reads the
// cluster's incremental group counts, with refSpread on random clusters
// (zones a-c, or over 63 zones, and nodes without a zone), random candidate
// subsets and pods
// with and without required affinity, reusing one plugin so that stale
// scratch state would show.
func TestPodTopologySpreadMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	pl := NewPodTopologySpread()
	for round := range 2000 {
		c := randomCluster(r, 1+r.IntN(60))
		if round%8 == 0 {
			// Many zones: past zoneValues' bit mask.
			nodes := randomCluster(r, 120+r.IntN(80)).Nodes()
			for i := range nodes {
				if _, ok := nodes[i].Spec.Labels[sim.LabelZone]; ok {
					nodes[i].Spec.Labels[sim.LabelZone] = fmt.Sprintf("z%d", r.IntN(300))
				}
			}
			c = sim.NewCluster(0, nodes...)
			if c.Domains(0) < 63 {
				t.Fatalf("round %d: %d zones", round, c.Domains(0))
			}
		}
		counts := addRandomGroups(r, c, 4)
		nodes := c.Nodes()
		for range 4 {
			p := randomPod(r)
			randomGroup(r, p, 6)
			var cand []int32
			for i := range nodes {
				if r.IntN(3) > 0 {
					cand = append(cand, int32(i))
				}
			}
			r.Shuffle(len(cand), func(a, b int) { cand[a], cand[b] = cand[b], cand[a] })
			want, wantOK := refSpread(nodes, counts, p, cand)
			got := make([]int64, len(cand))
			ok := pl.ScoreCluster(c, p, cand, got)
			if len(cand) == 0 {
				continue // the framework never scores no candidates
			}
			if ok != wantOK || (ok && !slices.Equal(got, want)) {
				t.Fatalf("round %d, group %q, affinity %+v, cand %v: got %v, %v; want %v, %v",
					round, p.Spec.Group, p.Spec.Affinity, cand, got, ok, want, wantOK)
			}
		}
	}
}

// TestRoundPositive checks roundPositive against math.Round at and around
// every half between 1 and 2^20, and on random values up to 2^51.
func TestRoundPositive(t *testing.T) {
	check := func(x float64) {
		if got, want := roundPositive(x), int64(math.Round(x)); got != want {
			t.Fatalf("roundPositive(%v) = %d; want %d", x, got, want)
		}
	}
	for k := 1.0; k < 1<<20; k++ {
		h := k + 0.5
		check(h)
		check(math.Nextafter(h, 0))
		check(math.Nextafter(h, math.Inf(1)))
		check(k)
		check(math.Nextafter(k, 0))
	}
	r := rand.New(rand.NewPCG(5, 6))
	for range 1_000_000 {
		check(1 + r.Float64()*float64(int64(1)<<r.IntN(52)))
	}
}
