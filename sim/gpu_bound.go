package sim

import (
	"math"
	"slices"
)

// An upper bound on the GPU allocation that any placement can reach.
//
// The problem. After a prefix P of the arrival order, any scheduler (online
// or not, FGD or a learned policy) has placed a subset S of P, and the GPUs
// it allocates are the milli-GPU of S. So alloc(P) <= OPT(P), the most
// milli-GPU of any subset of P that can be packed at once: per node, the
// CPU and memory requests within allocatable, whole-GPU pods on distinct
// idle devices, every share pod inside one device, the shares of a device
// summing to at most GPUMilli, every pod on a node of an allowed model.
// CPU-only pods only take room, so a subset that maximises GPU milli may
// leave them out: they are ignored.
//
// The relaxation. Group the pods into shapes t (CPU, memory, GPU request;
// N_t pods in P, g_t milli each) and the nodes into classes c (CPU C_c,
// memory M_c, G_c devices of one model; K_c nodes). Dualise the shape
// counts (sum over nodes of x_{t,n} <= N_t, prices lambda_t >= 0) and, per
// node, the CPU and memory constraints with prices mu_c >= 0 shared by the
// nodes of a class. For any such prices, weak duality gives
//
//	OPT(P) <= L(lambda, mu) = sum_t lambda_t N_t + sum_c K_c (mu_c^cpu + mu_c^mem + f_c)
//
// where f_c is the best value of one node of class c when a pod of shape t
// is worth q_{t,c} = g_t - lambda_t - mu_c^cpu cpu_t/C_c - mu_c^mem mem_t/M_c
// and only the GPU constraints are kept (the within-one-GPU and whole-GPU
// ones exactly, the shape counts dropped: a relaxation only raises f_c).
// That node problem is solved exactly: devices are interchangeable, so the
// best filling of one device by shares is an unbounded knapsack over its
// milli (a dynamic programme in units of the gcd of the share sizes), and
// the G_c devices split between whole-GPU pods (q_t for c_t devices) and
// share-filled devices by a second knapsack over G_c. A shape that cannot
// go on a class at all (model refused, more devices, CPU or memory than the
// node has) is worth nothing there, which is a valid tightening (no
// placement puts it there). The inner maximisation being exact, every L is
// a valid bound whatever the prices; the search only looks for low ones.
// L never exceeds the trivial bounds (at lambda = g, mu = 0 it is the
// demand; at lambda = 0, mu = 0 at most the capacity), and the result is
// also capped by both.
//
// The prices. Dual feasible functions of bin packing (Fekete and Schepers)
// give them their structure: for a weight w_t of each shape in devices such
// that every set of shares fitting one device weighs at most 1, and a device
// price beta, lambda_t = max(0, g_t - beta w_t) (bound, below). On the
// default list at 100% arrived, for one, the DFF that rounds shares above
// 810 milli up to a device and those below 191 down to 0 says what limits
// any placement: a device holding an 810-milli share can only be filled by
// the few shares of 190 milli or less. That DFF alone, at beta = 0.81,
// gives 6,055 of the 6,212 GPUs (97.47%; worked by hand, then checked with
// eval); the search finds 6,042 (97.27%).
//
// At its best prices L is the Lagrangian dual of the configuration LP of
// the devices with CPU and memory as linear constraints per class (the LP's
// gap: on one GPU, shares of 810 and 500 give 810 at most, the LP 905); the
// search reaches those prices only approximately.

type boundShape struct {
	g        float64 // GPUs (milli / GPUMilli)
	cpu, mem int64
	gpu      GPURequest
}

type boundClass struct {
	cpu, mem int64
	gpus     int
	model    int8
	k        float64 // nodes
	shares   []int   // eligible share shapes
	group    int     // classes with the same shares share a group: one device knapsack for all when CPU and memory are free
	wholes   []int   // eligible whole-GPU shapes
}

// gpuBound is the Lagrangian bound of one workload.
type gpuBound struct {
	shapes  []boundShape
	shapeOf []int32 // per workload pod: shape index, -1 for a CPU-only pod
	classes []boundClass
	unit    int16   // gcd of the share sizes and GPUMilli
	units   int     // GPUMilli / unit
	es      []int16 // DFF thresholds to try: 0 and each share size below GPUMilli/2, plus one
	lastE   int16   // the DFF threshold and k of the last search's best prices
	lastK   int     // (-1: no search yet)

	lam []float64    // per shape
	mu  [][2]float64 // per class: CPU, memory
	// scratch
	best   []float64
	q      []float64
	pos    []int
	w      []float64
	choice []int32
	x      []float64
	gLam   []float64
	gMu    [][2]float64
	dev    []float64 // per group: the best device of shares, NaN when not known
}

