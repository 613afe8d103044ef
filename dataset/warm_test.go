package dataset

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/sim"
)

// warmLines is a trace whose containers' machines are known; the window
// [1000 s, 5000 s) of it opens with m_a and m_b up and m_c installing.
var warmLines = map[string][]string{
	MachineMeta: {
		"m_a,0,1,r1,96,100,USING",
		"m_b,0,2,r2,96,100,USING",
		"m_c,0,3,r3,96,100,IMPORT_INSTALLING",
		"m_c,2000,3,r3,96,100,USING", // joins 1000 s into the window
	},
	ContainerMeta: {
		"c_1,m_a,0,app_x,started,400,400,1",
		"c_2,m_a,0,app_x,started,400,400,1",
		"c_2,m_b,500,app_x,started,400,400,1",  // moved: its latest record before the window is on m_b
		"c_2,m_a,1500,app_x,started,400,400,1", // inside the window: not where it ran at the start
		"c_3,m_c,0,app_y,started,200,200,1",    // m_c is not a node at the window start
		"c_4,m_a,3000,app_y,started,200,200,1", // first deployed inside the window
		"c_5,m_z,0,app_y,started,200,200,1",    // a machine missing from machine_meta
	},
}

var warmWindow = Window{From: 1000 * sim.Second, To: 5000 * sim.Second}

// initialByName maps each warm pod's name to its node's name.
func initialByName(w *sim.Workload) map[string]string {
	m := make(map[string]string, len(w.Initial))
	for _, pl := range w.Initial {
		m[w.Pods[pl.Pod].Name] = w.Nodes[pl.Node].Name
	}
	return m
}

func TestLoadWarmStartPlacements(t *testing.T) {
	dir := writeTrace(t, warmLines)
	cold := loadBoth(t, dir, LoadOptions{Window: warmWindow})
	warm := loadBoth(t, dir, LoadOptions{Window: warmWindow, WarmStart: true})
	if cold.Initial != nil {
		t.Errorf("cold start has initial placements %v", cold.Initial)
	}
	// c_1 ran on m_a and c_2 last on m_b before the window; c_3's m_c joins
	// later and c_5's m_z is no node, so both arrive at 0 as in a cold
	// start; c_4 arrives 2000 s into the window
	want := map[string]string{"c_1": "m_a", "c_2": "m_b"}
	if got := initialByName(warm); !reflect.DeepEqual(got, want) {
		t.Errorf("initial placements %v; want %v", got, want)
	}
	// pods arriving at 0 in unit order: c_1, c_2, c_3, c_5, then c_4
	if wantInit := []sim.Placement{{Pod: 0, Node: 0}, {Pod: 1, Node: 1}}; !reflect.DeepEqual(warm.Initial, wantInit) {
		t.Errorf("Initial = %v; want %v", warm.Initial, wantInit)
	}
	// the warm start changes nothing else
	warm.Initial = nil
	if !reflect.DeepEqual(warm, cold) {
		t.Errorf("warm and cold workloads differ beyond Initial:\n%+v\n%+v", warm, cold)
	}
	// time stamp 0 means "before the trace": a window from 0 places the
	// containers recorded at 0 on their machines up at 0 (c_2 was on m_a
	// then; m_c is installing, m_z no machine)
	first := loadBoth(t, dir, LoadOptions{Window: Window{To: 1000 * sim.Second}, WarmStart: true})
	if got, want := initialByName(first), map[string]string{"c_1": "m_a", "c_2": "m_a"}; !reflect.DeepEqual(got, want) {
		t.Errorf("window from 0: initial placements %v; want %v", got, want)
	}
}

