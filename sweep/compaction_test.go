package sweep

import (
	"context"
	"errors"
	"math/bits"
	"slices"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

// threshold returns a monotone predicate that passes from t nodes on and
// counts its calls.
func threshold(t int, calls *int) func(context.Context, int) (bool, error) {
	return func(_ context.Context, n int) (bool, error) {
		*calls++
		return n >= t, nil
	}
}

// TestCompactMonotone: the smallest passing size is found, at the edges of
// the range too, with at most bits.Len(hi-lo)+1 probes (log2 of the range,
// rounded up, plus the probe of hi), each size once.
func TestCompactMonotone(t *testing.T) {
	cases := []struct{ lo, hi, want int }{
		{1, 100, 37},
		{1, 100, 1},   // lo edge
		{1, 100, 100}, // hi edge
		{1, 100, 99},
		{5, 5, 5}, // one size
		{10, 11, 10},
		{10, 11, 11},
		{3, 1 << 20, 777777},
	}
	for _, tc := range cases {
		calls := 0
		n, tr, err := Compact(context.Background(), tc.lo, tc.hi, threshold(tc.want, &calls))
		if err != nil {
			t.Fatalf("[%d, %d] answer %d: %v", tc.lo, tc.hi, tc.want, err)
		}
		if n != tc.want || tr.Nodes != tc.want {
			t.Errorf("[%d, %d]: found %d (trace %d); want %d", tc.lo, tc.hi, n, tr.Nodes, tc.want)
		}
		limit := bits.Len(uint(tc.hi-tc.lo)) + 1
		if calls != len(tr.Probes) || calls > limit {
			t.Errorf("[%d, %d] answer %d: %d calls, %d probes; want equal and at most %d", tc.lo, tc.hi, tc.want, calls, len(tr.Probes), limit)
		}
		if tr.Probes[0] != (Probe{Nodes: tc.hi, OK: true}) || tr.NonMonotone || tr.Lo != tc.lo || tr.Hi != tc.hi {
			t.Errorf("[%d, %d]: trace %+v; want hi probed first, monotone", tc.lo, tc.hi, tr)
		}
		seen := map[int]bool{}
		for _, p := range tr.Probes {
			if seen[p.Nodes] {
				t.Errorf("[%d, %d]: %d probed twice", tc.lo, tc.hi, p.Nodes)
			}
			seen[p.Nodes] = true
			if p.Nodes < tc.lo || p.Nodes > tc.hi || p.OK != (p.Nodes >= tc.want) {
				t.Errorf("[%d, %d]: probe %+v", tc.lo, tc.hi, p)
			}
		}
	}
	// [1, 100] takes 8 probes: 100, then 7 halvings of 99 sizes.
	calls := 0
	if _, tr, _ := Compact(context.Background(), 1, 100, threshold(37, &calls)); len(tr.Probes) != 8 {
		t.Errorf("[1, 100]: %d probes; want 8", len(tr.Probes))
	}
}

// TestCompactUpperBound: a predicate that fails at hi is an error naming
// hi, after one probe.
func TestCompactUpperBound(t *testing.T) {
	calls := 0
	n, tr, err := Compact(context.Background(), 1, 64, threshold(65, &calls))
	if !errors.Is(err, ErrCompactionBound) || !strings.Contains(err.Error(), "64 nodes") {
		t.Errorf("error %v; want ErrCompactionBound naming 64 nodes", err)
	}
	if n != 0 || calls != 1 || len(tr.Probes) != 1 || tr.Probes[0].OK {
		t.Errorf("n %d, %d calls, trace %+v; want 0, one failing probe of 64", n, calls, tr)
	}
}

// TestCompactNonMonotone: ok passes at 2 and from 10 on, except at 12.
//   - Compact probes 16 ok, 8 fail, 12 fail, 14 ok, 13 ok and answers 13,
//     a crossing point (12 fails, 13 passes), while 10, 11 and 2 pass
//     unseen. Its probes never contradict monotonicity.
//   - with check 3, 13 is checked by 14 (known), 15 and 16 (known): all
//     pass, so 13 stands and the trace still looks monotone.
//
// A second predicate passes from 5 on except at 7: Compact finds 5 (16, 8,
// 4, 6, 5); checked by 3 sizes, 7 fails, so the search restarts at 8 and
// answers 8, with the trace marked not monotone.
func TestCompactNonMonotone(t *testing.T) {
	ok := func(pass func(int) bool) func(context.Context, int) (bool, error) {
		return func(_ context.Context, n int) (bool, error) { return pass(n), nil }
	}
	a := ok(func(n int) bool { return n == 2 || (n >= 10 && n != 12) })
	probed := func(tr CompactTrace) []int {
		var ns []int
		for _, p := range tr.Probes {
			ns = append(ns, p.Nodes)
		}
		return ns
	}
	n, tr, err := Compact(context.Background(), 1, 16, a)
	if err != nil || n != 13 || tr.NonMonotone {
		t.Errorf("Compact: %d, %v, non-monotone %v; want 13, no error, monotone trace", n, err, tr.NonMonotone)
	}
	if got, want := probed(tr), []int{16, 8, 12, 14, 13}; !slices.Equal(got, want) {
		t.Errorf("Compact probes %v; want %v", got, want)
	}
	n, tr, err = CompactChecked(context.Background(), 1, 16, 3, a)
	if err != nil || n != 13 || tr.NonMonotone {
		t.Errorf("CompactChecked: %d, %v, non-monotone %v; want 13, no error, monotone", n, err, tr.NonMonotone)
	}

	b := ok(func(n int) bool { return n >= 5 && n != 7 })
	if n, _, _ := Compact(context.Background(), 1, 16, b); n != 5 {
		t.Errorf("Compact: %d; want 5", n)
	}
	n, tr, err = CompactChecked(context.Background(), 1, 16, 3, b)
	if err != nil || n != 8 || tr.Nodes != 8 || !tr.NonMonotone {
		t.Errorf("CompactChecked: %d (trace %d), %v, non-monotone %v; want 8, no error, not monotone", n, tr.Nodes, err, tr.NonMonotone)
	}
	if got, want := probed(tr), []int{16, 8, 4, 6, 5, 7, 9, 10, 11}; !slices.Equal(got, want) {
		t.Errorf("CompactChecked probes %v; want %v", got, want)
	}
	if s := tr.String(); !strings.Contains(s, "4 fail, 5 ok, 6 ok, 7 fail, 8 ok") || !strings.HasSuffix(s, "(not monotone)") {
		t.Errorf("trace string %q", s)
	}
}

// TestCompactCancel: cancelling during the second probe stops the search
// before the third, with ctx's error; a failing predicate's error names the
// size; a bad range is refused.
func TestCompactCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	_, tr, err := Compact(ctx, 1, 100, func(ctx context.Context, n int) (bool, error) {
		calls++
		if calls == 2 {
			cancel()
		}
		return n >= 30, nil
	})
	if !errors.Is(err, context.Canceled) || calls != 2 || len(tr.Probes) != 2 {
		t.Errorf("error %v after %d calls, %d probes; want context.Canceled after 2", err, calls, len(tr.Probes))
	}

	boom := errors.New("boom")
	_, _, err = Compact(context.Background(), 1, 100, func(_ context.Context, n int) (bool, error) {
		if n < 100 {
			return false, boom
		}
		return true, nil
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "50 nodes") {
		t.Errorf("error %v; want boom at 50 nodes", err)
	}

	for _, r := range [][3]int{{0, 10, 0}, {5, 4, 0}, {1, 10, -1}} {
		if _, _, err := CompactChecked(context.Background(), r[0], r[1], r[2], threshold(1, new(int))); err == nil {
			t.Errorf("range [%d, %d] check %d: no error", r[0], r[1], r[2])
		}
	}
}

// TestCompactAllowedUnschedulable: floor(threshold * pods), exact for decimal
// thresholds.
func TestCompactAllowedUnschedulable(t *testing.T) {
	cases := []struct {
		pods      int64
		threshold float64
		want      int64
	}{
		{2345, 0.001, 2},
		{1000, 0.001, 1},
		{999, 0.001, 0},
		{3000, 0.001, 3},
		{100, 0.29, 29}, // 0.29*100 = 28.999999999999996 in float64
		{100, 0.07, 7},
		{100, 1, 100},
		{100, 0, 0},
		{0, 0.001, 0},
	}
	for _, tc := range cases {
		if got := AllowedUnschedulable(tc.pods, tc.threshold); got != tc.want {
			t.Errorf("AllowedUnschedulable(%d, %v) = %d; want %d", tc.pods, tc.threshold, got, tc.want)
		}
	}
	for _, tc := range []struct {
		unsched int64
		want    bool
	}{{0, true}, {2, true}, {3, false}} {
		r := &sim.Result{Pods: 2345, Unschedulable: tc.unsched}
		if got := Within(r, DefaultCompactionThreshold); got != tc.want {
			t.Errorf("Within(%d of 2345, 0.1%%) = %v; want %v", tc.unsched, got, tc.want)
		}
	}
}

// TestCompactEndToEnd compacts a synthetic workload of 6 nodes under
// kube-default between 1 and 12 nodes (the nodes repeated beyond 6) at a 1%
// threshold: at the size found the replay is within the threshold, one
// node fewer it is not.
func TestCompactEndToEnd(t *testing.T) {
	o := sim.DefaultSyntheticOptions(6)
	o.Pods = 900
	w, err := sim.Synthetic(o)
	if err != nil {
		t.Fatal(err)
	}
	cfg := sim.DefaultConfig()
	kd := Scheduler{Name: sched.NameKubeDefault, New: func(seed uint64) (sim.Scheduler, error) { return sched.New(sched.NameKubeDefault, seed) }}
	const th = 0.01
	n, tr, err := CompactChecked(context.Background(), 1, 12, 2, ResizedReplay(w, cfg, kd, th, nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("trace %v", &tr)
	if n <= 1 {
		t.Fatalf("found %d nodes: the test wants a workload that does not fit on 1", n)
	}
	replay := func(nodes int) *sim.Result {
		rw, err := sim.Resize(w, nodes)
		if err != nil {
			t.Fatal(err)
		}
		s, err := kd.New(cfg.Seed)
		if err != nil {
			t.Fatal(err)
		}
		r, err := sim.Run(context.Background(), rw, cfg, s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	at, below := replay(n), replay(n-1)
	if allowed := AllowedUnschedulable(at.Pods, th); at.Unschedulable > allowed {
		t.Errorf("at %d nodes %d of %d pods unschedulable; want at most %d", n, at.Unschedulable, at.Pods, allowed)
	}
	if allowed := AllowedUnschedulable(below.Pods, th); below.Unschedulable <= allowed {
		t.Errorf("at %d nodes %d of %d pods unschedulable; want more than %d", n-1, below.Unschedulable, below.Pods, allowed)
	}
}
