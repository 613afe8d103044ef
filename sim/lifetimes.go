package sim

import (
	"math"
	"strings"
)

// Lifetimes of finished pods, as a scheduler can learn them: every time a
// pod completes, its lifetime (start to finish) is added to running
// statistics of its task (the pod name up to its last '/': an Alibaba batch
// pod is named job/task/instance), of its group (PodSpec.Group, the job or
// app) and of all pods. Cluster.Lifetime estimates a pod's lifetime from the
// finest of these pools that has finished pods, in the spirit of Google's
// LAVA (lifetime-aware VM allocation, which predicts from the lifetimes of
// similar, already finished VMs), without ever looking at the pod's own
// Spec.Duration. A completion costs an append; the pools are brought up to
// date when an estimate is asked for.

// LifetimeLevel is the pool a lifetime estimate comes from, finest first.
type LifetimeLevel uint8

// Lifetime levels.
const (
	// LifetimeNone: no pod has finished yet; there is no estimate.
	LifetimeNone LifetimeLevel = iota
	// LifetimeAll: the finished pods of the whole run.
	LifetimeAll
	// LifetimeGroup: the finished pods of the pod's group.
	LifetimeGroup
	// LifetimeTask: the finished pods of the pod's task.
	LifetimeTask
)

// String names the level.
func (l LifetimeLevel) String() string {
	switch l {
	case LifetimeNone:
		return "none"
	case LifetimeAll:
		return "all"
	case LifetimeGroup:
		return "group"
	case LifetimeTask:
		return "task"
	}
	return "LifetimeLevel(?)"
}

// LifetimeEstimate is an estimate of a pod's lifetime from finished pods.
type LifetimeEstimate struct {
	Level LifetimeLevel
	// N is the number of finished pods in the pool (0 with LifetimeNone).
	N int64
	// LogMean is the mean over the pool of ln(1 + lifetime in seconds): the
	// log of a geometric-like mean, robust to the heavy tail of lifetimes.
	// 0 with LifetimeNone.
	LogMean float64
}

// lifetimeStat is a running mean of ln(1 + lifetime/1 s).
type lifetimeStat struct {
	n      int64
	sumLog float64
}

func (s *lifetimeStat) add(l float64) {
	s.n++
	s.sumLog += l
}

// lifetimes is the cluster's record of finished pods' lifetimes. An
// engine's completion only appends the pod's id to log (no logarithm, no
// look at its name, which is cold in cache); the first estimate after it
// folds the log into the pools, with each pod's lifetime its
// Spec.Duration (an engine's pod finishes exactly that long after it
// started). A replay that never asks for an estimate (a heuristic's) pays
// a 4-byte append per completion.
type lifetimes struct {
	pods   []Pod   // the engine's pods, which log indexes
	log    []int32 // completed pods not folded into the pools yet
	all    lifetimeStat
	groups []lifetimeStat // by GroupID
	tasks  map[string]*lifetimeStat
}

// TaskKey returns the task of a pod named name: the name up to its last
// '/' (job/task for an Alibaba batch instance job/task/instance), or ""
// when the name has no '/'.
func TaskKey(name string) string {
	if k := strings.LastIndexByte(name, '/'); k > 0 {
		return name[:k]
	}
	return ""
}

// fold adds the completions of the log to the pools.
func (lt *lifetimes) fold() {
	for _, id := range lt.log {
		p := &lt.pods[id]
		lt.add(p.Spec, p.Group, p.Spec.Duration)
	}
	lt.log = lt.log[:0]
}

// add adds a pod of spec s and group g that ran for lifetime to the pools.
func (lt *lifetimes) add(s *PodSpec, g GroupID, lifetime Time) {
	l := math.Log1p(max(lifetime, 0).Seconds())
	lt.all.add(l)
	if g >= 0 {
		if int(g) >= len(lt.groups) {
			lt.groups = append(lt.groups, make([]lifetimeStat, int(g)+1-len(lt.groups))...)
		}
		lt.groups[g].add(l)
	}
	if key := TaskKey(s.Name); key != "" {
		st := lt.tasks[key]
		if st == nil {
			if lt.tasks == nil {
				lt.tasks = make(map[string]*lifetimeStat)
			}
			st = new(lifetimeStat)
			lt.tasks[key] = st
		}
		st.add(l)
	}
}

// finished records that pod p, one of the engine's pods, completed.
func (c *Cluster) finished(pods []Pod, p *Pod) {
	c.life.pods = pods
	c.life.log = append(c.life.log, int32(p.ID))
}

// NoteFinished records that a pod of spec s and group g (NoGroup for none)
// finished after running for lifetime. The engine records every completion
// itself; this is for views built with NewCluster (tests, offline tools).
func (c *Cluster) NoteFinished(s *PodSpec, g GroupID, lifetime Time) {
	c.life.add(s, g, lifetime)
}

// Lifetime estimates the lifetime of pod p from the pods that have finished
// so far: the mean log lifetime of p's task when some pod of it has
// finished, else of p's group, else of every pod, else no estimate. It
// reads only finished pods, never p.Spec.Duration.
func (c *Cluster) Lifetime(p *Pod) LifetimeEstimate {
	lt := &c.life
	if len(lt.log) > 0 {
		lt.fold()
	}
	if key := TaskKey(p.Spec.Name); key != "" {
		if st := lt.tasks[key]; st != nil {
			return LifetimeEstimate{Level: LifetimeTask, N: st.n, LogMean: st.sumLog / float64(st.n)}
		}
	}
	if g := p.Group; p.Spec.Group != "" && g >= 0 && int(g) < len(lt.groups) {
		if st := &lt.groups[g]; st.n > 0 {
			return LifetimeEstimate{Level: LifetimeGroup, N: st.n, LogMean: st.sumLog / float64(st.n)}
		}
	}
	if st := &lt.all; st.n > 0 {
		return LifetimeEstimate{Level: LifetimeAll, N: st.n, LogMean: st.sumLog / float64(st.n)}
	}
	return LifetimeEstimate{}
}
