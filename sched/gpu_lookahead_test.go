package sched

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kubesim/kubesim/sim"
)

// twoNodeTrap is a workload where FGD strands a whole-GPU pair: node A has
// one GPU, node B two, and B is ranked first. The pod list holds twenty
// one-GPU pods and one two-GPU pod, so FGD's pod-type distribution (95% of
// the pods) holds only the one-GPU type; a one-GPU pod changes no node's
// fragmentation under it (score 50 on both), the tie goes to B by rank, and
// the two-GPU pod that follows fits nowhere. Placing the first pod on A
// leaves B's pair for it.
func twoNodeTrap() (*sim.GPUWorkload, []int32, []int32) {
	w := &sim.GPUWorkload{
		Name:   "trap",
		Models: []string{"M0"},
		Nodes: []sim.GPUNodeSpec{
			{Name: "A", CPU: 16000, Mem: 65536, GPUs: 1, Model: 0},
			{Name: "B", CPU: 16000, Mem: 65536, GPUs: 2, Model: 0},
		},
	}
	for range 20 {
		w.Pods = append(w.Pods, sim.GPUPodSpec{Name: "one", CPU: 1000, Mem: 1024, GPU: sim.GPURequest{Count: 1, Milli: 1000}})
	}
	w.Pods = append(w.Pods, sim.GPUPodSpec{Name: "two", CPU: 1000, Mem: 1024, GPU: sim.GPURequest{Count: 2, Milli: 1000}})
	return w, []int32{0, 20}, []int32{1, 0}
}

func TestLookaheadAvoidsTheTrap(t *testing.T) {
	w, order, rank := twoNodeTrap()
	c := sim.NewGPUCluster(w, rank)
	f, err := NewGPU(NameFGD, 1)
	if err != nil {
		t.Fatal(err)
	}
	rf, err := sim.RunGPUOrder(w, c, f, order)
	if err != nil {
		t.Fatal(err)
	}
	if rf.Placed != 1 || rf.Failed != 1 {
		t.Fatalf("fgd placed %d, failed %d: want 1 and 1 (the trap)", rf.Placed, rf.Failed)
	}
	for _, cands := range []int{1, 2} {
		l, err := NewGPULookahead(w, order, LookaheadOptions{Horizon: 1, Candidates: cands})
		if err != nil {
			t.Fatal(err)
		}
		r, err := sim.RunGPUOrder(w, c, l, order)
		if err != nil || l.Err() != nil {
			t.Fatal(err, l.Err())
		}
		want := 2 // both pods placed with a second candidate to try
		if cands == 1 {
			want = 1 // FGD's node only
		}
		if r.Placed != want {
			t.Errorf("oracle with %d candidates placed %d: want %d", cands, r.Placed, want)
		}
		st := l.Stats()
		if cands == 2 && (st.Searched != 1 || st.Changed != 1) {
			t.Errorf("stats %+v: want one decision searched and changed", st)
		}
	}
}

// randomGPUWorkload is a small cluster of mixed nodes and a pod list of
// shares, whole GPUs and CPU-only pods.
func randomGPUWorkload(r *rand.Rand, nodes, pods int) *sim.GPUWorkload {
	w := &sim.GPUWorkload{Name: "random", Models: []string{"M0", "M1"}}
	for i := range nodes {
		g := []int8{1, 2, 4, 8}[r.IntN(4)]
		w.Nodes = append(w.Nodes, sim.GPUNodeSpec{Name: string(rune('a'+i%26)) + string(rune('a'+i/26)),
			CPU: int64(16+r.IntN(5)*16) * 1000, Mem: 262144, GPUs: g, Model: int8(r.IntN(2))})
	}
	for range pods {
		p := sim.GPUPodSpec{Name: "p", CPU: int64(1+r.IntN(12)) * 1000, Mem: 1024}
		switch r.IntN(5) {
		case 0: // CPU only
		case 1, 2:
			p.GPU = sim.GPURequest{Count: 1, Milli: int16(100 * (1 + r.IntN(9)))}
		default:
			p.GPU = sim.GPURequest{Count: int8(1 + r.IntN(4)), Milli: 1000}
		}
		w.Pods = append(w.Pods, p)
	}
	return w
}

