package env

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/kubesim/kubesim/sched"
	"github.com/kubesim/kubesim/sim"
)

// GPUEnv is a reinforcement-learning environment over FGD's experiment on
// an openb workload (sim.GPUStep): each step places one arriving pod.
//
//	e, err := env.NewGPUEnv(env.DefaultGPUConfig(), w)
//	obs, err := e.Reset(seed)
//	obs, reward, done, info, err := e.Step(action)
//
// The observation is an Obs with GPUNodeFeatures columns per node and
// GPUPodFeatures pod values (the GPUNode* and GPUPod* constants); Domain
// groups nodes by GPU model; Mask allows the nodes the pod fits and always
// Pending, the last action, which fails the pod (it is not retried, as in
// the artifact). A node the pod does not fit also fails it.
//
// The reward of a step is the GPUs it allocated (the pod's milli-GPU /
// 1000 when placed, else 0) minus Config.FailPenalty when the pod failed
// although some node could take it. Summed over an episode, the first term
// is the GPUs allocated at its end.
//
// Reset(seed) draws the subcluster (GPUConfig.MinNodes/MaxNodes) from the
// seed, a shifted pod mix (GPUConfig.MixRate, withMix), a scarce model (GPUConfig.ScarceRate, withScarce), the model
// constraints of GPUConfig.SpecRate (withSpecs), then the arrivals and tie-break ranks (sim.GPUArrivals with the
// same seed): the same seed and actions give the same episode, bit for bit.
// It is not safe for concurrent use.
type GPUEnv struct {
	cfg GPUConfig
	w   *sim.GPUWorkload
	gpu []int // indices of w's GPU nodes (for subclusters)
	// specModels are the node list's GPU models, those a drawn gpu_spec
	// names (GPUConfig.SpecRate)
	specModels []int8

	sub    *sim.GPUWorkload // the episode's workload (w, or a subcluster of it)
	c      *sim.GPUCluster
	st     *sim.GPUStep
	sel    *sched.GPUScoring
	prior  *sched.GPUScoring
	scores []int64
	pscore []int64
	order  []int32 // orderPrior's buffer
	hist   gpuHistory
	enc    gpuEncoder
	obs    Obs
	models map[sim.GPUModels]float64 // share of GPU nodes a model set allows
	// nodeSet is the set of the episode's node GPU models; pinned the GPU
	// demand (milli) of the decided pods whose gpu_spec allows some of
	// them but not all, per allowed model id (PinnedArrived)
	nodeSet sim.GPUModels
	pinned  [sim.MaxGPUModels]int64
	// capModel is each model's GPU capacity (milli); pinnedObs the
	// GPUNodePinned value per model (nil without GPUConfig.ObsPinned)
	capModel  [sim.MaxGPUModels]int64
	pinnedObs []float64
	steps     int
	ret       float64
}

// GPUInfo describes one step.
type GPUInfo struct {
	Placed bool    // the pod was placed
	Alloc  float64 // GPUs the step allocated
	// Failure is 1 when the pod failed although some node could take it
	// (the reward subtracts FailPenalty for it); Invalid says the action
	// named a node the pod does not fit.
	Failure float64
	Invalid bool
	// Result is set on the step that ends the episode: the run's result,
	// curves included, as sim.RunGPU reports it.
	Result *sim.GPUResult
}

// NewGPUEnv returns an environment over w; call Reset before Step.
func NewGPUEnv(cfg GPUConfig, w *sim.GPUWorkload) (*GPUEnv, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if w == nil {
		return nil, errors.New("gpu env: no workload")
	}
	if err := w.Validate(); err != nil {
		return nil, fmt.Errorf("gpu env: %w", err)
	}
	e := &GPUEnv{cfg: cfg, w: w}
	for i := range w.Nodes {
		if w.Nodes[i].GPUs > 0 {
			e.gpu = append(e.gpu, i)
		}
	}
	if len(e.gpu) == 0 {
		return nil, fmt.Errorf("gpu env: workload %s has no GPU node", w.Name)
	}
	e.specModels = nodeModels(w)
	if cfg.MaxNodes > len(e.gpu) {
		return nil, fmt.Errorf("%w: max_nodes = %d: workload %s has %d GPU nodes", ErrConfig, cfg.MaxNodes, w.Name, len(e.gpu))
	}
	return e, nil
}

// Config returns the environment's configuration.
func (e *GPUEnv) Config() GPUConfig { return e.cfg }

// Cluster returns the episode's cluster (read-only), for tie-breaks by
// rank and for tests.
func (e *GPUEnv) Cluster() *sim.GPUCluster { return e.c }

// rngStream is the PCG stream of the subcluster draw ("gpuenv").
const gpuEnvStream = 0x677075656e76

