package sim

// GPU resources (openb traces, FGD's artifact semantics).
//
// A node has up to MaxGPUs GPUs of one model, each with GPUMilli milli-GPU.
// A pod asks for Count whole GPUs (Milli == GPUMilli), or, when Count is 1
// and Milli < GPUMilli, a share of one GPU that must fit inside a single
// GPU's free milli. Which GPU(s) a pod takes is part of its placement: a
// bit set over the node's device indices (GPUMask).

// GPUMilli is the capacity of one GPU in milli-GPU.
const GPUMilli = 1000

// MaxGPUs is the most GPUs a node may have (the openb traces have 0-8).
const MaxGPUs = 8

// GPUMask is a set of a node's GPU device indices (bit i = device i).
type GPUMask uint8

// Count returns the number of devices in the set.
func (m GPUMask) Count() int {
	n := 0
	for ; m != 0; m &= m - 1 {
		n++
	}
	return n
}

// GPUModels is a set of GPU models, as bits over the model ids of a
// GPUWorkload (at most 32 models). The zero set means "any model".
type GPUModels uint32

// Allows reports whether a node whose GPUs are of model (an id; -1 for a
// node without GPUs) satisfies the constraint. An empty set allows every
// model; a non-empty one refuses nodes without GPUs, as the artifact's
// IsNodeAccessibleToPodByType does.
func (s GPUModels) Allows(model int8) bool {
	if s == 0 {
		return true
	}
	return model >= 0 && s&(1<<uint(model)) != 0
}

// GPURequest is a pod's GPU demand.
type GPURequest struct {
	Count  int8      // GPUs wanted (0 for a CPU-only pod)
	Milli  int16     // milli per GPU: GPUMilli for whole GPUs, less for a share
	Models GPUModels // allowed models; 0 means any
}

// Share reports whether the request is a share of one GPU.
func (r GPURequest) Share() bool { return r.Count == 1 && r.Milli < GPUMilli }

// Total returns the milli-GPU the request takes in all (Count x Milli).
func (r GPURequest) Total() int64 { return int64(r.Count) * int64(r.Milli) }

// GPUs is one node's GPU state: the free milli of each device, by device
// index, and the devices' model. It is a value type of fixed size, so
// copying it (to try a placement) allocates nothing.
//
// Change Free through Take and Release, which keep the summary that makes
// Fits constant-time (the idle devices and the largest free milli); code
// that writes Free directly calls Refresh before the next Fits.
type GPUs struct {
	Free  [MaxGPUs]int16 // free milli of device i, for i < N
	N     int8           // devices on the node
	Model int8           // model id, -1 for a node without GPUs
	idle  int8           // devices with GPUMilli free
	most  int16          // the largest free milli of a device (0 without devices)
	total int32          // free milli summed over the devices
}

// NewGPUs returns n idle GPUs of the given model.
func NewGPUs(n int, model int8) GPUs {
	g := GPUs{N: int8(n), Model: model}
	for i := range n {
		g.Free[i] = GPUMilli
	}
	if n == 0 {
		g.Model = -1
	}
	g.Refresh()
	return g
}

// Refresh recomputes the summary Fits reads after Free was written
// directly.
func (g *GPUs) Refresh() {
	g.idle, g.most, g.total = 0, 0, 0
	for i := range g.N {
		f := g.Free[i]
		if f == GPUMilli {
			g.idle++
		}
		g.most = max(g.most, f)
		g.total += int32(f)
	}
}

// TotalFree returns the free milli-GPU summed over the devices.
func (g *GPUs) TotalFree() int64 { return int64(g.total) }

// Idle returns the number of devices with all their milli free.
func (g *GPUs) Idle() int { return int(g.idle) }

// Fits reports whether the request fits the GPUs, the model constraint
// included: Count devices each with at least Milli free (so a share fits a
// single device, and whole GPUs need idle devices). A CPU-only request
// always fits.
//
// A workload that passes GPUWorkload.Validate asks for a share of one GPU
// or for whole GPUs, so the test is on the summary: the largest free milli
// for a share, the idle devices otherwise.
func (g *GPUs) Fits(r GPURequest) bool {
	switch {
	case r.Count == 0:
		return true
	case !r.Models.Allows(g.Model):
		return false
	case r.Milli < GPUMilli:
		return r.Count == 1 && g.most >= r.Milli
	default:
		return g.idle >= r.Count
	}
}

// BestFit returns the devices the artifact's default GPU selection ("best")
// takes for r: for a share, the device with the least free milli that still
// fits (the lowest index on ties); for whole GPUs, the lowest-indexed idle
// devices. It returns 0 when r does not fit or asks for no GPU.
func (g *GPUs) BestFit(r GPURequest) GPUMask {
	if r.Count == 0 || !g.Fits(r) {
		return 0
	}
	if r.Share() {
		best := -1
		for i := range int(g.N) {
			if g.Free[i] >= r.Milli && (best < 0 || g.Free[i] < g.Free[best]) {
				best = i
			}
		}
		return 1 << uint(best)
	}
	return g.FirstIdle(int(r.Count))
}

// FirstIdle returns the k lowest-indexed idle devices, or 0 when fewer than
// k are idle.
func (g *GPUs) FirstIdle(k int) GPUMask {
	var m GPUMask
	for i := range int(g.N) {
		if k == 0 {
			break
		}
		if g.Free[i] == GPUMilli {
			m |= 1 << uint(i)
			k--
		}
	}
	if k > 0 {
		return 0
	}
	return m
}

// CanTake reports whether taking r.Milli from each device of m is a valid
// placement of r: m names exactly r.Count existing devices, each with
// enough free milli, and the model is allowed.
func (g *GPUs) CanTake(r GPURequest, m GPUMask) bool {
	if r.Count == 0 {
		return m == 0
	}
	if m.Count() != int(r.Count) || int(m>>uint(g.N)) != 0 || !r.Models.Allows(g.Model) {
		return false
	}
	for i := range int(g.N) {
		if m&(1<<uint(i)) != 0 && g.Free[i] < r.Milli {
			return false
		}
	}
	return true
}

// Take subtracts r.Milli from each device of m. The caller checks CanTake.
func (g *GPUs) Take(r GPURequest, m GPUMask) {
	for i := range int(g.N) {
		if m&(1<<uint(i)) != 0 {
			g.Free[i] -= r.Milli
		}
	}
	g.Refresh()
}

// Release gives r.Milli back to each device of m (the inverse of Take).
func (g *GPUs) Release(r GPURequest, m GPUMask) {
	for i := range int(g.N) {
		if m&(1<<uint(i)) != 0 {
			g.Free[i] += r.Milli
		}
	}
	g.Refresh()
}

// Sorted returns the free milli of the devices in decreasing order, padded
// with zeros: the node's GPU state without device identities, which is all
// that FGD's fragmentation measure and a learned policy's features need.
func (g *GPUs) Sorted() [MaxGPUs]int16 {
	s := g.Free
	for i := int(g.N); i < MaxGPUs; i++ {
		s[i] = 0
	}
	for i := 1; i < MaxGPUs; i++ { // insertion sort, decreasing
		v := s[i]
		j := i
		for j > 0 && s[j-1] < v {
			s[j] = s[j-1]
			j--
		}
		s[j] = v
	}
	return s
}
