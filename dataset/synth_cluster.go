package dataset

import (
	"context"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
)

// synthMachine is one generated machine.
type synthMachine struct {
	id       string
	fd1, fd2 int64
	join     int64      // first time in service (0: from the start)
	down     [][2]int64 // maintenance intervals [from, to)
	memFill  float64    // online memory target
	memUsed  float64    // online memory requested so far
	cpuUsed  float64    // online cores requested so far
	memEver  float64    // memory of every container ever placed here
	cpuEver  float64
	sysCPU   float64 // cores
	sysMem   float64 // share of memory
	online   []synthContainer
	bcpu     []float32 // batch cores per machine-usage step
	bmem     []float32 // batch memory per machine-usage step
}

func (m *synthMachine) upAt(t int64) bool {
	if t < m.join {
		return false
	}
	for _, d := range m.down {
		if t >= d[0] && t < d[1] {
			return false
		}
	}
	return true
}

type synthContainer struct {
	id       string
	app      string
	created  int64
	left     int64   // stop time; the trace's span when it runs to the end
	cpuReq   int64   // 100 = 1 core
	mem      float64 // normalised
	cpuBase  float64 // share of the request used at the daily peak
	memShare float64 // share of mem_size used
}

// domains draws failure_domain_1 groups with the real sizes (machines per
// value: p50 9, p95 39) and gives each machine a failure_domain_2 value:
// usually its group's, sometimes another, so that the levels overlap
// rather than nest.
func (g *synth) domains(r *rand.Rand) (fd1, fd2 []int64) {
	n := len(g.ms)
	nfd2 := max(2, int(math.Round(float64(n)*domain2PerMachine)))
	perm := r.Perm(n)
	fd1, fd2 = make([]int64, n), make([]int64, n)
	for next, d := 0, int64(1); next < n; d++ {
		size := max(1, int(math.Round(targetDomainSize.sample(r.Float64(), math.Inf(1)))))
		home := int64(1 + r.IntN(nfd2))
		for k := 0; k < size && next < n; k++ {
			i := perm[next]
			next++
			fd1[i], fd2[i] = d, home
			if r.Float64() >= domainHome {
				fd2[i] = 1 + (home+int64(r.IntN(nfd2-1)))%int64(nfd2) // another value
			}
		}
	}
	return fd1, fd2
}

func (g *synth) machines() error {
	r := g.rng(1)
	// Machines are in service at t = 0; 3.6% of all machines join later
	joining := int(math.Round(float64(g.opts.Machines) * joiningShare / (1 - joiningShare)))
	n := g.opts.Machines + joining
	nb := (g.span + g.opts.MachineUsageStep - 1) / g.opts.MachineUsageStep
	days := float64(g.span) / 86400
	w := g.w[MachineMeta]
	for i := range n {
		m := &synthMachine{id: "m_" + strconv.Itoa(i+1)}
		m.memFill = onlineMemFillLo + (onlineMemFillHi-onlineMemFillLo)*r.Float64()
		m.sysCPU = systemCPUCoresLo + (systemCPUCoresHi-systemCPUCoresLo)*r.Float64()
		m.sysMem = systemMemLo + (systemMemHi-systemMemLo)*r.Float64()
		m.bcpu = make([]float32, nb)
		m.bmem = make([]float32, nb)
		g.ms = append(g.ms, m)
	}
	rd := g.rng(5)
	fd1, fd2 := g.domains(rd)
	// the machines that join during the trace, at uniform times
	for _, i := range rd.Perm(n)[:joining] {
		g.ms[i].join = 1 + rd.Int64N(g.span-1)
	}
	for i, m := range g.ms {
		m.fd1, m.fd2 = fd1[i], fd2[i]
		type ev struct {
			t      int64
			status string
		}
		evs := []ev{{m.join, "USING"}}
		life := g.span - m.join
		for range poisson(r, rereportPerDay*float64(life)/86400) {
			evs = append(evs, ev{m.join + 1 + r.Int64N(life-1), "USING"})
		}
		for range poisson(r, maintenancePerDay*days) {
			from := m.join + 1 + r.Int64N(life-1)
			to := min(from+600+r.Int64N(6600), g.span-1)
			if to <= from {
				continue
			}
			m.down = append(m.down, [2]int64{from, to})
			evs = append(evs, ev{from, "IMPORT_INSTALLING"}, ev{to, "USING"})
		}
		sort.SliceStable(evs, func(a, b int) bool { return evs[a].t < evs[b].t })
		for _, e := range evs {
			// a re-report of USING inside a maintenance window would end it
			// early: report the machine's actual state at that time
			st := e.status
			if st == "USING" && !m.upAt(e.t) {
				st = "IMPORT_INSTALLING"
			}
			g.r.reset().s(m.id).i(e.t).i(m.fd1).i(m.fd2).i(synthCores).i(synthMem).s(st)
			if err := g.r.to(w); err != nil {
				return err
			}
		}
	}
	return nil
}

// container specs: cpu_request in hundredths of a core with its weight;
// memory per core (normalised units) makes online services memory-heavy.
var (
	specCPU       = [...]int64{100, 200, 400, 800}
	specCPUWeight = [...]float64{0.2, 0.35, 0.35, 0.1}
	specMemCore   = [...]float64{1.56, 1.76, 1.95}
)

