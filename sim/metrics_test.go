package sim

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
)

// TestSLAAndCensoredLatency follows one 4000m node for 100 s (no startup
// latency, no preemption, SLA deadline 60 s) by hand:
//   - big (low, 4000m) holds the node from 0 to 80 s.
//   - h1 (high, 1000m, 10 s), h5 (high, 4000m, 20 s), h2 (high, 1000m,
//     uses 4000m, 30 s) and h3 (high, 3000m, 50 s) find no room. When big
//     ends at 80 s they are retried in queue order: h1 binds (3000m free),
//     h5 does not fit, h2 binds (2000m free), h3 does not fit.
//   - h2 uses 4000m: with h1 the node uses 5000m of 4000m, so h1 and h2 are
//     throttled from 80 s.
//   - l1 (low, 2000m) arrives at 90 s and binds at once; l2 (low, 3000m)
//     arrives at 95 s and finds nothing free.
//
// Waits: big 0, h1 70 s, h2 50 s, l1 0; never bound, censored at 100 s: h3
// 50 s, h5 80 s, l2 5 s.
// SLA (high pods h1, h2, h3, h5): throttled h1, h2; waited past 60 s h1, h5;
// never bound h3, h5; any: all four, each once. 7 pods.
func TestSLAAndCensoredLatency(t *testing.T) {
	high := func(name string, at Time, cpu int64) PodSpec {
		p := pod(name, at, cpu, 512, 0)
		p.Priority = High
		return p
	}
	h2 := high("h2", 30*Second, 1000)
	h2.Usage = []UsagePoint{{Use: Resources{CPU: 4000, Mem: 512}}}
	w := &Workload{
		Nodes: []NodeSpec{node("n", 4000, 4096)},
		Pods: []PodSpec{pod("big", 0, 4000, 512, 80*Second), high("h1", 10*Second, 1000), high("h5", 20*Second, 4000),
			h2, high("h3", 50*Second, 3000), pod("l1", 90*Second, 2000, 512, 0), pod("l2", 95*Second, 3000, 512, 0)},
		End: 100 * Second,
	}
	cfg := quietConfig(0)
	cfg.Preemption = false
	_, r := mustRun(t, w, cfg, scripted{})

	ints := []struct {
		name      string
		got, want int64
	}{
		{"pods", r.Pods, 7},
		{"unschedulable", r.Unschedulable, 3},           // h3, h5, l2
		{"sla wait violations", r.SLAWaitViolations, 2}, // h1 70 s, h5 80 s
		{"sla never placed", r.SLANeverPlaced, 2},       // h3, h5
	}
	for _, f := range ints {
		if f.got != f.want {
			t.Errorf("%s = %d; want %d", f.name, f.got, f.want)
		}
	}
	floats := []struct {
		name      string
		got, want float64
	}{
		{"sla per 1k (throttled or evicted)", r.SLAViolationsPer1k, 2000.0 / 7},
		{"sla any per 1k", r.SLAAnyPer1k, 4000.0 / 7},
		// High, censored: 50, 50, 70, 80 s: mean 62.5 s, nearest-rank p95 the 4th.
		{"high prio pending mean", r.HighPrioPendingMeanMs, 62500},
		{"high prio p95 censored", r.HighPrioPendingP95CensoredMs, 80000},
		// High, bound only: 70 and 50 s.
		{"high prio p95 (bound)", r.HighPrioPendingP95Ms, 70000},
	}
	for _, f := range floats {
		if !approx(f.got, f.want) {
			t.Errorf("%s = %v; want %v", f.name, f.got, f.want)
		}
	}
	lat := []struct {
		name      string
		got, want Latency
	}{
		{"high", r.HighPrioLatency, Latency{Count: 2, Mean: 60000, P50: 50000, P95: 70000, P99: 70000}},
		// 50, 50, 70, 80 s: p50 the 2nd.
		{"high censored", r.HighPrioCensored, Latency{Count: 4, Censored: 2, Mean: 62500, P50: 50000, P95: 80000, P99: 80000}},
		// 0, 0, 5 s: mean 5000/3, p50 the 2nd, p95 the 3rd.
		{"low censored", r.LowPrioCensored, Latency{Count: 3, Censored: 1, Mean: 5000.0 / 3, P50: 0, P95: 5000, P99: 5000}},
		// 0, 0, 5, 50, 50, 70, 80 s: sum 255 s; p50 the 4th, p95 the 7th.
		{"all censored", r.PendingCensored, Latency{Count: 7, Censored: 3, Mean: 255000.0 / 7, P50: 50000, P95: 80000, P99: 80000}},
		// Bound only: 0, 0, 50, 70 s.
		{"all", r.PendingLatency, Latency{Count: 4, Mean: 30000, P50: 0, P95: 70000, P99: 70000}},
	}
	for _, l := range lat {
		if l.got.Count != l.want.Count || l.got.Censored != l.want.Censored || !approx(l.got.Mean, l.want.Mean) ||
			l.got.P50 != l.want.P50 || l.got.P95 != l.want.P95 || l.got.P99 != l.want.P99 {
			t.Errorf("%s latency %+v; want %+v", l.name, l.got, l.want)
		}
	}
}

