package env

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/kubesim/kubesim/sim"
)

// Info describes one step (or a reset) beyond the reward. The reward terms
// are reported unweighted, so each can be logged on its own; the reward is
//
//	Balance*w1 + Fragment*w2 - Violation*w3 - Failure*w4 - Pending*wp
//	    - Wait*w5 - Unplaced*w6
type Info struct {
	// Outcome is what the simulator did with the action; zero after a reset,
	// sim.OutcomeNoPod for a step taken after the episode ended.
	Outcome sim.Outcome
	// Time is the simulated time of the returned observation.
	Time sim.Time
	// Steps counts the decisions taken in the episode so far.
	Steps int

	// Balance is R_balance at the returned observation (with balance_form
	// "delta", the change of the bounded balance caused by the decision).
	Balance float64
	// Fragment is R_fragment = (1-mix)*Stranded + mix*Frag.
	Fragment float64
	// Stranded is the decrease of the mean stranded share (of free CPU and
	// of free memory) caused by the decision.
	Stranded float64
	// Frag is the decrease of the fragmentation ratio caused by the decision.
	Frag float64
	// Violation is P_violation = Violations + Evictions + Preemptions.
	Violation float64
	// Failure is P_failure: 1 when the action was masked out or out of range.
	Failure float64
	// Pending is 1 when the action deferred a pod that had a feasible node.
	Pending float64
	// Wait is P_wait: the pending pod-time, in pod-minutes, from the
	// decision to the returned observation, a high-priority pod weighing
	// Reward.WaitHigh.
	Wait float64
	// Unplaced is P_unplaced: on the step that terminates the episode, the
	// pods left pending, a high-priority pod weighing Reward.WaitHigh; 0 on
	// every other step, and on truncation.
	Unplaced float64
	// PairedWait and PairedUnplaced are, with Reward.Paired, the prior
	// heuristic's replay's P_wait over the same simulated interval and, on
	// the terminating step, its P_unplaced at its end; the reward adds them
	// back with the weights of P_wait and P_unplaced. 0 without Paired.
	PairedWait, PairedUnplaced float64
	// Violations, Evictions and Preemptions count what happened from the
	// decision to the returned observation: SLA violations that started
	// (throttling or eviction of a high-priority pod), pods evicted by memory
	// pressure or machine removal, pods preempted.
	Violations, Evictions, Preemptions int64

	// Episode is set on the step that ends an episode.
	Episode *Episode
	// Final is set by VecEnv on the step that ends an episode: the last
	// observation of that episode (the returned observation is already the
	// first of the next). Valid until the next VecEnv.Step.
	Final *Obs
}

// Episode summarises a finished (terminated or truncated) episode.
type Episode struct {
	Return float64 // undiscounted sum of rewards
	Steps  int     // decisions
	Nodes  int     // initial node count
	// Result holds the simulator's metrics of the episode (for a truncated
	// episode, of the run so far).
	Result *sim.Result
}

// Env is one reinforcement-learning environment over the simulator: each
// step is one scheduling decision. It is not safe for concurrent use.
type Env struct {
	cfg Config
	src Source
	pcg *rand.PCG
	rng *rand.Rand

	eng     *sim.Engine
	typical sim.Resources
	enc     encoder
	obs     Obs
	nodes   int // initial node count of the episode
	steps   int
	ret     float64
	over    bool // terminated or truncated
	term    bool
	trunc   bool

	paired  *pairedRun // Reward.Paired's replay of the episode's workload
	simSeed uint64     // the episode's simulator seed (the replay's too)

	afterDecide func(clusterStats) // test hook: the stats Step derived right after Decide
}

// rngStream is the PCG stream of the episode random generator.
const rngStream = 0x656e7669726f6e

// maxEmptyEpisodes bounds how many episodes in a row may end before their
// first decision before Reset gives up.
const maxEmptyEpisodes = 100

// New returns an environment. src supplies each episode's workload; nil means
// the synthetic source cfg.Workload. Call Reset before Step.
func New(cfg Config, src Source) (*Env, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if src == nil {
		src = cfg.Workload
	}
	e := &Env{cfg: cfg, src: src, pcg: rand.NewPCG(0, rngStream)}
	e.rng = rand.New(e.pcg)
	e.enc = newEncoder(cfg)
	e.over = true
	return e, nil
}