func gcd16(a, b int16) int16 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// newGPUBound groups w's GPU pods into shapes and its nodes into classes.
func newGPUBound(w *GPUWorkload) *gpuBound {
	b := &gpuBound{shapeOf: make([]int32, len(w.Pods)), unit: GPUMilli}
	seen := make(map[boundShape]int32)
	for i := range w.Pods {
		p := &w.Pods[i]
		if p.GPU.Count == 0 {
			b.shapeOf[i] = -1
			continue
		}
		s := boundShape{g: float64(p.GPU.Total()) / GPUMilli, cpu: p.CPU, mem: p.Mem, gpu: p.GPU}
		id, ok := seen[s]
		if !ok {
			id = int32(len(b.shapes))
			seen[s] = id
			b.shapes = append(b.shapes, s)
			if p.GPU.Share() {
				b.unit = gcd16(b.unit, p.GPU.Milli)
			}
		}
		b.shapeOf[i] = id
	}
	b.units = GPUMilli / int(b.unit)
	b.es, b.lastK = []int16{0}, -1
	seenE := map[int16]bool{0: true}
	for _, s := range b.shapes {
		if m := s.gpu.Milli; s.gpu.Share() && m < GPUMilli/2 && !seenE[m+1] {
			seenE[m+1] = true
			b.es = append(b.es, m+1)
		}
	}
	type key struct {
		cpu, mem int64
		gpus     int8
		model    int8
	}
	cls := make(map[key]int)
	for i := range w.Nodes {
		n := &w.Nodes[i]
		if n.GPUs == 0 {
			continue // holds no GPU pod
		}
		k := key{n.CPU, n.Mem, n.GPUs, n.Model}
		ci, ok := cls[k]
		if !ok {
			ci = len(b.classes)
			cls[k] = ci
			b.classes = append(b.classes, boundClass{cpu: n.CPU, mem: n.Mem, gpus: int(n.GPUs), model: n.Model})
		}
		b.classes[ci].k++
	}
	for ci := range b.classes {
		c := &b.classes[ci]
		for si, s := range b.shapes {
			if !s.gpu.Models.Allows(c.model) || int(s.gpu.Count) > c.gpus || s.cpu > c.cpu || s.mem > c.mem {
				continue
			}
			if s.gpu.Share() {
				c.shares = append(c.shares, si)
			} else {
				c.wholes = append(c.wholes, si)
			}
		}
	}
	for ci := range b.classes {
		c := &b.classes[ci]
		c.group = ci
		for cj := range ci {
			if slices.Equal(b.classes[cj].shares, c.shares) {
				c.group = b.classes[cj].group
				break
			}
		}
	}
	b.dev = make([]float64, len(b.classes))
	b.lam = make([]float64, len(b.shapes))
	b.mu = make([][2]float64, len(b.classes))
	b.best = make([]float64, b.units+1)
	b.q = make([]float64, len(b.shapes))
	b.w = make([]float64, len(b.shapes))
	b.choice = make([]int32, b.units+1)
	b.x = make([]float64, len(b.shapes))
	b.gLam = make([]float64, len(b.shapes))
	b.gMu = make([][2]float64, len(b.classes))
	return b
}

// eval returns L(lambda, mu) for the shape counts n, in GPUs; with grad it
// also leaves a subgradient in gLam and gMu (from the maximising
// configurations).
func (b *gpuBound) eval(n []float64, grad bool) float64 {
	L := 0.0
	for t := range b.shapes {
		L += b.lam[t] * n[t]
		if grad {
			b.gLam[t] = n[t]
		}
	}
	for i := range b.dev {
		b.dev[i] = math.NaN()
	}
	for ci := range b.classes {
		c := &b.classes[ci]
		mc, mm := b.mu[ci][0]/float64(c.cpu), b.mu[ci][1]/float64(c.mem)
		q := func(t int) float64 {
			s := &b.shapes[t]
			return s.g - b.lam[t] - mc*float64(s.cpu) - mm*float64(s.mem)
		}
		free := b.mu[ci] == [2]float64{} && !grad
		dev := b.dev[c.group]
		if !free || math.IsNaN(dev) {
			// one device filled with shares: an unbounded knapsack over its
			// units, over the shares worth something
			pos := b.pos[:0]
			for _, t := range c.shares {
				if n[t] != 0 {
					if b.q[t] = q(t); b.q[t] > 0 {
						pos = append(pos, t)
					}
				}
			}
			b.pos = pos
			best, choice := b.best, b.choice
			best[0], choice[0] = 0, -1
			for u := 1; u <= b.units; u++ {
				v, ch := best[u-1], int32(-1)
				for _, t := range pos {
					if w := int(b.shapes[t].gpu.Milli / b.unit); w <= u && best[u-w]+b.q[t] > v {
						v, ch = best[u-w]+b.q[t], int32(t)
					}
				}
				best[u], choice[u] = v, ch
			}
			dev = best[b.units]
			if free {
				b.dev[c.group] = dev
			}
		}
		// the devices: whole-GPU pods or share-filled devices (a
		// knapsack over the G devices; hc: -1 empty, -2 shares, else the
		// whole-GPU shape ending at d)
		var h [MaxGPUs + 1]float64
		var hc [MaxGPUs + 1]int32
		for d := 1; d <= c.gpus; d++ {
			h[d], hc[d] = h[d-1], -1
			if dev > 0 {
				h[d], hc[d] = h[d-1]+dev, -2
			}
			for _, t := range c.wholes {
				if k := int(b.shapes[t].gpu.Count); k <= d && n[t] != 0 && h[d-k]+q(t) > h[d] {
					h[d], hc[d] = h[d-k]+q(t), int32(t)
				}
			}
		}
		L += c.k * (b.mu[ci][0] + b.mu[ci][1] + h[c.gpus])
		if grad {
			b.subgradient(ci, hc[:c.gpus+1])
		}
	}
	return L
}