// TestNodeSpreadMetrics: two 4000m nodes X and Y sampled every 10 s up to
// 40 s. a (2000m) runs on X throughout, b (2000m) on X from 15 to 25 s, c
// (4000m) on Y from 35 s. Node CPU utilisation (X, Y) and cluster:
//
//	10 s: (0.5, 0)  0.25, var 0.0625, std 0.25
//	20 s: (1, 0)    0.5,  var 0.25,   std 0.5, hot (1 > 0.9, 0.5 < 0.6)
//	30 s: (0.5, 0)  0.25, var 0.0625, std 0.25
//	40 s: (0.5, 1)  0.75, var 0.0625, std 0.25, not hot (0.75 >= 0.6)
//
// Sorted cluster utilisations 0.25, 0.25, 0.5, 0.75; the nearest-rank
// q-quantile is the ceil(4q)-th: q 0.25 and 0.5 give 0.25 (10 and 30 s),
// q 0.75 gives 0.5 (10, 20, 30 s), q 1 every sample.
// Max node utilisation mean (0.5+1+0.5+1)/4 = 0.75; hot share 1/4.
func TestNodeSpreadMetrics(t *testing.T) {
	w := &Workload{
		Nodes: []NodeSpec{node("X", 4000, 8192), node("Y", 4000, 8192)},
		Pods:  []PodSpec{pod("a", 0, 2000, 512, 0), pod("b", 15*Second, 2000, 512, 10*Second), pod("c", 35*Second, 4000, 512, 0)},
		End:   40 * Second,
	}
	place := scripted{place: map[string]int{"a": 0, "b": 0, "c": 1}}
	cases := []struct {
		name         string
		q            float64
		offVar, offS float64
	}{
		{"q=0.25", 0.25, 0.0625, 0.25},
		{"q=0.5", 0.5, 0.0625, 0.25},
		{"q=0.75", 0.75, (0.0625 + 0.25 + 0.0625) / 3, (0.25 + 0.5 + 0.25) / 3},
		{"q=1", 1, (3*0.0625 + 0.25) / 4, (3*0.25 + 0.5) / 4},
		{"q=0", 0, 0.0625, 0.25}, // the lowest sample is always off-peak
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := quietConfig(0)
			cfg.OffPeakQuantile = tc.q
			e, r := mustRun(t, w, cfg, place)
			if n := len(e.Samples()); n != 4 {
				t.Fatalf("%d samples; want 4", n)
			}
			for _, f := range []struct {
				name      string
				got, want float64
			}{
				{"off-peak var", float64(r.NodeCPUVarOffPeak), tc.offVar},
				{"off-peak std", float64(r.NodeCPUStdOffPeak), tc.offS},
				{"max node util mean", float64(r.MaxNodeCPUUtilMean), 0.75},
				{"hot share", float64(r.HotNodeShare), 0.25},
				{"sample 20 s max node", e.Samples()[1].MaxNodeCPUUtil, 1},
			} {
				if !approx(f.got, f.want) {
					t.Errorf("%s = %v; want %v", f.name, f.got, f.want)
				}
			}
			for i, want := range []bool{false, true, false, false} {
				if got := e.Samples()[i].Hot; got != want {
					t.Errorf("sample %d hot = %v; want %v", i, got, want)
				}
			}
		})
	}
}

// TestExpectedFragmentation: the three-node cluster of TestMetricsThreeNodes.
// Pod shapes p1 (2000m, 4096Mi), p2 (1000m, 6144Mi), p3 (6000m, 1024Mi), one
// pod each: weight 1/3. Free resources and the shapes that do not fit:
//
//	A 2000m/4096Mi: p2 (memory), p3 (CPU)  p_nofit 2/3
//	B 3000m/2048Mi: p1, p2 (memory), p3    p_nofit 1
//	C 2000m/3072Mi: p1, p2 (memory), p3    p_nofit 1
//
// CPU: (2000*2/3 + 3000 + 2000) / 7000 = 19/21.
// Memory: (4096*2/3 + 2048 + 3072) / 9216 = 23/27.
// With the pod limit of A at 1 (p1 fills it), A's p_nofit is 1 and both
// shares are 1.
func TestExpectedFragmentation(t *testing.T) {
	cases := []struct {
		name           string
		maxPodsA       int32
		wantCPU, wantM float64
	}{
		{"free", 0, 19.0 / 21, 23.0 / 27},
		{"A at its pod limit", 1, 1, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := node("A", 4000, 8192)
			a.MaxPods = tc.maxPodsA
			w := &Workload{
				Nodes: []NodeSpec{a, node("B", 4000, 8192), node("C", 8000, 4096)},
				Pods:  []PodSpec{pod("p1", 0, 2000, 4096, 0), pod("p2", 0, 1000, 6144, 0), pod("p3", 0, 6000, 1024, 0)},
				End:   10 * Second,
			}
			e, r := mustRun(t, w, quietConfig(0), scripted{place: map[string]int{"p1": 0, "p2": 1, "p3": 2}})
			s := e.Samples()[0]
			if !approx(s.FragExpCPU, tc.wantCPU) || !approx(s.FragExpMem, tc.wantM) {
				t.Errorf("sample frag exp %v cpu, %v mem; want %v, %v", s.FragExpCPU, s.FragExpMem, tc.wantCPU, tc.wantM)
			}
			if !approx(r.FragExpCPU, tc.wantCPU) || !approx(r.FragExpMem, tc.wantM) {
				t.Errorf("result frag exp %v cpu, %v mem; want %v, %v", r.FragExpCPU, r.FragExpMem, tc.wantCPU, tc.wantM)
			}
		})
	}
}