func (g *synth) containers(ctx context.Context) error {
	r := g.rng(2)
	open := make([]int, len(g.ms)) // machines still below their memory target
	for i := range open {
		open[i] = i
	}
	minMem := float64(specCPU[0]) / 100 * specMemCore[0]
	nc, ng := 0, 0
	for len(open) > 0 {
		if ng%64 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		ng++
		app := "app_" + strconv.Itoa(ng)
		x, cpu := r.Float64(), specCPU[len(specCPU)-1]
		for k, wgt := range specCPUWeight {
			if x < wgt {
				cpu = specCPU[k]
				break
			}
			x -= wgt
		}
		mem := math.Round(float64(cpu)/100*specMemCore[r.IntN(len(specMemCore))]*100) / 100
		cores := float64(cpu) / 100
		size := 1
		for r.Float64() >= 1/groupMean {
			size++
		}
		used := make(map[int64]bool)
		for range size {
			pick := -1
			for try := 0; try < 16 && len(open) > 0; try++ {
				j := r.IntN(len(open))
				m := g.ms[open[j]]
				if m.memUsed+mem > m.memFill*synthMem || m.cpuUsed+cores > onlineCPUCap*synthCores {
					continue
				}
				if used[m.fd1] && try < 8 {
					continue // spread a group over failure domains
				}
				pick = j
				break
			}
			if pick < 0 {
				break
			}
			m := g.ms[open[pick]]
			nc++
			c := synthContainer{id: "c_" + strconv.Itoa(nc), app: app, cpuReq: cpu, mem: mem, left: g.span,
				cpuBase: 0.65 + 0.3*r.Float64(), memShare: 0.85 + 0.13*r.Float64()}
			if m.join > 0 { // deployed as its machine joins
				c.created = min(m.join+r.Int64N(600), g.span-1)
			}
			m.online = append(m.online, c)
			m.memUsed += mem
			m.cpuUsed += cores
			used[m.fd1] = true
			if m.memUsed+minMem > m.memFill*synthMem || m.cpuUsed+0.01 > onlineCPUCap*synthCores {
				open[pick] = open[len(open)-1]
				open = open[:len(open)-1]
			}
		}
		if ng > 100*len(g.ms)+1000 {
			break // every machine is too full for the specs drawn
		}
	}
	// churn: a container stops and a new one of its app and spec replaces
	// it on its machine up to a minute later
	rc := g.rng(6)
	for _, m := range g.ms {
		m.memEver, m.cpuEver = m.memUsed, m.cpuUsed
		for k := range len(m.online) {
			c := &m.online[k]
			life := float64(g.span-c.created) / 86400
			if rc.Float64() >= churnPerDay*life || g.span-c.created < 2 {
				continue
			}
			cores := float64(c.cpuReq) / 100
			if m.memEver+c.mem > churnMemCap*synthMem || m.cpuEver+cores > churnCPUCap*synthCores {
				continue
			}
			c.left = c.created + 1 + rc.Int64N(g.span-c.created-1)
			next := c.left + rc.Int64N(60)
			if next >= g.span {
				continue
			}
			nc++
			nw := *c
			nw.id, nw.created, nw.left = "c_"+strconv.Itoa(nc), next, g.span
			nw.cpuBase, nw.memShare = 0.65+0.3*rc.Float64(), 0.85+0.13*rc.Float64()
			m.online = append(m.online, nw)
			m.memEver += c.mem
			m.cpuEver += cores
		}
	}
	// container_meta, then container_usage, machine by machine
	wm, wu := g.w[ContainerMeta], g.w[ContainerUsage]
	step := g.opts.ContainerUsageStep
	for mi, m := range g.ms {
		if mi%64 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		for _, c := range m.online {
			ts := []int64{c.created}
			for range poisson(r, containerRowsDay*float64(c.left-c.created)/86400) {
				ts = append(ts, c.created+r.Int64N(c.left-c.created))
			}
			sort.Slice(ts, func(a, b int) bool { return ts[a] < ts[b] })
			if c.left < g.span {
				ts = append(ts, c.left)
			}
			for k, t := range ts {
				status := "started"
				if c.left < g.span && k == len(ts)-1 {
					status = "stopped"
				}
				g.r.reset().s(c.id).s(m.id).i(t).s(c.app).s(status).i(c.cpuReq).i(c.cpuReq).f(c.mem)
				if err := g.r.to(wm); err != nil {
					return err
				}
			}
			for t := (c.created + step - 1) / step * step; t < c.left; t += step {
				cpu := 100 * c.cpuBase * diurnal(float64(t)) * (1 + 0.08*r.NormFloat64())
				memU := 100*c.memShare + r.NormFloat64()
				g.r.reset().s(c.id).s(m.id).i(t)
				g.utilInt(r, cpu)
				g.utilInt(r, memU)
				if r.IntN(3) == 0 { // cpi, mem_gps and mpki are often empty in the trace
					g.r.empty().empty().empty()
				} else {
					g.r.f(0.8 + 0.8*r.Float64()).f(2 * r.Float64()).i(int64(r.IntN(8)))
				}
				g.r.f(r.Float64()).f(r.Float64()).i(int64(r.IntN(10)))
				if err := g.r.to(wu); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// utilInt writes a utilisation percentage clamped to [0, 100], or now and
// then an invalid marker (-1 or 101) as the trace has.
func (g *synth) utilInt(r *rand.Rand, v float64) {
	if r.Float64()*1000 < utilInvalidPerMill {
		if r.IntN(2) == 0 {
			g.r.i(-1)
		} else {
			g.r.i(101)
		}
		return
	}
	g.r.i(int64(math.Round(math.Max(0, math.Min(100, v)))))
}
