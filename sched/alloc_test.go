package sched

import (
	"testing"
)

// TestScheduleAllocatesNothing checks that a decision allocates nothing once
// a scheduler's buffers have grown, for every scheduler, at sizes with and
// without kube-default's sampling.
func TestScheduleAllocatesNothing(t *testing.T) {
	for _, n := range []int{100, 1000} {
		c, pods := benchCluster(n, 3)
		for _, name := range Names() {
			s, err := New(name, 1)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range pods {
				s.Schedule(c, p)
			}
			k := 0
			allocs := testing.AllocsPerRun(200, func() {
				s.Schedule(c, pods[k%len(pods)])
				k++
			})
			if allocs != 0 {
				t.Errorf("%s, %d nodes: %v allocations per decision; want 0", name, n, allocs)
			}
		}
	}
}