// naiveLookahead is GPULookahead without its copy reuse and caches: every
// rollout copies the whole cluster and runs a fresh FGD. The two must
// decide alike.
type naiveLookahead struct {
	w     *sim.GPUWorkload
	order []int32
	pos   int
	opts  LookaheadOptions
}

func (n *naiveLookahead) Name() string { return "naive" }

func (n *naiveLookahead) Schedule(c *sim.GPUCluster, pod int, p *sim.GPUPodSpec) (int, sim.GPUMask) {
	n.pos++
	var real fgd
	real.prepare(c, pod, p)
	var cands []lookCand
	for i := range c.Nodes {
		if c.Nodes[i].Fits(p) {
			cands = insertCand(cands, lookCand{node: i, score: real.score(c, i, p)}, n.opts.Candidates, c.Rank)
		}
	}
	if len(cands) == 0 {
		return -1, 0
	}
	for k := range cands {
		cands[k].gpus = real.gpus(c, cands[k].node, p)
	}
	if n.opts.Refuse {
		cands = append(cands, lookCand{node: -1})
	}
	if len(cands) == 1 {
		return cands[0].node, cands[0].gpus
	}
	fut := n.order[n.pos:min(n.pos+n.opts.Horizon, len(n.order))]
	best, bestVal := 0, int64(-1)
	for k, cd := range cands {
		cp := *c
		cp.Nodes = slices.Clone(c.Nodes)
		val, all := int64(0), true
		if cd.node >= 0 {
			cp.Place(cd.node, p, cd.gpus)
			val = p.GPU.Total()
		}
		roll := &gpuFramework{name: NameFGD, score: &fgd{}}
		for _, q := range fut {
			qs := &n.w.Pods[q]
			i, m := roll.Schedule(&cp, int(q), qs)
			if i < 0 {
				all = false
				continue
			}
			cp.Place(i, qs, m)
			val += qs.GPU.Total()
		}
		if k == 0 && all {
			return cd.node, cd.gpus
		}
		if val > bestVal {
			best, bestVal = k, val
		}
	}
	return cands[best].node, cands[best].gpus
}

func TestLookaheadMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	changed, refused := 0, 0
	for trial := range 12 {
		w := randomGPUWorkload(r, 6+r.IntN(10), 60+r.IntN(60))
		seed := uint64(trial)
		order, rank := sim.GPUArrivals(w, 1.3, seed)
		c := sim.NewGPUCluster(w, rank)
		opts := LookaheadOptions{Horizon: 1 + r.IntN(30), Candidates: 1 + r.IntN(4), Refuse: trial%2 == 1}
		l, err := NewGPULookahead(w, order, opts)
		if err != nil {
			t.Fatal(err)
		}
		got, err := sim.RunGPUOrder(w, c, l, order)
		if err != nil || l.Err() != nil {
			t.Fatal(err, l.Err())
		}
		want, err := sim.RunGPUOrder(w, c, &naiveLookahead{w: w, order: order, opts: opts}, order)
		if err != nil {
			t.Fatal(err)
		}
		got.Scheduler, want.Scheduler = "", ""
		if got.Placed != want.Placed || got.AllocPct != want.AllocPct ||
			!slices.EqualFunc(got.FragCurve, want.FragCurve, func(a, b float64) bool { return a == b || a != a && b != b }) {
			t.Fatalf("trial %d (%+v): lookahead placed %d (%.4f%%), the naive one %d (%.4f%%)",
				trial, opts, got.Placed, got.AllocPct, want.Placed, want.AllocPct)
		}
		changed += l.Stats().Changed
		refused += l.Stats().Refused
	}
	if changed == refused || refused == 0 {
		t.Fatalf("%d decisions left FGD's node, %d of them refusals, in 12 random runs: want both kinds", changed, refused)
	}
}

