package model

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/kubesim/kubesim/model/gnn"
	"github.com/kubesim/kubesim/model/internal/nn"
	"github.com/kubesim/kubesim/model/pointer"
)

// Policy is the actor-critic: the gnn encoder, the pointer decoder and the
// value head. Acting (Act, Forward) runs a host forward pass; training
// (TrainStep) runs gorgonia graphs built once per shape (B, N and the number
// of failure-domain rows) and cached. Both read the same weight tensors. A
// Policy is not safe for concurrent use.
type Policy struct {
	cfg    Config
	enc    *gnn.Encoder
	dec    *pointer.Decoder
	params []*nn.Param

	// host forward pass: one worker per chunk of samples
	workers  []*worker
	allow    []bool
	fwd      Output
	rowCache bool // SetRowCache

	// training
	scratch nn.Layout // the batch's layout, to pick its graph
	graphs  []*graph
	clock   uint64
	opt     adam
	meta    map[string]string

	// behaviour cloning: the parameters the logits depend on (indices in
	// params) and their own Adam state, kept apart from PPO's
	logitParams []int
	cloneOpt    adam
}

// worker holds one chunk's host forward-pass state.
type worker struct {
	lay nn.Layout
	sub Batch
	h32 hostState[float32]
	h64 hostState[float64]
}

type hostState[T nn.Float] struct {
	nodes, pod []T
	enc        gnn.Workspace[T]
	dec        pointer.Workspace[T]
}

// New returns a policy with freshly initialised weights: orthogonal, gains
// sqrt(2) for hidden layers, 0.01 for the policy's query (zero with
// cfg.ZeroInit) and 1 for the value output, biases zero, all drawn from
// cfg.Seed.
func New(cfg Config) (*Policy, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	nn.UseBLAS()
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x6b756265_73696d))
	enc, err := gnn.New(cfg.encoder(), rng)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	dec, err := pointer.New(cfg.decoder(), rng)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if cfg.ZeroInit {
		clearParam(dec.Query)
	}
	p := &Policy{cfg: cfg, enc: enc, dec: dec}
	p.params = append(enc.Params(), dec.Params()...)
	p.opt.init(p.params)
	for i, w := range p.params {
		if w != dec.Value1 && w != dec.Value2 {
			p.logitParams = append(p.logitParams, i)
		}
	}
	return p, nil
}

// clearParam sets every element of w to zero.
func clearParam(w *nn.Param) {
	switch d := w.Value.Data().(type) {
	case []float32:
		clear(d)
	case []float64:
		clear(d)
	}
}

// Config returns the policy's configuration, defaults applied.
func (p *Policy) Config() Config { return p.cfg }

// Meta returns a copy of the metadata read by Load or Restore (nil if none).
func (p *Policy) Meta() map[string]string {
	if p.meta == nil {
		return nil
	}
	m := make(map[string]string, len(p.meta))
	for k, v := range p.meta {
		m[k] = v
	}
	return m
}

// NumParams is the number of scalar weights.
func (p *Policy) NumParams() int {
	n := 0
	for _, w := range p.params {
		n += w.Size()
	}
	return n
}

// SetRowCache makes the host forward pass (Forward, Act) keep the node
// rows of the first layers between calls and recompute only the rows whose
// input changed (gnn.Workspace.SetCache): the same output bit for bit,
// faster when successive batches differ in few nodes, as when one policy
// decides pod after pod on one large cluster (agent.GPUActor). It applies
// only with gonum's BLAS, whose products accumulate each element in the
// same order whatever rows they cover; with OpenBLAS it stays off. The
// cache checks the weights it was computed with, so training between calls
// is safe. TrainStep does not use it.
func (p *Policy) SetRowCache(on bool) { p.rowCache = on && nn.BLASName() == "gonum" }

// BLAS names the BLAS the build uses: "gonum" (pure Go) or "openblas".
func BLAS() string { return nn.BLASName() }

// Output is a forward pass's result for a batch of B samples of N nodes.
type Output struct {
	LogP   []float64 // B*(N+1) log-probabilities, Pending last; masked ones are about -1e9
	Values []float64 // B state values
	// Gate holds, with Config.Gate = K, the B*K weights the gate gives the
	// K priors (sample s's at s*K); empty without a gate.
	Gate []float64
}

// Forward computes the log-probabilities of every action and the values of
// b's states into out, reusing out's slices when they are large enough.
func (p *Policy) Forward(b *Batch, out *Output) error {
	if err := b.check(p.cfg.NodeFeatures, p.cfg.PodFeatures, p.cfg.priors()); err != nil {
		return fmt.Errorf("model forward: %w", err)
	}
	k := b.N + 1
	out.LogP = nn.Grow(out.LogP, b.B*k)
	out.Values = nn.Grow(out.Values, b.B)
	out.Gate = nn.Grow(out.Gate, b.B*p.cfg.Gate)
	p.allow = nn.Grow(p.allow, b.B*k)
	allowed(p.allow, b)

	// Samples are independent, so chunks of them run in parallel, one
	// goroutine each, when the batch is large enough to pay for it.
	chunks := 1
	if b.B*b.N >= parallelRows {
		chunks = min(runtime.GOMAXPROCS(0), b.B)
	}
	for len(p.workers) < chunks {
		p.workers = append(p.workers, &worker{})
	}
	if chunks == 1 {
		p.forwardChunk(b, out, 0, 1)
		return nil
	}
	p.forwardParallel(b, out, chunks)
	return nil
}