// Reset starts an episode and returns its first observation. An episode
// with no pod is an error.
func (e *GPUEnv) Reset(seed uint64) (*Obs, error) {
	e.sub = e.w
	if e.cfg.MaxNodes > 0 {
		rng := rand.New(rand.NewPCG(seed, gpuEnvStream))
		n := e.cfg.MinNodes + rng.IntN(e.cfg.MaxNodes-e.cfg.MinNodes+1)
		pick := rng.Perm(len(e.gpu))[:n]
		slices.Sort(pick)
		sub := &sim.GPUWorkload{Name: fmt.Sprintf("%s[%d nodes]", e.w.Name, n), Models: e.w.Models, Pods: e.w.Pods}
		for _, k := range pick {
			sub.Nodes = append(sub.Nodes, e.w.Nodes[e.gpu[k]])
		}
		e.sub = sub
	}
	e.sub = withMix(e.sub, e.cfg.MixRate, e.cfg.MixMax, seed)
	e.sub = withScarce(e.sub, e.cfg.ScarceRate, e.cfg.ScarceDraw(), seed)
	e.sub = withSpecs(e.sub, e.specModels, e.cfg.SpecRate, seed)
	order, rank := sim.GPUArrivals(e.sub, e.cfg.Inflate, seed)
	if len(order) == 0 {
		return nil, fmt.Errorf("gpu env: workload %s: no pod arrives", e.sub.Name)
	}
	e.c = sim.NewGPUCluster(e.sub, rank)
	var err error
	if e.st, err = sim.NewGPUStep(e.sub, e.c, "ppo", order); err != nil {
		return nil, fmt.Errorf("gpu env: %w", err)
	}
	if e.sel, err = sched.NewGPUScoring(e.cfg.Select, seed); err != nil {
		return nil, err
	}
	e.prior = nil
	if e.cfg.Prior == e.cfg.Select {
		e.prior = e.sel
	} else if e.cfg.Prior != "" {
		if e.prior, err = sched.NewGPUScoring(e.cfg.Prior, seed); err != nil {
			return nil, err
		}
	}
	e.hist.reset(e.c.NumTypes)
	e.enc.reset(len(e.c.Nodes))
	e.models = make(map[sim.GPUModels]float64)
	e.nodeSet, e.pinned, e.capModel = 0, [sim.MaxGPUModels]int64{}, [sim.MaxGPUModels]int64{}
	for i := range e.c.Nodes {
		if g := &e.c.Nodes[i].GPU; g.N > 0 {
			e.nodeSet |= 1 << uint(g.Model)
			e.capModel[g.Model] += int64(g.N) * sim.GPUMilli
		}
	}
	e.pinnedObs = nil
	if e.cfg.ObsPinned {
		e.pinnedObs = make([]float64, sim.MaxGPUModels)
	}
	e.steps, e.ret = 0, 0
	e.observe()
	return &e.obs, nil
}

// modelShare is the share of the episode's GPU nodes whose model m allows.
func (e *GPUEnv) modelShare(m sim.GPUModels) float64 {
	if v, ok := e.models[m]; ok {
		return v
	}
	var ok, all int
	for i := range e.c.Nodes {
		if g := &e.c.Nodes[i].GPU; g.N > 0 {
			all++
			if m.Allows(g.Model) {
				ok++
			}
		}
	}
	v := float64(ok) / float64(max(all, 1))
	e.models[m] = v
	return v
}

// observe encodes the current pod's observation and its prior, and runs
// the selection policy's scoring for the decision.
func (e *GPUEnv) observe() {
	k, p := e.st.Pod()
	typ := e.c.TypeOf[k]
	for m := range e.pinnedObs {
		if e.capModel[m] > 0 {
			e.pinnedObs[m] = float64(e.pinned[m]) / float64(e.capModel[m])
		}
	}
	e.enc.encode(&e.obs, e.c, p, typ, &e.hist, e.st.AllocatedMilli(), e.st.ArrivedMilli(), e.st.CapacityMilli(), e.modelShare(p.GPU.Models), e.pinnedObs)
	e.scores = e.sel.Scores(e.c, k, p, e.scores)
	e.obs.Prior = nil
	if e.prior == nil {
		return
	}
	s := e.scores
	if e.prior != e.sel {
		e.pscore = e.prior.Scores(e.c, k, p, e.pscore)
		s = e.pscore
	}
	n := len(e.c.Nodes)
	e.obs.Prior = grow(e.obs.Prior, n+1)
	pr := e.obs.Prior
	pr[n] = e.cfg.PriorPending
	if e.cfg.PriorOrder {
		e.orderPrior(s, pr[:n])
		return
	}
	hi := int64(-1)
	for _, v := range s {
		hi = max(hi, v)
	}
	// ties go to the node of lowest rank, as in the policy's Schedule: a
	// feasible node loses tie*(rank - r0) more, r0 the lowest rank among
	// the best nodes, which keeps exactly 0 and stays first; the term is
	// smaller than the gap between two scores (scale/hi >= scale/100)
	tie := e.cfg.PriorScale / 200 / float64(n)
	r0 := int32(n)
	for i, v := range s {
		if v >= 0 && v == hi {
			r0 = min(r0, e.c.Rank[i])
		}
	}
	for i, v := range s {
		switch {
		case v < 0:
			pr[i] = 0
		case hi <= 0:
			pr[i] = -tie * float64(e.c.Rank[i]-r0)
		default:
			pr[i] = max(e.cfg.PriorScale*(float64(v)/float64(hi)-1), -e.cfg.PriorScale) - tie*float64(e.c.Rank[i]-r0)
		}
	}
}

