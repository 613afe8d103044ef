package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// SyntheticOptions shape the built-in synthetic workload, a small stand-in
// for a production trace that needs no files: long-running online services
// that arrive first, then a Poisson stream (with a daily cycle) of short batch
// pods and some online pods, on heterogeneous nodes with taints, failure
// domains and a little node affinity. Memory is the scarce resource, as in
// the Alibaba trace.
type SyntheticOptions struct {
	Nodes int    // nodes at time 0
	Pods  int    // pods in the workload
	Seed  uint64 // drives every random choice
	// Load is the offered load: the memory requested by the pod stream (plus
	// the services) over the cluster's memory, in steady state. Near or above
	// 1 the cluster saturates and placement starts to matter.
	Load float64
	// ServiceShare is the share of cluster memory that long-running services
	// request at the start.
	ServiceShare float64
	// OnlineShare is the share of streamed pods that are online (high
	// priority, minutes to hours long); the rest are batch.
	OnlineShare float64
	// Zones and RacksPerZone set the failure domains.
	Zones, RacksPerZone int
	// DayLength is the period of the arrival-rate cycle (24 h by default,
	// shorten it to see the cycle in a short run).
	DayLength Time
}

// DefaultSyntheticOptions returns the defaults used by `kubesim replay`.
func DefaultSyntheticOptions(nodes int) SyntheticOptions {
	return SyntheticOptions{
		Nodes:        nodes,
		Pods:         250 * nodes,
		Seed:         1,
		Load:         1.0,
		ServiceShare: 0.3,
		OnlineShare:  0.1,
		Zones:        3,
		RacksPerZone: 4,
		DayLength:    2 * Hour,
	}
}

// Node shapes of the synthetic cluster: most nodes are general purpose, every
// fourth is CPU-heavy. Both have less memory per core than the pods ask for
// on average, so memory binds first.
var syntheticShapes = [...]Resources{
	{CPU: 32000, Mem: 128 * 1024},
	{CPU: 32000, Mem: 128 * 1024},
	{CPU: 32000, Mem: 128 * 1024},
	{CPU: 64000, Mem: 128 * 1024},
}

// Taint and toleration of the nodes dedicated to online services.
var (
	dedicatedTaint      = Taint{Key: "dedicated", Value: "online", Effect: NoSchedule}
	dedicatedToleration = Toleration{Key: "dedicated", Value: "online", Effect: NoSchedule}
	spotTaint           = Taint{Key: "spot", Value: "true", Effect: PreferNoSchedule}
)

// Synthetic generates a workload. The same options give the same workload.
func Synthetic(o SyntheticOptions) (*Workload, error) {
	switch {
	case o.Nodes <= 0:
		return nil, fmt.Errorf("synthetic workload: nodes = %d: must be positive", o.Nodes)
	case o.Pods < 0:
		return nil, fmt.Errorf("synthetic workload: pods = %d: must not be negative", o.Pods)
	case !(o.Load > 0) || o.Load > 10:
		return nil, fmt.Errorf("synthetic workload: load = %v: must be in (0, 10]", o.Load)
	case !(o.ServiceShare >= 0 && o.ServiceShare < 1):
		return nil, fmt.Errorf("synthetic workload: service share = %v: must be in [0, 1)", o.ServiceShare)
	case !(o.OnlineShare >= 0 && o.OnlineShare <= 1):
		return nil, fmt.Errorf("synthetic workload: online share = %v: must be in [0, 1]", o.OnlineShare)
	case o.Zones <= 0 || o.RacksPerZone <= 0:
		return nil, fmt.Errorf("synthetic workload: zones = %d, racks per zone = %d: must be positive", o.Zones, o.RacksPerZone)
	case o.DayLength <= 0:
		return nil, fmt.Errorf("synthetic workload: day length = %d: must be positive", o.DayLength)
	}
	r := rand.New(rand.NewPCG(o.Seed, 0x73796e74))
	w := &Workload{Name: fmt.Sprintf("synthetic-n%d-p%d-s%d", o.Nodes, o.Pods, o.Seed),
		Nodes: make([]NodeSpec, 0, o.Nodes), Pods: make([]PodSpec, 0, o.Pods)} // sized once: growing 600k pods cost a second
	var totalMem int64
	for i := range o.Nodes {
		shape := syntheticShapes[i%len(syntheticShapes)]
		zone := i % o.Zones
		rack := (i / o.Zones) % o.RacksPerZone
		n := NodeSpec{
			Name:        fmt.Sprintf("node-%03d", i),
			Allocatable: shape,
			MaxPods:     DefaultMaxPods,
			Labels: map[string]string{
				LabelZone: fmt.Sprintf("zone-%d", zone),
				LabelRack: fmt.Sprintf("zone-%d-rack-%d", zone, rack),
			},
		}
		switch {
		case i%10 == 9:
			n.Taints = []Taint{dedicatedTaint}
		case i%10 == 4:
			n.Taints = []Taint{spotTaint}
		}
		totalMem += shape.Mem
		w.Nodes = append(w.Nodes, n)
	}

	// Long-running services first, filling ServiceShare of memory.
	var serviceMem int64
	for len(w.Pods) < o.Pods && float64(serviceMem) < o.ServiceShare*float64(totalMem) {
		p := onlinePod(r, o, len(w.Pods))
		p.Name = fmt.Sprintf("svc-%d", len(w.Pods))
		p.Arrival = Time(r.Int64N(int64(Minute)))
		p.Duration = 0
		serviceMem += p.Requests.Mem
		w.Pods = append(w.Pods, p)
	}

	// The stream: sizes first, so the arrival rate can be set to the load.
	first := len(w.Pods)
	var memTime float64 // sum of mem * duration, MiB*ms
	for i := first; i < o.Pods; i++ {
		var p PodSpec
		if r.Float64() < o.OnlineShare {
			p = onlinePod(r, o, i)
		} else {
			p = batchPod(r, i)
		}
		memTime += float64(p.Requests.Mem) * float64(p.Duration)
		w.Pods = append(w.Pods, p)
	}
	if n := o.Pods - first; n > 0 {
		// Little's law: memory in use = rate * mean(mem * duration).
		free := (o.Load - o.ServiceShare) * float64(totalMem)
		if free <= 0 {
			free = 0.05 * float64(totalMem)
		}
		rate := free / (memTime / float64(n)) // pods per ms
		t := float64(Minute)
		for i := first; i < o.Pods; {
			// Thinning: rate(t) = rate * (1 + 0.3 sin(2 pi t / day)).
			t += r.ExpFloat64() / (1.3 * rate)
			phase := 2 * math.Pi * t / float64(o.DayLength)
			if r.Float64()*1.3 <= 1+0.3*math.Sin(phase) {
				w.Pods[i].Arrival = Time(t)
				i++
			}
		}
		// The window closes a minute after the last arrival: pods still
		// pending then count as unschedulable.
		w.End = w.Pods[o.Pods-1].Arrival + Minute
	}
	return w, w.Validate()
}

