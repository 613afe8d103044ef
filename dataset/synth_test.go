package dataset

import (
	"bufio"
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// table reads a generated CSV table as rows of fields.
func table(t *testing.T, dir, name string) [][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name+".csv"))
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		rows = append(rows, strings.Split(sc.Text(), ","))
	}
	return rows
}

func atoi(t *testing.T, s string) int64 {
	t.Helper()
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("not an integer: %q", s)
	}
	return v
}

func atof(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("not a real: %q", s)
	}
	return v
}

// Each calibrated property of the synthetic trace, checked on generated data
// against the published facts of cluster-trace-v2018.
func TestSynthCalibration(t *testing.T) {
	const machines, days = 80, 2
	dir := synthTrace(t, SynthOptions{Machines: machines, Days: days, Seed: 1, BatchConcurrency: 0.5})
	span := int64(days * 86400)
	mm := table(t, dir, MachineMeta)

	t.Run("machines have 96 cores and the largest memory", func(t *testing.T) {
		for _, r := range mm {
			if r[mmCPU] != "96" || r[mmMem] != "100" || len(r) != 7 {
				t.Fatalf("machine row %v; want 96 cores, memory 100, 7 columns", r)
			}
		}
	})
	t.Run("machine status events", func(t *testing.T) {
		// 17,592 rows for 4,034 machines over 8 days is 1 + 0.42 per day;
		// over 2 days 1.84 rows per machine (the sd of the mean over 83
		// machines is about 0.1)
		first := make(map[string]int64)
		for _, r := range mm {
			if ts, ok := first[r[mmMachine]]; !ok || atoi(t, r[mmTime]) < ts {
				first[r[mmMachine]] = atoi(t, r[mmTime])
			}
		}
		perMachine := float64(len(mm)) / float64(len(first))
		if perMachine < 1.5 || perMachine > 2.2 {
			t.Errorf("%.2f status rows per machine; want about 1.84", perMachine)
		}
		// 80 machines in service at 0, and 3.6% of all join later:
		// round(80 * 0.036 / 0.964) = 3
		joining := 0
		for _, ts := range first {
			if ts > 0 {
				joining++
			}
		}
		if len(first) != machines+3 || joining != 3 {
			t.Errorf("%d machines, %d joining after 0; want %d and 3", len(first), joining, machines+3)
		}
		installing := 0
		for i, r := range mm {
			if r[mmStatus] == "IMPORT_INSTALLING" {
				installing++
				back := false
				for _, q := range mm[i+1:] {
					if q[mmMachine] == r[mmMachine] && q[mmStatus] == "USING" {
						back = true
						break
					}
				}
				if !back {
					t.Errorf("machine %s never returns to USING after %s", r[mmMachine], r[mmTime])
				}
			} else if r[mmStatus] != "USING" {
				t.Errorf("status %q", r[mmStatus])
			}
		}
		// maintenance is rare: 0.00015 events per machine-day in the trace
		if share := float64(installing) / float64(len(mm)); share >= 0.01 {
			t.Errorf("%.4f of machine_meta rows are not USING; want under 1%%", share)
		}
	})

	mu := table(t, dir, MachineUsage)
	var cpuSum, memSum float64
	var cpuHour, memHour, nHour [24]float64
	n := 0
	for _, r := range mu {
		c, m := atoi(t, r[muCPU]), atoi(t, r[muMem])
		if c == -1 || c == 101 || m == -1 || m == 101 {
			continue
		}
		h := (atoi(t, r[muTime]) / 3600) % 24
		cpuSum += float64(c)
		memSum += float64(m)
		cpuHour[h] += float64(c)
		memHour[h] += float64(m)
		nHour[h]++
		n++
	}
	cpuMean, memMean := cpuSum/float64(n), memSum/float64(n)
	t.Run("memory is the scarce resource", func(t *testing.T) {
		// machines run near 90% memory, CPU 35-45% on average
		if memMean < 85 || memMean > 95 {
			t.Errorf("mean memory use %.1f%%; want 85-95%%", memMean)
		}
		if cpuMean < 35 || cpuMean > 45 {
			t.Errorf("mean CPU use %.1f%%; want 35-45%%", cpuMean)
		}
		// and online containers reserve a larger share of memory than of CPU
		mem, cpu := make(map[string]float64), make(map[string]float64)
		seen := make(map[string]bool)
		for _, r := range table(t, dir, ContainerMeta) {
			if seen[r[cmContainer]] {
				continue
			}
			seen[r[cmContainer]] = true
			mem[r[cmMachine]] += atof(t, r[cmMem])
			cpu[r[cmMachine]] += float64(atoi(t, r[cmCPURequest])) / 100
		}
		for m := range mem {
			if mem[m]/100 <= cpu[m]/96 || mem[m] > 100 || cpu[m] > 96 {
				t.Errorf("machine %s: online requests %.1f%% of memory, %.1f%% of cores; want memory share larger, both within capacity",
					m, mem[m], 100*cpu[m]/96)
			}
		}
	})
	t.Run("daily CPU cycle, flat memory", func(t *testing.T) {
		minHour, peak, off, nPeak, nOff := 0, 0.0, 0.0, 0.0, 0.0
		lo, hi := math.Inf(1), math.Inf(-1)
		for h := range 24 {
			c := cpuHour[h] / nHour[h]
			if c < cpuHour[minHour]/nHour[minHour] {
				minHour = h
			}
			if h >= 8 && h < 21 {
				peak += c
				nPeak++
			} else {
				off += c
				nOff++
			}
			m := memHour[h] / nHour[h]
			lo, hi = math.Min(lo, m), math.Max(hi, m)
		}
		// lowest around 04:00, high from 08:00 to 21:00
		if minHour < 3 || minHour > 5 {
			t.Errorf("CPU lowest at %02d:00; want about 04:00", minHour)
		}
		if ratio := (peak / nPeak) / (off / nOff); ratio < 1.25 {
			t.Errorf("CPU 08-21h is %.2f times the rest; want at least 1.25", ratio)
		}
		if hi-lo > 3 {
			t.Errorf("hourly memory use ranges over %.1f points; want flat (under 3)", hi-lo)
		}
	})

	cm := table(t, dir, ContainerMeta)
	t.Run("online containers are long-running services in app groups", func(t *testing.T) {
		group := make(map[string]string)
		req := make(map[string]string)
		members := make(map[string]int)
		created := make(map[string]int64)
		for _, r := range cm {
			c := r[cmContainer]
			if ts, ok := created[c]; !ok || atoi(t, r[cmTime]) < ts {
				created[c] = atoi(t, r[cmTime])
			}
			if g, ok := group[c]; ok && g != r[cmApp] {
				t.Fatalf("container %s in two app groups", c)
			}
			spec := r[cmCPURequest] + "/" + r[cmCPULimit] + "/" + r[cmMem]
			if s, ok := req[c]; ok && s != spec {
				t.Fatalf("container %s changes its spec %s -> %s", c, s, spec)
			}
			if _, ok := group[c]; !ok {
				members[r[cmApp]]++
			}
			group[c], req[c] = r[cmApp], spec
		}
		// 71,476 containers in 9,790 groups: 7.3 per group
		mean := float64(len(group)) / float64(len(members))
		if mean < 5 || mean > 10 {
			t.Errorf("%.1f containers per app group; want about 7.3", mean)
		}
		last := make(map[string]int64)
		for _, r := range table(t, dir, ContainerUsage) {
			last[r[cuContainer]] = max(last[r[cuContainer]], atoi(t, r[cuTime]))
		}
		// a stopped container is replaced on its machine by one of its app
		// and spec within a minute; the others run to the end
		type key struct{ machine, spec string }
		stopped := make(map[string]int64)
		startedAt := make(map[key][]int64)
		machine := make(map[string]string)
		for _, r := range cm {
			machine[r[cmContainer]] = r[cmMachine]
			if r[cmStatus] == "stopped" {
				stopped[r[cmContainer]] = atoi(t, r[cmTime])
			}
		}
		for c, ts := range created {
			k := key{machine[c], group[c] + "/" + req[c]}
			startedAt[k] = append(startedAt[k], ts)
		}
		step := DefaultSynthOptions().ContainerUsageStep
		for c := range group {
			if at, ok := stopped[c]; ok {
				if last[c] >= at {
					t.Fatalf("container %s reports usage at %d after it stopped at %d", c, last[c], at)
				}
				replaced := false
				for _, ts := range startedAt[key{machine[c], group[c] + "/" + req[c]}] {
					replaced = replaced || ts >= at && ts < at+60
				}
				if !replaced {
					t.Fatalf("container %s stopped at %d and was not replaced", c, at)
				}
				continue
			}
			// a container created within the last usage step has no sample
			if created[c] <= span-step && last[c] < span-step {
				t.Fatalf("container %s stops reporting at %d; want it running to the end (%d)", c, last[c], span)
			}
		}
		// 0.625% of containers a day: about 1% of some 1,400 in 2 days
		if len(stopped) == 0 || len(stopped) > len(group)/20 {
			t.Errorf("%d of %d containers stopped; want some, under 5%%", len(stopped), len(group))
		}
	})

	bt := table(t, dir, BatchTask)
	bi := table(t, dir, BatchInstance)
	t.Run("DAG tasks plan 50 or 100 CPU", func(t *testing.T) {
		dag, common := 0, 0
		for _, r := range bt {
			if _, _, ok := parseTaskName(r[btTask]); !ok {
				continue
			}
			dag++
			if c := atof(t, r[btCPU]); c == 50 || c == 100 {
				common++
			}
		}
		if share := float64(common) / float64(dag); dag < 1000 || share < 0.99 || share == 1 {
			t.Errorf("%d DAG tasks, %.4f plan 50 or 100; want over 99%% (and not all)", dag, share)
		}
	})
	t.Run("95% of instances run under 199 s", func(t *testing.T) {
		under, total := 0, 0
		for _, r := range bi {
			e := atoi(t, r[biEnd])
			if e == 0 {
				continue
			}
			total++
			if e-atoi(t, r[biStart]) < 199 {
				under++
			}
		}
		// about 180,000 instances: the share's sd is 0.0005; instances of a
		// task end by the task's end, and task durations follow the real
		// quantiles (p75 62 s, p95 504 s), which leaves this share near 0.96
		if share := float64(under) / float64(total); total < 50000 || share < 0.94 || share > 0.97 {
			t.Errorf("%d of %d instances (%.4f) under 199 s; want 0.95", under, total, share)
		}
	})
	t.Run("DAG structure and timing", func(t *testing.T) {
		type task struct{ start, end, n int64 }
		tasks := make(map[string]task) // job/task
		for _, r := range bt {
			tasks[r[btJob]+"/"+r[btTask]] = task{atoi(t, r[btStart]), atoi(t, r[btEnd]), atoi(t, r[btInstances])}
		}
		for _, r := range bt {
			id, deps, ok := parseTaskName(r[btTask])
			if !ok {
				continue
			}
			me := tasks[r[btJob]+"/"+r[btTask]]
			for _, d := range deps {
				if d >= id {
					t.Fatalf("task %s of %s depends on a later task", r[btTask], r[btJob])
				}
				var dep task
				found := false
				for k, v := range tasks {
					if strings.HasPrefix(k, r[btJob]+"/") {
						if did, _, ok := parseTaskName(strings.TrimPrefix(k, r[btJob]+"/")); ok && did == d {
							dep, found = v, true
						}
					}
				}
				if found && dep.end != 0 && me.start < dep.end {
					t.Fatalf("task %s of %s starts at %d before dependency %d ends at %d", r[btTask], r[btJob], me.start, d, dep.end)
				}
			}
		}
		count := make(map[string]int64)
		for _, r := range bi {
			k := r[biJob] + "/" + r[biTask]
			count[k]++
			if atoi(t, r[biStart]) < tasks[k].start {
				t.Fatalf("instance %s starts before its task", r[biInstance])
			}
		}
		for k, v := range tasks {
			if v.end != 0 && count[k] != v.n {
				t.Fatalf("task %s has %d instance rows; instance_num %d", k, count[k], v.n)
			}
		}
	})
	t.Run("instances run on machines in service", func(t *testing.T) {
		type ev struct {
			t  int64
			up bool
		}
		timeline := make(map[string][]ev)
		for _, r := range mm {
			timeline[r[mmMachine]] = append(timeline[r[mmMachine]], ev{atoi(t, r[mmTime]), r[mmStatus] == "USING"})
		}
		for _, r := range bi {
			s, up := atoi(t, r[biStart]), false
			for _, e := range timeline[r[biMachine]] {
				if e.t <= s {
					up = e.up
				}
			}
			if !up {
				t.Fatalf("instance %s starts at %d on %s while it is not USING", r[biInstance], s, r[biMachine])
			}
		}
	})
}

