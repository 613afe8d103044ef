package dataset

import (
	"context"
	"slices"
	"testing"

	"github.com/kubesim/kubesim/sim"
)

// TestHeaviestWindowHandMade converts a hand-made trace whose arrivals are
// known and finds its heaviest window.
func TestHeaviestWindowHandMade(t *testing.T) {
	dir := convertTrace(t, writeTrace(t, map[string][]string{
		MachineMeta: {"m_a,0,1,r1,96,100,USING", "m_a,7000,1,r1,96,100,USING"},
		ContainerMeta: {
			"c_pre,m_a,0,app_x,started,400,800,3.125",     // before the trace: not an arrival
			"c_pre,m_a,2500,app_x,started,400,800,3.125",  // a later record of c_pre: not an arrival
			"c_new,m_a,3100,app_y,started,200,200,1.5625", // first record at 3100 s: bin 5
			"c_new,m_a,3300,app_y,started,200,200,1.5625", // c_new again: not an arrival
		},
		BatchTask: {"M1,1,j_1,1,Terminated,100,7000,50,0.5"},
		BatchInstance: {
			"i1,M1,j_1,1,Terminated,100,150,m_a,1,1,40,60,0.25,0.4",   // bin 0
			"i2,M1,j_1,1,Terminated,700,800,m_a,1,1,40,60,0.25,0.4",   // bin 1
			"i3,M1,j_1,1,Terminated,2400,2500,m_a,1,1,40,60,0.25,0.4", // bin 4
			"i4,M1,j_1,1,Terminated,2500,2600,m_a,1,1,40,60,0.25,0.4", // bin 4
			"i5,M1,j_1,1,Terminated,3000,3100,m_a,1,1,40,60,0.25,0.4", // bin 5
			"i6,M1,j_1,1,Terminated,3599,3700,m_a,1,1,40,60,0.25,0.4", // bin 5
			"i7,M1,j_1,1,Terminated,6000,6100,m_a,1,1,40,60,0.25,0.4", // bin 10
			"i8,M1,j_1,1,Terminated,0,10,m_a,1,1,40,60,0.25,0.4",      // at 0: not an arrival
		},
	}))
	counts, err := Arrivals(context.Background(), dir, 10*sim.Minute)
	if err != nil {
		t.Fatal(err)
	}
	// the span is 7000 s (machine_meta's last record): bins 0..11 of 600 s
	want := []int64{1, 1, 0, 0, 2, 3, 0, 0, 0, 0, 1, 0}
	if !slices.Equal(counts, want) {
		t.Fatalf("Arrivals = %v; want %v", counts, want)
	}
	// 30-minute windows (3 bins): sums from bin 0: 2, 1, 2, 5, 5, 3, 0, 0, 1, 1;
	// the first 5 is [30 min, 60 min), which wins the tie with [40, 70)
	w, n, err := HeaviestWindow(counts, 10*sim.Minute, 30*sim.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if w.Name != HeaviestName || w.From != 30*sim.Minute || w.To != 60*sim.Minute || n != 5 {
		t.Fatalf("HeaviestWindow = %v with %d arrivals; want heaviest [30m, 60m) with 5", w, n)
	}
	if got := WindowArrivals(counts, 10*sim.Minute, w); got != 5 {
		t.Fatalf("WindowArrivals(heaviest) = %d; want 5", got)
	}
	// the window must fit the trace, and be a whole number of bins
	if _, _, err := HeaviestWindow(counts, 10*sim.Minute, 3*sim.Hour); err == nil {
		t.Error("a 3-hour window in a 2-hour trace: no error")
	}
	if _, _, err := HeaviestWindow(counts, 10*sim.Minute, 25*sim.Minute); err == nil {
		t.Error("a window of 2.5 bins: no error")
	}
}