// Reset seeds the environment and starts an episode: the cluster size, the
// workload and the simulator's seed are drawn from seed. It returns the
// observation of the first decision. On error the environment has no
// episode: Step does nothing until a Reset succeeds.
func (e *Env) Reset(seed uint64) (Obs, Info, error) {
	e.pcg.Seed(seed, rngStream)
	return e.start()
}

// NextEpisode starts the next episode, continuing the random stream of the
// last Reset (Gymnasium's reset without a seed). VecEnv uses it to
// auto-reset.
func (e *Env) NextEpisode() (Obs, Info, error) { return e.start() }

func (e *Env) start() (Obs, Info, error) {
	e.eng, e.obs, e.over, e.term, e.trunc = nil, Obs{}, true, false, false
	for range maxEmptyEpisodes {
		n := e.cfg.MinNodes + e.rng.IntN(e.cfg.MaxNodes-e.cfg.MinNodes+1)
		w, err := e.src.Episode(e.rng, n)
		if err != nil {
			return Obs{}, Info{}, fmt.Errorf("env: new episode of %d nodes: %w", n, err)
		}
		if w == nil {
			return Obs{}, Info{}, fmt.Errorf("env: new episode of %d nodes: source returned no workload", n)
		}
		// The autoscaler's bounds follow the workload's actual initial size,
		// which a Fixed or trace source need not match with n.
		size := len(w.Nodes)
		if size == 0 {
			size = n
		}
		seed := e.rng.Uint64()
		cfg := e.cfg.WorkloadConfig(w, size, seed)
		eng, err := sim.New(w, cfg)
		if err != nil {
			return Obs{}, Info{}, fmt.Errorf("env: new episode of %d nodes: %w", n, err)
		}
		p, ok := e.next(eng)
		if !ok {
			continue // nothing to decide in this episode
		}
		e.paired, e.simSeed = nil, seed
		if e.cfg.Reward.Paired {
			if e.paired, err = replayPaired(w, cfg, e.cfg.Prior.Baseline(), seed, e.cfg.Reward.WaitHigh); err != nil {
				return Obs{}, Info{}, fmt.Errorf("env: new episode of %d nodes: %w", n, err)
			}
		}
		e.eng, e.typical, e.nodes = eng, eng.Typical(), len(w.Nodes)
		e.steps, e.ret, e.over = 0, 0, false
		e.obs = e.enc.encode(eng.Cluster(), p, e.typical)
		return e.obs, Info{Time: eng.Now()}, nil
	}
	return Obs{}, Info{}, fmt.Errorf("env: %d episodes in a row had no decision to take", maxEmptyEpisodes)
}

