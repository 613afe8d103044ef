package sim

// GPUFrag is FGD's fragmentation measure of one node (Weng et al., ATC'23,
// as the artifact's NodeGpuShareFragAmountScore computes it): the expected
// milli-GPU of the node that a pod drawn from the workload's pod-type
// distribution cannot use.
//
// For each type t with share p(t):
//   - a CPU-only type cannot use any GPU: all free milli-GPU count;
//   - a type whose model constraint the node fails, or that does not fit the
//     node's free CPU, or whose GPUs do not fit the devices: all count;
//   - otherwise the free milli of the devices with less free than t asks
//     per GPU count (those devices cannot host t).
//
// The measure reads CPU and GPU only, never memory, as the artifact does.
// It is defined here once and used by the allocation/fragmentation curves
// (RunGPU), by the fgd scheduler (sched) and by anything else that needs it.
// A node without free GPU milli has fragmentation 0.
//
// It reads Free only (not the summary Refresh keeps), so a caller may try a
// placement by writing Free directly.
func GPUFrag(cpuFree int64, g *GPUs, types []TypeShare) float64 {
	var total int64
	for d := range g.N {
		total += int64(g.Free[d])
	}
	if total == 0 {
		return 0
	}
	ft := float64(total)
	var frag float64
	for i := range types {
		t := &types[i]
		r := t.GPU
		if r.Count == 0 || cpuFree < t.CPU || !r.Models.Allows(g.Model) {
			frag += t.P * ft
			continue
		}
		var fits int8
		var short int64
		for d := range g.N {
			if f := g.Free[d]; f >= r.Milli {
				fits++
			} else {
				short += int64(f)
			}
		}
		if fits >= r.Count {
			frag += t.P * float64(short)
		} else {
			frag += t.P * ft
		}
	}
	return frag
}
