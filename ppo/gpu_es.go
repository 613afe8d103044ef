package ppo

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/kubesim/kubesim/agent"
	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/model"
	"github.com/kubesim/kubesim/sim"
)

// ESConfig configures TrainGPUES, a derivative-free search of a GPU
// policy's logit weights (OpenAI-style evolution strategies with
// antithetic pairs and centred ranks). YAML keys as tagged.
type ESConfig struct {
	// Generations is the number of search steps.
	Generations int `yaml:"generations" json:"generations"`
	// Pairs is the number of antithetic pairs (w + sigma e, w - sigma e)
	// per generation.
	Pairs int `yaml:"pairs" json:"pairs"`
	// Episodes is the number of training episodes per generation; every
	// candidate of a generation plays the same ones (common random
	// numbers), so that fitness differences are differences of policies,
	// not of arrivals.
	Episodes int `yaml:"episodes" json:"episodes"`
	// Sigma is the noise scale, LearningRate the step of plain gradient
	// ascent on the rank-weighted noise.
	Sigma        float64 `yaml:"sigma" json:"sigma"`
	LearningRate float64 `yaml:"learning_rate" json:"learning_rate"`
	// EvalFreq validates every EvalFreq generations (and after the last).
	EvalFreq int `yaml:"eval_freq" json:"eval_freq"`
	// Workers evaluate candidates at once (each with its own copy of the
	// policy); results do not depend on it. 0: 2.
	Workers int `yaml:"workers" json:"workers,omitempty"`
}

// Validate reports the first impossible value, naming its key.
func (c *ESConfig) Validate() error {
	bad := func(key string, v any, why string) error {
		return fmt.Errorf("%w: es.%s = %v: %s", ErrConfig, key, v, why)
	}
	switch {
	case c.Generations < 1:
		return bad("generations", c.Generations, "must be >= 1")
	case c.Pairs < 1:
		return bad("pairs", c.Pairs, "must be >= 1")
	case c.Episodes < 1:
		return bad("episodes", c.Episodes, "must be >= 1")
	case !(c.Sigma > 0) || math.IsInf(c.Sigma, 0):
		return bad("sigma", c.Sigma, "must be a finite number > 0")
	case !(c.LearningRate > 0) || math.IsInf(c.LearningRate, 0):
		return bad("learning_rate", c.LearningRate, "must be a finite number > 0")
	case c.EvalFreq < 0:
		return bad("eval_freq", c.EvalFreq, "must be >= 0")
	case c.Workers < 0 || c.Workers > 64:
		return bad("workers", c.Workers, "want 0 (2) to 64")
	}
	return nil
}

// Checkpoint metadata of an ES run.
const (
	metaESGenerations = "es/generations"
	metaESConfig      = "es/config"
)

