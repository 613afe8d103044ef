package dataset

import (
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"

	"github.com/kubesim/kubesim/sim"
)

// loadTasks expands batch_task rows into instance_num pods each, keeping
// each pod with probability K/machines (every pod when all machines are kept).
func (l *loader) loadTasks() error {
	keep := float64(len(l.sel)) / float64(max(l.total, 1))
	bp := newBatchPods(l.all, 0)
	err := l.src.scan(l.ctx, BatchTask, window(l.from, l.to), func(rec arrow.Record) error {
		task, num, job := strColumn(rec, btTask), intColumn(rec, btInstances), strColumn(rec, btJob)
		start, end, cpu, mem := intColumn(rec, btStart), intColumn(rec, btEnd), realColumn(rec, btCPU), realColumn(rec, btMem)
		l.st.rows += rec.NumRows()
		for i := range int(rec.NumRows()) {
			s, ok := start.get(i)
			if !ok {
				l.st.skip(skipNoTime)
				continue
			}
			t := traceTime(s)
			if t < l.from || t >= l.to {
				continue
			}
			if s == 0 {
				l.st.skip(skipStartZero)
				continue
			}
			jn, ok1 := job.value(i)
			tn, ok2 := task.value(i)
			if !ok1 || !ok2 {
				l.st.skip(skipNoID)
				continue
			}
			n, ok := num.get(i)
			if !ok || n <= 0 {
				l.st.skip(skipNoInstances)
				continue
			}
			c, okc := cpu.get(i)
			m, okm := mem.get(i)
			if !okc || !okm {
				l.st.skip(skipNoPlan)
				continue
			}
			if c < 0 || m < 0 {
				l.st.skip(skipNegative)
				continue
			}
			var dur sim.Time
			if e, ok := end.get(i); ok && e != 0 {
				if e < s {
					l.st.skip(skipEndBefore)
					continue
				}
				dur = traceTime(max(e-s, 1))
			}
			// The kept instances depend only on the seed and the task, not
			// on the row order.
			rng := rand.New(rand.NewPCG(l.opts.Seed, hashStrings(jn, tn)))
			jobName := jn
			if j, ok := bp.index[jn]; ok {
				jobName = bp.jobs[j]
			} else {
				jobName = strings.Clone(jn)
			}
			taskName := strings.Clone(tn)
			prefix := jobName + "/" + taskName + "/"
			for k := int64(1); k <= n; k++ {
				if keep < 1 && rng.Float64() >= keep {
					continue
				}
				p := sim.PodSpec{Name: prefix + strconv.FormatInt(k, 10), Group: jobName, Arrival: t - l.from,
					Duration: dur, Priority: sim.Low, Requests: sim.Resources{CPU: milliCPU(c), Mem: l.memMiB(m)}}
				bp.add(p, jobName, taskName)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	l.addJobs(bp)
	return nil
}

// hashStrings is FNV-1a over the strings with separators.
func hashStrings(ss ...string) uint64 {
	h := fnv.New64a()
	for _, s := range ss {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return h.Sum64()
}
