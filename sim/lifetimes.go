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
// Spec.Duration. Each completion costs a logarithm, two slice updates and,
// for a pod whose name has a task prefix, one map update.

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

// lifetimes is the cluster's record of finished pods' lifetimes.
type lifetimes struct {
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

// noteFinished adds the lifetime of pod p (spec s, group g) to the pools.
func (lt *lifetimes) noteFinished(s *PodSpec, g GroupID, lifetime Time) {
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

// finished records that the engine's pod p completed now, after running
// from its start.
func (c *Cluster) finished(p *Pod) {
	c.life.noteFinished(p.Spec, p.Group, c.now-p.startedAt)
}

// NoteFinished records that a pod of spec s and group g (NoGroup for none)
// finished after running for lifetime. The engine records every completion
// itself; this is for views built with NewCluster (tests, offline tools).
func (c *Cluster) NoteFinished(s *PodSpec, g GroupID, lifetime Time) {
	c.life.noteFinished(s, g, lifetime)
}

// Lifetime estimates the lifetime of pod p from the pods that have finished
// so far: the mean log lifetime of p's task when some pod of it has
// finished, else of p's group, else of every pod, else no estimate. It
// reads only finished pods, never p.Spec.Duration.
func (c *Cluster) Lifetime(p *Pod) LifetimeEstimate {
	lt := &c.life
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