// TrainGPUES searches the logit weights of a GPU policy (the architecture
// of cfg: hidden, rounds, logit_clip, prior, zero_init, seed) on
// env.GPUEnv episodes of w under ec. Each generation draws Episodes
// training seeds and Pairs noise vectors e from the run's seed and the
// generation (so a resumed run continues exactly), plays the greedy policy
// of w + sigma e and w - sigma e on the same episodes, scores each by its
// mean GPU allocation at 100% arrived, and moves w by LearningRate x (1 /
// (2 Pairs sigma)) x sum of (rank(w+) - rank(w-)) e, with centred ranks
// in [-0.5, 0.5]. The greedy policy, not a sampled one, is what is
// searched: what an evaluation runs. Validation and selection are
// TrainGPU's (opts: the start first, then every EvalFreq generations,
// best.ckpt strictly better); last.ckpt after every generation, resumed
// with opts.Resume (more generations, another eval_freq or workers; the
// search itself must be the same). A checkpoint loads with agent.LoadGPU
// like a PPO one.
func TrainGPUES(ctx context.Context, es ESConfig, cfg Config, ec env.GPUConfig, w *sim.GPUWorkload, opts GPUOptions) (GPUSummary, error) {
	start := time.Now()
	sum := GPUSummary{BestVal: math.NaN(), SelectVal: math.NaN()}
	if err := es.Validate(); err != nil {
		return sum, err
	}
	if err := ec.Validate(); err != nil {
		return sum, err
	}
	switch {
	case opts.Out == "":
		return sum, fmt.Errorf("%w: no output folder", ErrConfig)
	case cfg.Prior && ec.Prior == "":
		return sum, fmt.Errorf("%w: ppo.prior is on, but env.prior names no GPU policy", ErrConfig)
	case es.EvalFreq > 0 && len(opts.ValSeeds) == 0:
		return sum, fmt.Errorf("%w: es.eval_freq %d without validation seeds", ErrConfig, es.EvalFreq)
	}
	lock, err := openGPURunFolder(opts)
	if err != nil {
		return sum, err
	}
	defer lock.Unlock()
	ecJSON, _ := json.Marshal(ec)
	cfgJSON, _ := json.Marshal(cfg)
	esJSON, _ := json.Marshal(es)
	mcfg := gpuModelConfig(cfg, ec)

	var pol *model.Policy
	gen, steps := 0, int64(0)
	best := math.Inf(-1)
	if opts.Resume != "" {
		var gec env.GPUConfig
		if pol, gec, err = agent.LoadGPU(opts.Resume); err != nil {
			return sum, err
		}
		if gec != ec {
			return sum, fmt.Errorf("%w: resuming from %s: its environment %+v differs from the config's %+v", ErrConfig, opts.Resume, gec, ec)
		}
		meta := pol.Meta()
		var was ESConfig
		if err := json.Unmarshal([]byte(meta[metaESConfig]), &was); err != nil {
			return sum, fmt.Errorf("%w: resuming from %s: no es config (%v): not an es run", ErrConfig, opts.Resume, err)
		}
		if was.Pairs != es.Pairs || was.Episodes != es.Episodes || was.Sigma != es.Sigma || was.LearningRate != es.LearningRate {
			return sum, fmt.Errorf("%w: resuming from %s: its search (pairs, episodes, sigma, learning_rate) %s differs from %s; only generations, eval_freq and workers may change",
				ErrConfig, opts.Resume, meta[metaESConfig], esJSON)
		}
		if gen, err = strconv.Atoi(meta[metaESGenerations]); err != nil {
			return sum, fmt.Errorf("resuming from %s: bad %s: %w", opts.Resume, metaESGenerations, err)
		}
		if steps, err = strconv.ParseInt(meta[metaSteps], 10, 64); err != nil {
			return sum, fmt.Errorf("resuming from %s: bad %s: %w", opts.Resume, metaSteps, err)
		}
		if best, err = strconv.ParseFloat(meta[metaGPUBest], 64); err != nil {
			return sum, fmt.Errorf("resuming from %s: bad %s: %w", opts.Resume, metaGPUBest, err)
		}
	} else if pol, err = model.New(mcfg); err != nil {
		return sum, fmt.Errorf("building the policy: %w", err)
	}
	// save writes the policy after gen generations (the count is gen's, so
	// the update argument of gpuValidator's calls is not needed)
	save := func(path string, _ int64) error {
		return pol.Save(path, map[string]string{
			agent.MetaGPUEnv: string(ecJSON), metaConfig: string(cfgJSON), metaESConfig: string(esJSON),
			metaESGenerations: strconv.Itoa(gen), metaSteps: strconv.FormatInt(steps, 10), metaUpdates: strconv.Itoa(gen),
			metaGPUBest: strconv.FormatFloat(best, 'g', -1, 64),
		})
	}
	logs, err := newGPULogs(opts.Out, opts.Resume != "", esHeader)
	if err != nil {
		return sum, err
	}
	defer logs.close()
	val := &gpuValidator{ec: ec, w: w, opts: opts, logs: logs, sum: &sum, best: &best, save: save}
	validate := func() error {
		v, err := val.run(ctx, pol, int64(gen), steps)
		if err == nil {
			slog.Info("es validation", "generation", gen, "val_alloc100", v, "select_alloc100", sum.SelectVal)
		}
		return err
	}
	if es.EvalFreq > 0 && opts.Resume == "" {
		if err := validate(); err != nil {
			return sum, fmt.Errorf("validating the start: %w", err)
		}
	}

	nw := es.Workers
	if nw == 0 {
		nw = 2
	}
	workers := make([]*esWorker, nw)
	for i := range workers {
		if workers[i], err = newESWorker(mcfg, ec, w); err != nil {
			return sum, err
		}
	}
	theta := pol.LogitWeights(nil)
	d := len(theta)
	noise := make([][]float64, es.Pairs)
	for i := range noise {
		noise[i] = make([]float64, d)
	}
	// jobs of a generation: candidate c < 2 Pairs is pair c/2, sign + for
	// even c; job 2 Pairs is the centre (theta itself) and job 2 Pairs+1
	// the selection policy, both on the same episodes for the paired log
	cands := 2 * es.Pairs
	fit := make([]float64, cands+2)
	for gen < es.Generations {
		if ctx.Err() != nil {
			sum.Interrupted = true
			break
		}
		rng := rand.New(rand.NewPCG(cfg.Seed, 0x6573+uint64(gen))) // "es"
		seeds := make([]uint64, es.Episodes)
		for i := range seeds {
			for seeds[i] = rng.Uint64(); slices.Contains(opts.ValSeeds, seeds[i]); seeds[i] = rng.Uint64() {
			}
		}
		for _, e := range noise {
			for j := range e {
				e[j] = rng.NormFloat64()
			}
		}
		var mu sync.Mutex
		var firstErr error
		var decisions int64 // the candidates' and the centre's
		next := 0
		var wg sync.WaitGroup
		for _, wk := range workers {
			wg.Add(1)
			go func(wk *esWorker) {
				defer wg.Done()
				cand := make([]float64, d)
				for {
					mu.Lock()
					c := next
					next++
					stop := c >= len(fit) || firstErr != nil
					mu.Unlock()
					if stop {
						return
					}
					var weights []float64 // nil: the selection policy
					switch {
					case c < cands:
						s := es.Sigma
						if c%2 == 1 {
							s = -s
						}
						for j := range cand {
							cand[j] = theta[j] + s*noise[c/2][j]
						}
						weights = cand
					case c == cands:
						weights = theta
					}
					f, n, err := wk.fitness(ctx, weights, seeds)
					mu.Lock()
					if err != nil && firstErr == nil {
						firstErr = err
					}
					fit[c] = f
					if weights != nil {
						decisions += n
					}
					mu.Unlock()
				}
			}(wk)
		}
		wg.Wait()
		if firstErr != nil {
			if ctx.Err() != nil {
				sum.Interrupted = true
				break
			}
			return sum, fmt.Errorf("generation %d: %w", gen, firstErr)
		}
		steps += decisions
		centre, base := fit[cands], fit[cands+1]
		u := centredRanks(fit[:cands])
		scale := es.LearningRate / (2 * float64(es.Pairs) * es.Sigma)
		for i, e := range noise {
			k := scale * (u[2*i] - u[2*i+1])
			for j := range theta {
				theta[j] += k * e[j]
			}
		}
		if err := pol.SetLogitWeights(theta); err != nil {
			return sum, err
		}
		gen++
		if err := logs.esProgress(gen, steps, time.Since(start), fit[:cands], centre, base, es); err != nil {
			return sum, err
		}
		if es.EvalFreq > 0 && (gen%es.EvalFreq == 0 || gen == es.Generations) {
			if err := validate(); err != nil {
				if ctx.Err() != nil {
					sum.Interrupted = true
					break
				}
				return sum, err
			}
		}
		if err := save(filepath.Join(opts.Out, LastCheckpoint), int64(gen)); err != nil {
			return sum, err
		}
	}
	if sum.Interrupted {
		if err := save(filepath.Join(opts.Out, LastCheckpoint), int64(gen)); err != nil {
			return sum, err
		}
	}
	logs.close()
	if err := PlotGPULearningCurve(opts.Out, "kubesim GPU evolution strategies"); err != nil {
		slog.Warn("no learning curve", "err", err)
	}
	sum.Steps, sum.Updates, sum.Elapsed = steps, int64(gen), time.Since(start)
	if !math.IsInf(best, -1) {
		sum.BestVal = best
	}
	return sum, nil
}