// TestLookaheadRefuses: with node B alone (two GPUs), FGD puts the one-GPU
// pod there and the two-GPU pod fails; refusing the first places 2,000
// milli instead of 1,000.
func TestLookaheadRefuses(t *testing.T) {
	w, order, _ := twoNodeTrap()
	w.Nodes = w.Nodes[1:]
	c := sim.NewGPUCluster(w, nil)
	for _, refuse := range []bool{false, true} {
		l, err := NewGPULookahead(w, order, LookaheadOptions{Horizon: 1, Candidates: 4, Refuse: refuse})
		if err != nil {
			t.Fatal(err)
		}
		r, err := sim.RunGPUOrder(w, c, l, order)
		if err != nil {
			t.Fatal(err)
		}
		want, name := 1, "fgd-oracle"
		if refuse {
			want, name = 2, "fgd-oracle-admit"
		}
		if got := r.Placed + r.Failed; got != 2 || r.AllocPct != 50*float64(want) || l.Name() != name {
			t.Errorf("refuse %v: %s placed %d (%.1f%%); want %s with %.0f%% of the GPUs", refuse, l.Name(), r.Placed, r.AllocPct, name, 50*float64(want))
		}
		if refuse && l.Stats().Refused != 1 {
			t.Errorf("stats %+v: want one refusal", l.Stats())
		}
	}
}

func TestLookaheadOneCandidateIsFGD(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	w := randomGPUWorkload(r, 12, 120)
	order, rank := sim.GPUArrivals(w, 1.3, 5)
	c := sim.NewGPUCluster(w, rank)
	f, _ := NewGPU(NameFGD, 5)
	want, err := sim.RunGPUOrder(w, c, f, order)
	if err != nil {
		t.Fatal(err)
	}
	for _, samples := range []int{0, 3} {
		l, err := NewGPULookahead(w, order, LookaheadOptions{Horizon: 20, Candidates: 1, Samples: samples, Seed: 9})
		if err != nil {
			t.Fatal(err)
		}
		got, err := sim.RunGPUOrder(w, c, l, order)
		if err != nil {
			t.Fatal(err)
		}
		if got.Placed != want.Placed || got.AllocPct != want.AllocPct || l.Stats().Rollouts != 0 {
			t.Errorf("samples %d: one candidate placed %d (%.4f%%, %d rollouts), fgd %d (%.4f%%)",
				samples, got.Placed, got.AllocPct, l.Stats().Rollouts, want.Placed, want.AllocPct)
		}
	}
}

func TestLookaheadSampledIsSeeded(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	w := randomGPUWorkload(r, 10, 150)
	order, rank := sim.GPUArrivals(w, 1.3, 2)
	c := sim.NewGPUCluster(w, rank)
	run := func(seed uint64) (sim.GPUResult, LookaheadStats) {
		l, err := NewGPULookahead(w, order, LookaheadOptions{Horizon: 15, Candidates: 3, Samples: 2, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		res, err := sim.RunGPUOrder(w, c, l, order)
		if err != nil {
			t.Fatal(err)
		}
		if l.Name() != "fgd-lookahead" {
			t.Errorf("name %q", l.Name())
		}
		return res, l.Stats()
	}
	a, sa := run(1)
	b, sb := run(1)
	if a.AllocPct != b.AllocPct || sa != sb {
		t.Errorf("same seed, different runs: %.4f %+v and %.4f %+v", a.AllocPct, sa, b.AllocPct, sb)
	}
	if sa.Rollouts == 0 {
		t.Error("no rollout ran: the workload never made FGD fail a sampled pod")
	}
}

func TestLookaheadErrors(t *testing.T) {
	w, order, rank := twoNodeTrap()
	for _, o := range []LookaheadOptions{{Horizon: 0, Candidates: 2}, {Horizon: 5, Candidates: 0}, {Horizon: 5, Candidates: 2, Samples: -1}} {
		if _, err := NewGPULookahead(w, order, o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
	// an order the runs do not follow: placed as FGD, and Err says so
	l, err := NewGPULookahead(w, []int32{20, 0}, LookaheadOptions{Horizon: 1, Candidates: 2})
	if err != nil {
		t.Fatal(err)
	}
	r, err := sim.RunGPUOrder(w, sim.NewGPUCluster(w, rank), l, order)
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(l.Err(), ErrLookaheadOrder) || r.Placed != 1 {
		t.Errorf("out of order: err %v, placed %d: want ErrLookaheadOrder and FGD's 1", l.Err(), r.Placed)
	}
}