// Step applies action to the pod of the current observation and advances
// the simulation to the next decision. Action i < N places the pod on node
// i, action N leaves it pending; any other integer, and a node the mask
// forbids, is a scheduling failure (P_failure) that leaves the pod pending
// for its backoff. terminated is true when the workload is exhausted (the
// returned observation then has no pod: its Pod features are zero and only
// Pending is allowed); truncated when Config.MaxSteps decisions have been
// taken. After either, Step returns the last observation with zero reward
// until the next Reset or NextEpisode.
func (e *Env) Step(action int) (obs Obs, reward float64, terminated, truncated bool, info Info) {
	if e.over {
		info = Info{Outcome: sim.OutcomeNoPod, Steps: e.steps}
		if e.eng != nil {
			info.Time = e.eng.Now()
		}
		return e.obs, 0, e.term, e.trunc, info
	}
	c := e.eng.Cluster()
	nodes := c.Nodes()
	n := len(nodes)
	d := action
	switch {
	case action == n:
		d = sim.PendingDecision
	case action < 0 || action > n:
		d = n // out of range: the engine counts it as invalid
	}
	before := e.eng.Counters()
	st := e.enc.stats // the cluster as observed, which is the cluster now
	var old sim.Node
	if d >= 0 && d < n {
		old = nodes[d]
	}
	w := &e.cfg.Reward
	stdBefore := e.enc.std // of the cluster as observed, which is the cluster now

	from := e.eng.Now()
	info.Outcome = e.eng.Decide(d)

	if w.BalanceForm == Delta {
		// Measured at once, like R_fragment: only a bind or a preemption
		// moves requested CPU, anything else gives exactly 0.
		if info.Outcome == sim.OutcomeBound || info.Outcome == sim.OutcomePreempted {
			info.Balance = balance(Bounded, signalStd(c.Nodes(), w.BalanceOf)) - balance(Bounded, stdBefore)
		}
	}
	after := st
	switch info.Outcome {
	case sim.OutcomeBound: // only node d changed
		after.add(&old, e.typical, -1)
		after.add(&c.Nodes()[d], e.typical, 1)
	case sim.OutcomePreempted: // the pod's node and the victims' nodes changed
		after = clusterStats{}
		for i := range c.Nodes() {
			after.add(&c.Nodes()[i], e.typical, 1)
		}
	}
	if e.afterDecide != nil {
		e.afterDecide(after)
	}
	info.Stranded = st.stranded() - after.stranded()
	info.Frag = st.fragmentation() - after.fragmentation()
	mix := e.cfg.Reward.FragmentMix
	info.Fragment = (1-mix)*info.Stranded + mix*info.Frag

	p, ok := e.next(e.eng)
	e.steps++
	e.obs = e.enc.encode(c, p, e.typical)

	now := e.eng.Counters()
	info.Violations = now.Violations - before.Violations
	info.Evictions = now.Evictions - before.Evictions
	info.Preemptions = now.Preemptions - before.Preemptions
	info.Violation = float64(info.Violations + info.Evictions + info.Preemptions)
	if info.Outcome == sim.OutcomeInvalid {
		info.Failure = 1
	}
	if info.Outcome == sim.OutcomeDeferred {
		info.Pending = 1
	}
	if w.BalanceForm != Delta {
		info.Balance = balance(w.BalanceForm, e.enc.std)
	}
	info.Wait = waitCost(now.PendingMs-before.PendingMs, now.PendingHighMs-before.PendingHighMs, w.WaitHigh)
	e.term = !ok
	e.trunc = ok && e.cfg.MaxSteps > 0 && e.steps >= e.cfg.MaxSteps
	if e.term {
		info.Unplaced = unplacedCost(e.eng.Pending(), e.eng.PendingHigh(), w.WaitHigh)
	}
	info.Time, info.Steps = e.eng.Now(), e.steps
	if e.paired != nil {
		info.PairedWait = e.paired.costAt(info.Time) - e.paired.costAt(from)
		if e.term {
			info.PairedUnplaced = e.paired.unplaced
		}
	}

	reward = w.Balance*info.Balance + w.Fragment*info.Fragment -
		w.Violation*info.Violation - w.Failure*info.Failure - w.Pending*info.Pending -
		w.Wait*(info.Wait-info.PairedWait) - w.Unplaced*(info.Unplaced-info.PairedUnplaced)
	e.ret += reward
	if e.term || e.trunc {
		e.over = true
		info.Episode = &Episode{Return: e.ret, Steps: e.steps, Nodes: e.nodes, Result: e.eng.Result()}
	}
	return e.obs, reward, e.term, e.trunc, info
}

// next advances eng to the next decision the agent must take. Unless
// Config.ForcedSteps is set, decisions where no node passes the filters
// (Pending is the only legal action) are taken by the environment itself,
// as the simulator would take them: they teach nothing, and as steps they
// would let a policy collect the per-step balance reward by keeping pods
// waiting. Their consequences (preemptions, evictions) still reach the
// reward of the agent's next step through the counters.
func (e *Env) next(eng *sim.Engine) (*sim.Pod, bool) {
	p, ok := eng.Next()
	if e.cfg.ForcedSteps {
		return p, ok
	}
	for ok && !eng.Cluster().AnyFeasible(p.Spec) {
		eng.Decide(sim.PendingDecision)
		p, ok = eng.Next()
	}
	return p, ok
}

// balance is R_balance for a standard deviation std of node CPU utilisation.
func balance(f BalanceForm, std float64) float64 {
	if f == Inverse {
		return 1 / (std + 0.01)
	}
	return 1 - std/0.5
}

// Fixed is a Source that replays the same workload in every episode,
// whatever size is asked for: evaluation on one chosen trace window, and
// hand-built cases in tests. The workload is only read, so one Fixed can
// serve many environments at once.
type Fixed struct {
	Workload *sim.Workload
}

// errNoWorkload is returned by a Fixed source without a workload.
var errNoWorkload = errors.New("fixed source has no workload")

// Episode returns f.Workload.
func (f Fixed) Episode(*rand.Rand, int) (*sim.Workload, error) {
	if f.Workload == nil {
		return nil, errNoWorkload
	}
	return f.Workload, nil
}