// With a load factor, the extra copies of warm containers are not warm and
// arrive spread over the window; copies of containers deployed inside the
// window keep the jitter.
func TestLoadWarmStartCopies(t *testing.T) {
	lines := map[string][]string{MachineMeta: warmLines[MachineMeta]}
	// 200 containers deployed before the window on m_a and m_b, and c_new
	// first deployed 2000 s into it
	for i := range 200 {
		lines[ContainerMeta] = append(lines[ContainerMeta], fmt.Sprintf("c_%03d,m_%c,0,app_x,started,100,100,0.1", i, 'a'+i%2))
	}
	lines[ContainerMeta] = append(lines[ContainerMeta], "c_new,m_a,3000,app_y,started,100,100,0.1")
	dir := convertTrace(t, writeTrace(t, lines))
	load := func(opts LoadOptions) *sim.Workload {
		t.Helper()
		opts.Window, opts.Jitter = warmWindow, 10*sim.Second
		w, err := Load(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	w := load(LoadOptions{WarmStart: true, LoadFactor: 3, Seed: 7})
	// 201 containers, 3 copies each
	if len(w.Pods) != 603 || len(w.Initial) != 200 {
		t.Fatalf("%d pods, %d placed; want 603 and 200", len(w.Pods), len(w.Initial))
	}
	for _, pl := range w.Initial {
		if p := w.Pods[pl.Pod]; strings.Contains(p.Name, "#") || p.Arrival != 0 {
			t.Errorf("placed pod %s arrives at %s; want an original at 0", p.Name, p.Arrival)
		}
	}
	var quarters [4]int
	for _, p := range w.Pods {
		name, isCopy := strings.CutSuffix(strings.TrimSuffix(p.Name, "#2"), "#1")
		isCopy = isCopy || strings.HasSuffix(p.Name, "#2")
		switch {
		case name == "c_new":
			// 2000 s into the window, copies within the 10 s jitter
			if p.Arrival < 2000*sim.Second || p.Arrival >= 2010*sim.Second || !isCopy && p.Arrival != 2000*sim.Second {
				t.Errorf("%s arrives at %s; want 2000 s (+ jitter below 10 s for a copy)", p.Name, p.Arrival)
			}
		case isCopy:
			if p.Arrival < 0 || p.Arrival >= w.End {
				t.Fatalf("copy %s arrives at %s, outside [0, %s)", p.Name, p.Arrival, w.End)
			}
			quarters[p.Arrival*4/w.End]++
		}
	}
	// 400 copies uniform over the window: 100 per quarter, standard
	// deviation sqrt(400 * 1/4 * 3/4) = 8.7; a burst at the start would put
	// them all in the first
	for q, n := range quarters {
		if n < 65 || n > 135 {
			t.Errorf("%d copies in quarter %d of the window (all: %v); want about 100", n, q, quarters)
		}
	}
	t.Run("deterministic under the seed", func(t *testing.T) {
		if again := load(LoadOptions{WarmStart: true, LoadFactor: 3, Seed: 7}); !reflect.DeepEqual(again, w) {
			t.Error("the same seed gave a different workload")
		}
		other := load(LoadOptions{WarmStart: true, LoadFactor: 3, Seed: 8})
		if reflect.DeepEqual(other.Pods, w.Pods) {
			t.Error("seeds 7 and 8 gave the same pods")
		}
		if !reflect.DeepEqual(initialByName(other), initialByName(w)) {
			t.Error("seeds 7 and 8 placed different containers (no machine sampling)")
		}
	})
	t.Run("other copies as without warm start", func(t *testing.T) {
		cold := load(LoadOptions{LoadFactor: 3, Seed: 7})
		if cold.Initial != nil {
			t.Fatalf("cold start has %d initial placements", len(cold.Initial))
		}
		arrivals := func(w *sim.Workload) map[string]sim.Time {
			m := make(map[string]sim.Time)
			for _, p := range w.Pods {
				if strings.HasPrefix(p.Name, "c_new") {
					m[p.Name] = p.Arrival
				}
			}
			return m
		}
		if a, b := arrivals(w), arrivals(cold); !reflect.DeepEqual(a, b) {
			t.Errorf("c_new's copies arrive at %v with warm start, %v without", a, b)
		}
		// without warm start the copies of pre-deployed containers arrive
		// within the jitter of the window start
		for _, p := range cold.Pods {
			if !strings.HasPrefix(p.Name, "c_new") && p.Arrival >= 10*sim.Second {
				t.Fatalf("cold copy %s arrives at %s; want below 10 s", p.Name, p.Arrival)
			}
		}
	})
}

// With machines sampled, every placement is on the node of the machine that
// ran the container, and only kept machines' containers are placed.
func TestLoadWarmStartSampled(t *testing.T) {
	lines := map[string][]string{}
	ran := make(map[string]string) // container -> machine
	for m := range 12 {
		lines[MachineMeta] = append(lines[MachineMeta], fmt.Sprintf("m_%02d,0,%d,r,96,100,USING", m, m))
		for c := range 3 {
			name := fmt.Sprintf("c_%02d_%d", m, c)
			lines[ContainerMeta] = append(lines[ContainerMeta], fmt.Sprintf("%s,m_%02d,0,app,started,100,100,0.1", name, m))
			ran[name] = fmt.Sprintf("m_%02d", m)
		}
	}
	dir := writeTrace(t, lines)
	for seed := range uint64(4) {
		w := loadBoth(t, dir, LoadOptions{Window: warmWindow, Machines: 5, Seed: seed, WarmStart: true})
		// 5 machines kept, 3 containers each, all up at the start
		if len(w.Nodes) != 5 || len(w.Pods) != 15 || len(w.Initial) != 15 {
			t.Fatalf("seed %d: %d nodes, %d pods, %d placed; want 5, 15, 15", seed, len(w.Nodes), len(w.Pods), len(w.Initial))
		}
		for pod, node := range initialByName(w) {
			if ran[pod] != node {
				t.Errorf("seed %d: %s placed on %s; it ran on %s", seed, pod, node, ran[pod])
			}
		}
	}
}

// On a synthetic trace, the warm containers fit on their nodes: the
// generator keeps online requests within every machine.
func TestLoadWarmStartSynthFits(t *testing.T) {
	dir := convertTrace(t, synthTrace(t, SynthOptions{Machines: 30, Days: 1, Seed: 6, BatchConcurrency: 0.4}))
	for _, k := range []int{10, 30} {
		w, err := Load(dir, LoadOptions{Window: Window{From: 10 * sim.Hour, To: 12 * sim.Hour}, Machines: k, Seed: 2, WarmStart: true, LoadFactor: 1.5})
		if err != nil {
			t.Fatal(err)
		}
		if rejected, placed := warmOverCapacity(w); rejected > 0 || placed == 0 {
			t.Errorf("K=%d: %d of %d warm pods do not fit their nodes; want none (of some)", k, rejected, placed)
		}
	}
}

// warmOverCapacity binds the initial placements in order, as the engine
// does, and counts those that would exceed the node's allocatable CPU or
// memory or its pod limit.
func warmOverCapacity(w *sim.Workload) (rejected, placed int) {
	used := make([]sim.Resources, len(w.Nodes))
	pods := make([]int32, len(w.Nodes))
	for _, pl := range w.Initial {
		n, p := &w.Nodes[pl.Node], &w.Pods[pl.Pod]
		limit := n.MaxPods
		if limit == 0 {
			limit = sim.DefaultMaxPods
		}
		u := sim.Resources{CPU: used[pl.Node].CPU + p.Requests.CPU, Mem: used[pl.Node].Mem + p.Requests.Mem}
		if u.CPU > n.Allocatable.CPU || u.Mem > n.Allocatable.Mem || pods[pl.Node] >= limit {
			rejected++
			continue
		}
		used[pl.Node], pods[pl.Node] = u, pods[pl.Node]+1
	}
	return rejected, len(w.Initial)
}

// TestLoadWindowStreams: without WindowStreams one seed gives two windows
// of the same standing containers the same extra copies at the same
// offsets (the coupling docs/ppo.md found in round 5); with it each window
// draws its own, deterministically, from the same machines.
func TestLoadWindowStreams(t *testing.T) {
	lines := map[string][]string{MachineMeta: warmLines[MachineMeta]}
	for i := range 200 {
		lines[ContainerMeta] = append(lines[ContainerMeta], fmt.Sprintf("c_%03d,m_%c,0,app_x,started,100,100,0.1", i, 'a'+i%2))
	}
	dir := convertTrace(t, writeTrace(t, lines))
	later := Window{From: 6000 * sim.Second, To: 10000 * sim.Second}
	load := func(win Window, streams bool) *sim.Workload {
		t.Helper()
		w, err := Load(dir, LoadOptions{Window: win, WarmStart: true, LoadFactor: 1.5, Seed: 7, WindowStreams: streams})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	// copies maps each extra copy to its arrival in the window
	copies := func(w *sim.Workload) map[string]sim.Time {
		m := map[string]sim.Time{}
		for _, p := range w.Pods {
			if strings.Contains(p.Name, "#") {
				m[p.Name] = p.Arrival
			}
		}
		return m
	}
	a, b := copies(load(warmWindow, false)), copies(load(later, false))
	if len(a) < 60 || len(a) > 140 {
		t.Fatalf("%d extra copies of 200 containers at load factor 1.5; want about 100", len(a))
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("without WindowStreams the two windows' copies differ (%d and %d); the recorded workloads assume they do not", len(a), len(b))
	}
	sa, sb := copies(load(warmWindow, true)), copies(load(later, true))
	shared := 0
	for name, at := range sa {
		if bt, ok := sb[name]; ok && bt == at {
			shared++
		}
	}
	if shared > len(sa)/10 || reflect.DeepEqual(sa, a) {
		t.Errorf("with WindowStreams %d of %d copies recur at the same offset in the other window (or window A is unchanged)", shared, len(sa))
	}
	if again := copies(load(warmWindow, true)); !reflect.DeepEqual(again, sa) {
		t.Error("WindowStreams is not deterministic under the seed")
	}
	if !reflect.DeepEqual(initialByName(load(warmWindow, true)), initialByName(load(warmWindow, false))) {
		t.Error("WindowStreams changed the warm placements (the cluster must depend on the seed alone)")
	}
}