// orderPrior writes the prior_order prior of scores s into pr: the
// feasible nodes by score (highest first), then rank, the k-th of m at
// -prior_scale x k/m; infeasible nodes 0 (masked).
func (e *GPUEnv) orderPrior(s []int64, pr []float64) {
	e.order = e.order[:0]
	for i, v := range s {
		pr[i] = 0
		if v >= 0 {
			e.order = append(e.order, int32(i))
		}
	}
	rank := e.c.Rank
	slices.SortFunc(e.order, func(a, b int32) int {
		if s[a] != s[b] {
			return cmp.Compare(s[b], s[a])
		}
		return cmp.Compare(rank[a], rank[b])
	})
	m := float64(len(e.order))
	for k, i := range e.order {
		pr[i] = -e.cfg.PriorScale * float64(k) / m
	}
}

// Step takes action a in [0, N]: node a, or N (Pending) to fail the pod.
// It returns the next observation (nil when the episode ended; the
// returned Obs is the environment's own, valid until the next call), the
// reward, whether the episode ended and what happened. An action out of
// range, or a step after the end, is an error.
func (e *GPUEnv) Step(a int) (*Obs, float64, bool, GPUInfo, error) {
	var info GPUInfo
	if e.st == nil || e.st.Done() {
		return nil, 0, true, info, errors.New("gpu env: step after the episode ended (call Reset)")
	}
	n := len(e.c.Nodes)
	if a < 0 || a > n {
		return nil, 0, false, info, fmt.Errorf("gpu env: action %d: want 0..%d", a, n)
	}
	k, p := e.st.Pod()
	feasible := slices.Contains(e.obs.Mask[:n], true)
	node, m := -1, sim.GPUMask(0)
	if a < n {
		if e.obs.Mask[a] {
			node, m = a, e.sel.GPUs(e.c, a, p)
		} else {
			info.Invalid = true
		}
	}
	before := e.st.AllocatedMilli()
	if err := e.st.Decide(node, m); err != nil {
		return nil, 0, false, info, fmt.Errorf("gpu env: %w", err)
	}
	e.hist.add(e.c.TypeOf[k], p.GPU)
	if m := p.GPU.Models & e.nodeSet; p.GPU.Count > 0 && p.GPU.Models != 0 && m != e.nodeSet {
		for id := range sim.MaxGPUModels {
			if m&(1<<uint(id)) != 0 {
				e.pinned[id] += p.GPU.Total()
			}
		}
	}
	info.Placed = node >= 0
	info.Alloc = float64(e.st.AllocatedMilli()-before) / sim.GPUMilli
	if !info.Placed && feasible {
		info.Failure = 1
	}
	r := info.Alloc - e.cfg.FailPenalty*info.Failure
	e.steps++
	e.ret += r
	if e.st.Done() {
		res := e.st.Result()
		info.Result = &res
		return nil, r, true, info, nil
	}
	e.observe()
	return &e.obs, r, false, info, nil
}

// Scores returns the selection policy's scores of the current decision
// (sched.GPUScoring.Scores: -1 for infeasible nodes); valid until the next
// Step or Reset.
func (e *GPUEnv) Scores() []int64 { return e.scores }

// Best returns the node the selection policy would choose now (its
// Schedule's choice), or N (Pending) when the pod fits nowhere.
func (e *GPUEnv) Best() int {
	if b := e.sel.Best(e.c, e.scores); b >= 0 {
		return b
	}
	return len(e.c.Nodes)
}

// Pod returns the current pod (the one the next Step decides; read-only),
// or nil when the episode ended.
func (e *GPUEnv) Pod() *sim.GPUPodSpec {
	if e.st == nil || e.st.Done() {
		return nil
	}
	_, p := e.st.Pod()
	return p
}

// Arrived returns the GPU demand (milli) of the pods decided so far and
// the episode's GPU capacity (milli): arrived/capacity is the x axis of
// the allocation curve.
func (e *GPUEnv) Arrived() (arrived, capacity int64) {
	if e.st == nil {
		return 0, 0
	}
	return e.st.ArrivedMilli(), e.st.CapacityMilli()
}

// PinnedArrived returns the GPU demand (milli) of the pods decided so far
// that a gpu_spec confines to some of the episode's GPU models, not all,
// among them model (a pod allowing k such models counts for each): the
// arrival history of demand that only some models can serve. 0 for a node
// without GPUs (model -1).
func (e *GPUEnv) PinnedArrived(model int8) int64 {
	if model < 0 || int(model) >= sim.MaxGPUModels {
		return 0
	}
	return e.pinned[model]
}

// Return is the reward summed over the episode so far.
func (e *GPUEnv) Return() float64 { return e.ret }