func (p *Policy) forwardParallel(b *Batch, out *Output, chunks int) {
	var wg sync.WaitGroup
	for c := 1; c < chunks; c++ {
		wg.Go(func() { p.forwardChunk(b, out, c, chunks) })
	}
	p.forwardChunk(b, out, 0, chunks)
	wg.Wait()
}

// forwardChunk runs the host pass on chunk c of chunks of b's samples,
// with worker c's state, writing its part of out.
func (p *Policy) forwardChunk(b *Batch, out *Output, c, chunks int) {
	d, pf, k := p.cfg.NodeFeatures, p.cfg.PodFeatures, b.N+1
	s0, s1 := c*b.B/chunks, (c+1)*b.B/chunks
	w := p.workers[c]
	w.sub = Batch{
		B: s1 - s0, N: b.N,
		Nodes:     b.Nodes[s0*b.N*d : s1*b.N*d],
		NodeValid: b.NodeValid[s0*b.N : s1*b.N],
		Pod:       b.Pod[s0*pf : s1*pf],
		Mask:      b.Mask[s0*k : s1*k],
		Domain:    b.Domain[s0*b.N : s1*b.N],
	}
	if p.cfg.Prior && len(b.Prior) != 0 {
		g := p.cfg.priors()
		w.sub.Prior = b.Prior[s0*g*k : s1*g*k]
	}
	// b was validated; a chunk's slices have matching lengths by construction.
	_ = w.lay.Set(w.sub.B, w.sub.N, w.sub.NodeValid, w.sub.Domain)
	allow, logp, values := p.allow[s0*k:s1*k], out.LogP[s0*k:s1*k], out.Values[s0:s1]
	gate := out.Gate[s0*p.cfg.Gate : s1*p.cfg.Gate]
	if p.cfg.Float64 {
		hostForward(p, w, &w.h64, allow, logp, values)
		copyGate(gate, w.h64.dec.GateWeights())
	} else {
		hostForward(p, w, &w.h32, allow, logp, values)
		copyGate(gate, w.h32.dec.GateWeights())
	}
}

// copyGate copies a chunk's gate weights into out's share of them.
func copyGate[T nn.Float](dst []float64, src []T) {
	for i := range dst {
		dst[i] = float64(src[i])
	}
}

// parallelRows is the batch size (B*N rows) from which Forward splits the
// samples over GOMAXPROCS goroutines.
const parallelRows = 1024

func hostForward[T nn.Float](p *Policy, w *worker, st *hostState[T], allow []bool, logp, values []float64) {
	b := &w.sub
	d, pf := p.cfg.NodeFeatures, p.cfg.PodFeatures
	st.nodes = nn.Grow(st.nodes, b.B*b.N*(d+1))
	st.pod = nn.Grow(st.pod, b.B*(pf+1))
	fillNodes(st.nodes, b, d)
	fillPod(st.pod, b, pf)
	st.enc.SetCache(p.rowCache)
	h, pe := gnn.Forward(p.enc, &st.enc, &w.lay, st.nodes, st.pod)
	pointer.Forward(p.dec, &st.dec, &w.lay, h, pe, allow, b.Prior, logp, values)
}

// ActResult is Act's output, one entry per sample.
type ActResult struct {
	Actions []int     // in [0, N]; N is Pending
	LogP    []float64 // log-probability of the chosen action
	Values  []float64 // state value
	// Gate is Output.Gate: with Config.Gate = K, sample s's K gate weights
	// at s*K; empty without a gate.
	Gate []float64
}

// Act picks one action per sample of b: sampled from the policy with rng,
// or the most probable allowed action (lowest index on ties) when greedy
// (rng may then be nil). A masked action is never chosen. out's slices are
// reused when large enough.
func (p *Policy) Act(b *Batch, greedy bool, rng *rand.Rand, out *ActResult) error {
	if !greedy && rng == nil {
		return errors.New("model act: sampling needs a *rand.Rand")
	}
	if err := p.Forward(b, &p.fwd); err != nil {
		return fmt.Errorf("model act: %w", err)
	}
	out.Actions = nn.Grow(out.Actions, b.B)
	out.LogP = nn.Grow(out.LogP, b.B)
	out.Values = nn.Grow(out.Values, b.B)
	out.Gate = append(out.Gate[:0], p.fwd.Gate...)
	k := b.N + 1
	for s := range b.B {
		lp := p.fwd.LogP[s*k : (s+1)*k]
		ok := p.allow[s*k : (s+1)*k]
		a := pick(lp, ok, greedy, rng)
		out.Actions[s] = a
		out.LogP[s] = lp[a]
		out.Values[s] = p.fwd.Values[s]
	}
	return nil
}

// pick chooses an allowed index of lp: the first maximum (greedy) or a draw
// from exp(lp) restricted to allowed entries. The last entry (Pending) is
// always allowed, so there is always a choice.
func pick(lp []float64, ok []bool, greedy bool, rng *rand.Rand) int {
	last := len(lp) - 1
	if greedy {
		best := last
		for i, v := range lp {
			if ok[i] && (v > lp[best] || (v == lp[best] && i < best)) {
				best = i
			}
		}
		return best
	}
	u := rng.Float64()
	acc := 0.0
	for i, v := range lp {
		if !ok[i] {
			continue
		}
		acc += math.Exp(v)
		if u < acc {
			return i
		}
		last = i
	}
	return last // u beyond the rounded total: the last allowed action
}
