package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestEventQueueOrder pushes and pops events at random, with many equal
// times, and checks that every pop returns the earliest queued event by
// (time, sequence): the order the simulator's determinism rests on.
func TestEventQueueOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var q eventQueue
	var ref []event // kept sorted
	seq := uint64(0)
	for step := range 20000 {
		if r.IntN(3) > 0 || len(ref) == 0 {
			ev := event{at: Time(r.IntN(50)), seq: seq, pod: int32(step)}
			seq++
			q.push(ev)
			i, _ := slices.BinarySearchFunc(ref, ev, func(a, b event) int {
				if eventBefore(&a, &b) {
					return -1
				}
				return 1
			})
			ref = slices.Insert(ref, i, ev)
		} else {
			got := q.pop()
			if got != ref[0] {
				t.Fatalf("step %d: pop = %+v; want %+v", step, got, ref[0])
			}
			ref = ref[1:]
		}
		if q.len() != len(ref) || (len(ref) > 0 && *q.top() != ref[0]) {
			t.Fatalf("step %d: queue of %d with top %+v; want %d with top %+v", step, q.len(), *q.top(), len(ref), ref[0])
		}
	}
	for len(ref) > 0 {
		if got := q.pop(); got != ref[0] {
			t.Fatalf("drain: pop = %+v; want %+v", got, ref[0])
		}
		ref = ref[1:]
	}
}
