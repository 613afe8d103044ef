package dataset

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"
)

// The synthetic trace keeps the calibrated properties of the real one: a
// property that drifts past its bound fails here. The trace is modest (150
// machines in service over two days, batch at 0.75 instances per machine) so
// that it is made, converted and measured in a few seconds; the dispersion
// index grows with the instance_num cap, 8 per machine (docs/dataset.md),
// so the trace must not be much smaller.
func TestFidelitySynth(t *testing.T) {
	dir := convertTrace(t, synthTrace(t, SynthOptions{Machines: 300, Days: 1, Seed: 1, BatchConcurrency: 0.75,
		ContainerUsageStep: 7200}))
	rep, err := Fidelity(context.Background(), dir, "")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := rep.Write(&out); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())
	ks := []struct {
		property string
		max      float64
	}{
		{PropPlanMem, 0.10},
		{PropInstances, 0.15},
		{PropDuration, 0.15},
		{PropTasks, 0.15},
		{PropDepth, 0.15},
		{PropPlanCPU, 0.10},
		{PropDeps, 0.15},
	}
	for _, c := range ks {
		row, ok := rep.Row(c.property)
		if !ok || !(row.KS < c.max) || row.N < 200 {
			t.Errorf("%s: KS D = %.3f over %d values; want under %.2f over at least 200", c.property, row.KS, row.N, c.max)
		}
	}
	st := rep.Stats
	if r := st.Dispersion / TargetDispersion; !(r > 1.0/5 && r < 5) {
		t.Errorf("dispersion index %.0f; want within a factor of 5 of %d", st.Dispersion, TargetDispersion)
	}
	if !(st.NonUsing < 0.01) {
		t.Errorf("non-USING machine_meta rows: %.4f; want under 1%%", st.NonUsing)
	}
	// 300 in service at 0 and round(300 * 0.036 / 0.964) = 11 joining
	if st.Machines != 311 || math.Abs(st.Joining-11.0/311) > 1e-9 {
		t.Errorf("%d machines, %.4f joining after 0; want 311 and 11/311", st.Machines, st.Joining)
	}
	if !(math.Abs(st.MemDrift) < 0.5) || !(st.MemUtil > 88 && st.MemUtil < 94) {
		t.Errorf("memory utilisation %.1f%%, drift %.2f points/day; want 88-94%%, flat (under 0.5)", st.MemUtil, st.MemDrift)
	}
	if !(st.DomainSpread > 0.3) {
		t.Errorf("%.2f of failure_domain_1 values span several failure_domain_2 values; want overlapping domains", st.DomainSpread)
	}
	if !strings.Contains(out.String(), PropDispersion) {
		t.Errorf("report without the dispersion index:\n%s", out.String())
	}
}

// Against itself, a trace's two-sample KS D is 0 and its figures are the targets.
func TestFidelityAgainst(t *testing.T) {
	dir := convertTrace(t, synthTrace(t, SynthOptions{Machines: 20, Days: 0.5, Seed: 2, BatchConcurrency: 1, ContainerUsageStep: 7200}))
	rep, err := Fidelity(context.Background(), dir, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rep.Rows {
		if !math.IsNaN(row.KS) && row.KS != 0 {
			t.Errorf("%s: KS D %v against itself; want 0", row.Property, row.KS)
		}
		if row.Single && row.Got[0] != row.Want[0] && !math.IsNaN(row.Got[0]) {
			t.Errorf("%s: %v against %v from the same trace", row.Property, row.Got[0], row.Want[0])
		}
	}
}

func TestKS(t *testing.T) {
	// G: 0 below 1, linear from 0 at 1 to 1 at 3
	g := dist{{1, 0}, {3, 1}}
	cases := []struct {
		name    string
		xs      []float64
		integer bool
		want    float64
	}{
		// F jumps to 1 at 2 where G(2) = 0.5; just below 2, F = 0 and G -> 0.5
		{"one value at the median", []float64{2}, false, 0.5},
		// F(1.5) = 0.5 = G... F is 0.5 on [1.5, 2.5) where G runs from
		// 0.25 to 0.75: D = 0.25
		{"two values", []float64{1.5, 2.5}, false, 0.25},
		// integers with a continuity correction: P(X <= 1) = G(1.5) = 0.25,
		// P(X <= 2) = G(2.5) = 0.75; the sample {1, 2, 2, 3} has 0.25, 0.75
		{"integers matching", []float64{1, 2, 2, 3}, true, 0},
		// all at 3: F(2) = 0 against 0.75
		{"integers all high", []float64{3, 3}, true, 0.75},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ksTarget(c.xs, g, c.integer); math.Abs(got-c.want) > 1e-12 {
				t.Errorf("ksTarget(%v) = %v; want %v", c.xs, got, c.want)
			}
		})
	}
	// two samples: {1, 2} and {2, 3}: F_a(1) = 0.5, F_b(1) = 0
	if got := ksSamples([]float64{1, 2}, []float64{2, 3}); got != 0.5 {
		t.Errorf("ksSamples = %v; want 0.5", got)
	}
	// an atom: plan_mem's 0.2 holds 30.8% of the target
	if got := targetPlanMem.cdf(0.2); math.Abs(got-0.308) > 1e-12 {
		t.Errorf("G(0.2) = %v; want 0.308", got)
	}
	if got := targetPlanMem.cdfBelow(0.2); got != 0 {
		t.Errorf("G(0.2-) = %v; want 0", got)
	}
}

// The index of dispersion of counts: variance over mean.
func TestDispersion(t *testing.T) {
	// counts 0, 2, 4: mean 2, population variance 8/3, index 4/3
	if idx, mu := dispersion([]float64{0, 2, 4}); math.Abs(idx-4.0/3) > 1e-12 || mu != 2 {
		t.Errorf("dispersion = %v, %v; want 4/3, 2", idx, mu)
	}
}