// TestPodShapes: most frequent first, ties by CPU then memory; k keeps the
// first k, and the total is over those kept.
func TestPodShapes(t *testing.T) {
	var pods []PodSpec
	add := func(n int, cpu, mem int64) {
		for range n {
			pods = append(pods, pod("p", 0, cpu, mem, 0))
		}
	}
	add(1, 100, 1)
	add(2, 2000, 1)
	add(3, 1000, 1)
	add(2, 500, 9)
	add(2, 500, 1)
	shapes, total := podShapes(pods, 3)
	want := []podShape{{Resources{1000, 1}, 3}, {Resources{500, 1}, 2}, {Resources{500, 9}, 2}}
	if len(shapes) != len(want) || total != 7 {
		t.Fatalf("shapes %v total %d; want %v total 7", shapes, total, want)
	}
	for i := range want {
		if shapes[i] != want[i] {
			t.Errorf("shape %d = %v; want %v", i, shapes[i], want[i])
		}
	}
	if s, tot := podShapes(nil, maxShapes); len(s) != 0 || tot != 0 {
		t.Errorf("no pods: %v, %d", s, tot)
	}
}

// TestStatJSON: a run whose warm-up outlasts it has no sample, so the
// off-peak variance and the hot-node share are n/a: null in JSON, and null
// reads back as n/a; a number round-trips.
func TestStatJSON(t *testing.T) {
	w := &Workload{Nodes: []NodeSpec{node("n", 4000, 4096)}, Pods: []PodSpec{pod("a", 0, 1000, 512, 0)}, End: 20 * Second}
	cfg := quietConfig(0)
	cfg.WarmUp = Hour
	_, r := mustRun(t, w, cfg, scripted{})
	for _, s := range []Stat{r.NodeCPUVarOffPeak, r.NodeCPUStdOffPeak, r.HotNodeShare, r.MaxNodeCPUUtilMean} {
		if s.Valid() {
			t.Errorf("statistic without samples = %v; want n/a", float64(s))
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"node_cpu_var_off_peak":null`, `"node_cpu_std_off_peak":null`, `"hot_node_share":null`, `"max_node_cpu_util_mean":null`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("JSON lacks %s: %s", key, b)
		}
	}
	var back Result
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.NodeCPUVarOffPeak.Valid() || back.HotNodeShare.Valid() {
		t.Errorf("null read back as %v, %v; want n/a", back.NodeCPUVarOffPeak, back.HotNodeShare)
	}
	for _, v := range []Stat{0, 0.125, 1e-9, 12345.678} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var got Stat
		if err := json.Unmarshal(b, &got); err != nil || got != v {
			t.Errorf("%v -> %s -> %v (%v)", v, b, got, err)
		}
	}
	if b, _ := json.Marshal(Stat(math.Inf(1))); string(b) != "null" {
		t.Errorf("infinity -> %s; want null", b)
	}
}

// TestConfigNamesKey: each new bound is refused with its YAML key named.
func TestConfigNamesKey(t *testing.T) {
	cases := []struct {
		key string
		set func(*Config)
	}{
		{"warm_up_ms", func(c *Config) { c.WarmUp = -Second }},
		{"sla_deadline_ms", func(c *Config) { c.SLADeadline = 0 }},
		{"off_peak_quantile", func(c *Config) { c.OffPeakQuantile = 1.5 }},
		{"off_peak_quantile", func(c *Config) { c.OffPeakQuantile = math.NaN() }},
		{"hot_node_threshold", func(c *Config) { c.HotNodeThreshold = -0.1 }},
		{"hot_cluster_threshold", func(c *Config) { c.HotClusterThreshold = 2 }},
	}
	for _, tc := range cases {
		c := DefaultConfig()
		tc.set(&c)
		err := c.Validate()
		if err == nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%s: error %v; want ErrConfig naming the key", tc.key, err)
		}
	}
}

// TestSampleAllocs: taking a sample allocates nothing once the series has
// room (the pod-shape table is built once, in New).
func TestSampleAllocs(t *testing.T) {
	o := DefaultSyntheticOptions(20)
	o.Pods = 2000
	w, err := Synthetic(o)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := mustRun(t, w, DefaultConfig(), scripted{})
	e.m.samples = make([]Sample, 0, 1000)
	if n := testing.AllocsPerRun(100, e.sample); n != 0 {
		t.Errorf("sample allocates %v times; want 0", n)
	}
}
