package dataset

import "context"

// machineUsage writes machine_usage: per machine and usage step, the CPU
// and memory its online containers and batch instances use, with the daily
// cycle and noise.
func (g *synth) machineUsage(ctx context.Context) error {
	r := g.rng(4)
	w := g.w[MachineUsage]
	step := g.opts.MachineUsageStep
	for mi, m := range g.ms {
		if mi%64 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		for b := range int64(len(m.bcpu)) {
			t := b * step
			if t >= g.span {
				break
			}
			if t < m.join {
				continue
			}
			var cores, mem float64
			for _, c := range m.online {
				if c.created <= t && t < c.left {
					cores += float64(c.cpuReq) / 100 * c.cpuBase * diurnal(float64(t))
					mem += c.mem * c.memShare
				}
			}
			cores = cores*(1+0.05*r.NormFloat64()) + float64(m.bcpu[b]) + m.sysCPU
			mem += float64(m.bmem[b]) + m.sysMem + 0.5*r.NormFloat64()
			g.r.reset().s(m.id).i(t)
			g.utilInt(r, 100*cores/synthCores)
			g.utilInt(r, mem)
			g.r.empty().empty() // mem_gps and mkpi are empty in most real rows
			g.r.f(20 + 30*r.Float64()).f(15 + 25*r.Float64()).i(int64(1 + r.IntN(10)))
			if err := g.r.to(w); err != nil {
				return err
			}
		}
	}
	return nil
}
