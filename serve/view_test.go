package serve

import (
	"testing"

	"github.com/kubesim/kubesim/sim"
)

// TestServiceLog: one entry per pod key, batch pods left out, the oldest
// entry evicted when full, and a view filled from the log.
func TestServiceLog(t *testing.T) {
	svc := func(mem int64) *sim.PodSpec { return &sim.PodSpec{Requests: sim.Resources{Mem: mem}} }
	l := newServiceLog(3)
	l.note("a", svc(10))
	l.note("b", svc(30))
	l.note("a", svc(99)) // asked again (filter, then prioritize): not twice
	l.note("job", &sim.PodSpec{Requests: sim.Resources{Mem: 500}, Duration: sim.Second})
	l.note("c", svc(20))
	c := sim.NewCluster(0)
	l.fill(c)
	if c.Services() != 3 || c.ServiceMem(0.5) != 20 || c.ServiceMem(1) != 30 {
		t.Errorf("view: %d services, median %d, max %d; want 3, 20, 30", c.Services(), c.ServiceMem(0.5), c.ServiceMem(1))
	}
	l.note("d", svc(40)) // evicts a (10)
	l.note("a", svc(5))  // a is new again: evicts b (30)
	c = sim.NewCluster(0)
	l.fill(c)
	if c.Services() != 3 || c.ServiceMem(0.01) != 5 || c.ServiceMem(0.5) != 20 || c.ServiceMem(1) != 40 {
		t.Errorf("after eviction: %d services, min %d, median %d, max %d; want 3, 5, 20, 40", c.Services(), c.ServiceMem(0.01), c.ServiceMem(0.5), c.ServiceMem(1))
	}
}