// centredRanks maps values to their ranks scaled to [-0.5, 0.5] (ties
// share the mean of their ranks); one value maps to 0.
func centredRanks(v []float64) []float64 {
	n := len(v)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case v[a] < v[b]:
			return -1
		case v[a] > v[b]:
			return 1
		}
		return 0
	})
	u := make([]float64, n)
	if n == 1 {
		return u
	}
	for i := 0; i < n; {
		j := i
		for j+1 < n && v[idx[j+1]] == v[idx[i]] {
			j++
		}
		r := float64(i+j)/2/float64(n-1) - 0.5
		for k := i; k <= j; k++ {
			u[idx[k]] = r
		}
		i = j + 1
	}
	return u
}

// esWorker plays candidates: its own policy copy and environment.
type esWorker struct {
	pol   *model.Policy
	actor *agent.GPUActor
	env   *env.GPUEnv
}

func newESWorker(mcfg model.Config, ec env.GPUConfig, w *sim.GPUWorkload) (*esWorker, error) {
	pol, err := model.New(mcfg)
	if err != nil {
		return nil, fmt.Errorf("building the policy: %w", err)
	}
	e, err := env.NewGPUEnv(ec, w)
	if err != nil {
		return nil, err
	}
	return &esWorker{pol: pol, actor: agent.NewGPUActor(pol), env: e}, nil
}