func TestSynthDeterministic(t *testing.T) {
	opts := SynthOptions{Machines: 12, Days: 0.25, Seed: 9, BatchConcurrency: 1}
	a, b := synthTrace(t, opts), synthTrace(t, opts)
	opts.Seed = 10
	c := synthTrace(t, opts)
	for _, tb := range Tables {
		x, _ := os.ReadFile(filepath.Join(a, tb+".csv"))
		y, _ := os.ReadFile(filepath.Join(b, tb+".csv"))
		z, _ := os.ReadFile(filepath.Join(c, tb+".csv"))
		if len(x) == 0 || !bytes.Equal(x, y) {
			t.Errorf("%s: seed 9 gave different (or empty) files", tb)
		}
		if bytes.Equal(x, z) && tb != MachineMeta {
			t.Errorf("%s: seeds 9 and 10 gave the same file", tb)
		}
	}
}

func TestSynthOptionErrors(t *testing.T) {
	cases := []struct {
		name string
		opts SynthOptions
		want string
	}{
		{"negative machines", SynthOptions{Machines: -1}, "machines"},
		{"too short", SynthOptions{Days: 0.01}, "days"},
		{"NaN days", SynthOptions{Days: math.NaN()}, "days"},
		{"negative concurrency", SynthOptions{BatchConcurrency: -1}, "concurrency"},
		{"usage step", SynthOptions{MachineUsageStep: 5}, "usage steps"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := Synth(context.Background(), tc.opts, t.TempDir())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v; want one containing %q", err, tc.want)
			}
		})
	}
}
