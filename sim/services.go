package sim

import "slices"

// The long-running pods a scheduler has seen: the memory requests of every
// pod without a duration (a service, not a batch task) that the warm start
// placed or that arrived so far, sorted. A scheduler knows them, since they
// are pods it was asked to place or found running; they say how big a hole
// the next service is likely to need (Cluster.ServiceMem; sched's Holes).

// serviceView is the cluster's record of the services seen.
type serviceView struct {
	mem []int64 // memory requests, ascending
}

// noteService records s when it is a long-running pod.
func (c *Cluster) noteService(s *PodSpec) {
	if s.Duration != 0 {
		return
	}
	i, _ := slices.BinarySearch(c.services.mem, s.Requests.Mem)
	c.services.mem = slices.Insert(c.services.mem, i, s.Requests.Mem)
}

// NoteService records that a pod of spec s was seen (placed by the warm
// start or arrived); only long-running pods (Duration 0) count. The engine
// records every pod itself, and NotePending records a pod's arrival too;
// this is for views built with NewCluster.
func (c *Cluster) NoteService(s *PodSpec) { c.noteService(s) }

// Services returns how many long-running pods have been seen.
func (c *Cluster) Services() int { return len(c.services.mem) }

// ServiceMem returns the q-quantile (0 < q <= 1, nearest rank: the
// ceil(q*n)-th smallest of n) of the memory requests of the long-running
// pods seen so far, or 0 when none has been seen.
func (c *Cluster) ServiceMem(q float64) int64 { return Percentile(c.services.mem, q) }

// NoteServices records long-running pods of the given memory requests at
// once (a view's services, e.g. the ones an extender was asked about).
func (c *Cluster) NoteServices(mem ...int64) {
	if len(mem) == 0 {
		return
	}
	c.services.mem = append(c.services.mem, mem...)
	slices.Sort(c.services.mem)
}