// fitness is the greedy policy of weights theta's mean GPU allocation at
// 100% arrived (alloc100; the end's allocation where the curve has no value
// near 100) over the episodes of seeds, and the decisions it took.
//
// With theta nil the environment's selection policy (env.GPUConfig.Select:
// fgd-tiers in round 9) takes every decision instead, for the paired
// baseline of progress.csv.
func (wk *esWorker) fitness(ctx context.Context, theta []float64, seeds []uint64) (float64, int64, error) {
	if theta != nil {
		if err := wk.pol.SetLogitWeights(theta); err != nil {
			return 0, 0, err
		}
	}
	var s float64
	var n int64
	for _, seed := range seeds {
		obs, err := wk.env.Reset(seed)
		if err != nil {
			return 0, n, err
		}
		for {
			if n%256 == 0 && ctx.Err() != nil {
				return 0, n, ctx.Err()
			}
			var a int
			if theta == nil {
				a = wk.env.Best()
			} else if a, err = wk.actor.Act(obs); err != nil {
				return 0, n, err
			}
			next, _, done, info, err := wk.env.Step(a)
			if err != nil {
				return 0, n, err
			}
			n++
			if done {
				v := alloc100(info.Result.AllocCurve)
				if math.IsNaN(v) {
					v = info.Result.AllocPct
				}
				s += v
				break
			}
			obs = next
		}
	}
	return s / float64(len(seeds)), n, nil
}

// esProgress logs one generation in progress.csv (esHeader): the
// candidates' best and mean fitness (ep_return_mean, ep_alloc_pct_mean,
// the columns PlotGPULearningCurve draws), the centre's before the step
// and the selection policy's on the same episodes, and their difference.
func (l *gpuLogs) esProgress(gen int, steps int64, el time.Duration, fit []float64, centre, base float64, es ESConfig) error {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	l.p.Write([]string{strconv.Itoa(gen), strconv.FormatInt(steps, 10), f(el.Seconds()), strconv.Itoa(len(fit) * es.Episodes),
		f(slices.Max(fit)), f(meanOf(fit)), f(centre), f(base), f(centre - base), f(es.LearningRate)})
	l.p.Flush()
	if err := l.p.Error(); err != nil {
		return fmt.Errorf("progress log: %w", err)
	}
	return nil
}

// esHeader is progress.csv's header in an ES run.
var esHeader = []string{"update", "steps", "seconds", "episodes", "ep_return_mean", "ep_alloc_pct_mean", "centre_alloc", "select_alloc", "centre_minus_select", "learning_rate"}