// batchPod is a short, low-priority task: 1-8 cores, 2-32 GiB (about 3 GiB
// a core, CPU-heavy relative to the nodes' 4 or 2 GiB a core), a log-normal duration with a median of a
// minute, and usage that wanders around the request.
func batchPod(r *rand.Rand, i int) PodSpec {
	cpu := []int64{1000, 2000, 2000, 4000, 8000}[r.IntN(5)]
	mem := []int64{2048, 4096, 4096, 8192, 16384, 32768}[r.IntN(6)]
	dur := Time(math.Exp(math.Log(60_000) + 0.8*r.NormFloat64()))
	p := PodSpec{
		Name:     fmt.Sprintf("batch-%d", i),
		Group:    fmt.Sprintf("job-%d", i/8),
		Requests: Resources{CPU: cpu, Mem: mem},
		Priority: Low,
		Duration: max(dur, Second),
	}
	p.Usage = usageProfile(r, p.Requests, p.Duration, 0.3, 1.3, 0.5, 1.1)
	return p
}

// onlinePod is a latency-sensitive service: 0.5-4 cores, 4-32 GiB (about 8
// GiB a core, memory-heavy), high
// priority, minutes to hours, with a CPU limit at twice the request, usage
// below its requests most of the time, a few required or preferred zones and
// tolerations of the dedicated nodes.
func onlinePod(r *rand.Rand, o SyntheticOptions, i int) PodSpec {
	cpu := []int64{500, 1000, 2000, 4000}[r.IntN(4)]
	mem := []int64{4096, 8192, 16384, 32768}[r.IntN(4)]
	dur := Time(math.Exp(math.Log(float64(20*Minute)) + 1.0*r.NormFloat64()))
	p := PodSpec{
		Name:        fmt.Sprintf("online-%d", i),
		Group:       fmt.Sprintf("app-%d", r.IntN(20)),
		Requests:    Resources{CPU: cpu, Mem: mem},
		Limits:      Resources{CPU: 2 * cpu},
		Priority:    High,
		Duration:    max(dur, Minute),
		Tolerations: []Toleration{dedicatedToleration},
	}
	switch k := r.IntN(20); {
	case k == 0:
		p.Affinity = &Affinity{Required: []Term{{{Key: LabelZone, Op: OpIn, Values: []string{fmt.Sprintf("zone-%d", r.IntN(o.Zones))}}}}}
	case k <= 2:
		p.Affinity = &Affinity{Preferred: []PreferredTerm{{Weight: 50, Term: Term{{Key: LabelZone, Op: OpIn, Values: []string{fmt.Sprintf("zone-%d", r.IntN(o.Zones))}}}}}}
	}
	horizon := p.Duration
	p.Usage = usageProfile(r, p.Requests, horizon, 0.2, 1.6, 0.6, 0.95)
	return p
}

// usageProfile draws up to three piecewise-constant steps of actual use,
// CPU in [cLo, cHi] and memory in [mLo, mHi] times the request.
func usageProfile(r *rand.Rand, req Resources, dur Time, cLo, cHi, mLo, mHi float64) []UsagePoint {
	steps := 1 + r.IntN(3)
	u := make([]UsagePoint, steps)
	for k := range u {
		u[k] = UsagePoint{
			Offset: Time(int64(dur) * int64(k) / int64(steps)),
			Use: Resources{
				CPU: int64(float64(req.CPU) * (cLo + (cHi-cLo)*r.Float64())),
				Mem: int64(float64(req.Mem) * (mLo + (mHi-mLo)*r.Float64())),
			},
		}
	}
	return u
}