// subgradient adds class ci's maximising configuration (hc from eval, the
// share choices in b.choice) to gLam and sets gMu[ci].
func (b *gpuBound) subgradient(ci int, hc []int32) {
	c := &b.classes[ci]
	shareDevs := 0.0
	for d := len(hc) - 1; d > 0; {
		switch t := hc[d]; t {
		case -1:
			d--
		case -2:
			shareDevs++
			d--
		default:
			b.x[t]++
			d -= int(b.shapes[t].gpu.Count)
		}
	}
	if shareDevs > 0 {
		for u := b.units; u > 0; {
			if t := b.choice[u]; t < 0 {
				u--
			} else {
				b.x[t] += shareDevs
				u -= int(b.shapes[t].gpu.Milli / b.unit)
			}
		}
	}
	cpu, mem := 0.0, 0.0
	for _, list := range [2][]int{c.shares, c.wholes} {
		for _, t := range list {
			if x := b.x[t]; x != 0 {
				b.gLam[t] -= c.k * x
				cpu += x * float64(b.shapes[t].cpu)
				mem += x * float64(b.shapes[t].mem)
				b.x[t] = 0
			}
		}
	}
	b.gMu[ci] = [2]float64{c.k * (1 - cpu/float64(c.cpu)), c.k * (1 - mem/float64(c.mem))}
}

// descend runs iters subgradient steps from the current prices and keeps
// the best prices met; cur is L at the current prices. The nodes of a class
// all pick the same configuration at given prices, so plain subgradients
// jump between extremes; the direction is an exponential average of the
// subgradients (as the volume algorithm's), each coordinate scaled by its
// size (pods of the shape, nodes of the class), the step halved when L
// stalls.
func (b *gpuBound) descend(n []float64, iters int, cur float64) float64 {
	bestLam := append([]float64(nil), b.lam...)
	bestMu := append([][2]float64(nil), b.mu...)
	dLam := make([]float64, len(b.lam))
	dMu := make([][2]float64, len(b.mu))
	theta, stall := 0.05, 0
	for it := range iters {
		L := b.eval(n, true)
		if L < cur-1e-9 {
			cur, stall = L, 0
			copy(bestLam, b.lam)
			copy(bestMu, b.mu)
		} else if stall++; stall >= 10 {
			theta, stall = theta/2, 0
		}
		a := 0.2
		if it == 0 {
			a = 1
		}
		norm := 0.0
		for t, g := range b.gLam {
			if n[t] != 0 {
				dLam[t] = a*g/n[t] + (1-a)*dLam[t]
				norm += dLam[t] * dLam[t]
			}
		}
		for ci, g := range b.gMu {
			k := b.classes[ci].k
			dMu[ci][0] = a*g[0]/k + (1-a)*dMu[ci][0]
			dMu[ci][1] = a*g[1]/k + (1-a)*dMu[ci][1]
			norm += dMu[ci][0]*dMu[ci][0] + dMu[ci][1]*dMu[ci][1]
		}
		if norm == 0 {
			break // a subgradient of 0: L is at its minimum
		}
		step := theta / math.Sqrt(norm)
		for t, d := range dLam {
			if n[t] != 0 {
				b.lam[t] = max(0, b.lam[t]-step*d)
			}
		}
		for ci, d := range dMu {
			b.mu[ci][0] = max(0, b.mu[ci][0]-step*d[0])
			b.mu[ci][1] = max(0, b.mu[ci][1]-step*d[1])
		}
	}
	copy(b.lam, bestLam)
	copy(b.mu, bestMu)
	return cur
}

// dffWeights sets b.w to the weights of a dual feasible function of bin
// packing (in devices) picked by e and k: shares of less than e milli
// weigh 0, shares of more than GPUMilli-e weigh a whole device, the others
// their size x; then, for k > 0, Fekete and Schepers' u^(k): x when (k+1)x
// is an integer, else floor((k+1)x)/k. A pod of c whole GPUs weighs c.
func (b *gpuBound) dffWeights(e int16, k int) {
	for t, s := range b.shapes {
		if !s.gpu.Share() {
			b.w[t] = float64(s.gpu.Count)
			continue
		}
		m := s.gpu.Milli
		x := float64(m) / GPUMilli
		switch {
		case m < e:
			x = 0
		case m > GPUMilli-e:
			x = 1
		}
		if k > 0 && x > 0 && x < 1 {
			if y := float64(k+1) * x; y != math.Floor(y) {
				x = math.Floor(y) / float64(k)
			}
		}
		b.w[t] = x
	}
}

// bound searches prices for the shape counts n and returns the smallest L
// met, in GPUs: a valid bound on the GPUs any placement of those pods
// allocates, whichever prices it ends on. It tries the current prices (a
// warm start from the last call), then the prices of dual feasible
// functions w: a pod is worth q_t = min(g_t, beta w_t) (lambda_t = g_t -
// q_t) for a device price beta on a grid refined around its best, with
// every threshold e and k = 0..4 when full, else the last best (e, k)
// only; then, when full, CPU and memory prices one class and resource at a
// time. It leaves the best prices in lam and mu.
//
// (A projected subgradient method from lambda = 0 never improved on the
// capacity on the openb lists: the nodes of a class all pick the same
// configuration at given prices, and the steps jump between extremes. The
// dual feasible functions give the right structure directly: on the default
// list at 100% arrived, shares above 810 milli take a whole device because
// the shares that could fill the rest are few.)
func (b *gpuBound) bound(n []float64, full bool, iters int) float64 {
	for t := range b.shapes {
		if n[t] == 0 {
			b.lam[t] = b.shapes[t].g // absent shapes drop out
		}
	}
	cur := b.eval(n, false)
	bestLam := append([]float64(nil), b.lam...)
	bestMu := append([][2]float64(nil), b.mu...)
	seenL := math.Inf(1) // the best L of the search, better than cur or not
	try := func(e int16, k int, beta float64) float64 {
		for t, s := range b.shapes {
			if n[t] == 0 {
				b.lam[t] = s.g
			} else {
				b.lam[t] = max(0, s.g-beta*b.w[t])
			}
		}
		for ci := range b.mu {
			b.mu[ci] = [2]float64{}
		}
		L := b.eval(n, false)
		if L < seenL {
			seenL, b.lastE, b.lastK = L, e, k
		}
		if L < cur {
			cur = L
			copy(bestLam, b.lam)
			copy(bestMu, b.mu)
		}
		return L
	}
	grid := func(e int16, k int, betas []float64) (lo float64) {
		b.dffWeights(e, k)
		loL := math.Inf(1)
		for _, beta := range betas {
			if L := try(e, k, beta); L < loL {
				lo, loL = beta, L
			}
		}
		return lo
	}
	// a coarse grid over every DFF when full, then a finer one around the
	// best
	e, k := b.lastE, b.lastK
	if full || k < 0 {
		coarse := []float64{0, 0.2, 0.4, 0.6, 0.8, 1}
		for _, e := range b.es {
			for k := range 5 {
				grid(e, k, coarse)
			}
		}
		e, k = b.lastE, b.lastK
	}
	lo := grid(e, k, []float64{0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1})
	var fine []float64
	for d := 0.02; d < 0.1; d += 0.02 {
		fine = append(fine, math.Min(1, lo+d), math.Max(0, lo-d))
	}
	grid(e, k, fine)
	copy(b.lam, bestLam)
	copy(b.mu, bestMu)
	for full {
		improved := false
		for ci := range b.mu {
			for r := range 2 {
				old := b.mu[ci][r]
				for _, v := range [...]float64{old + 0.1, old + 0.5, old + 2, old * 0.5, 0} {
					if v == old {
						continue
					}
					b.mu[ci][r] = v
					if L := b.eval(n, false); L < cur-1e-9 {
						cur, old, improved = L, v, true
					}
				}
				b.mu[ci][r] = old
			}
		}
		if !improved {
			break
		}
	}
	return b.descend(n, iters, cur)
}
