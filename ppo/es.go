package ppo

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
)

// ESConfig configures an evolution-strategies search (TrainGPUES for a GPU
// policy, TrainES for a CPU/memory one): a derivative-free search of a
// policy's logit weights, OpenAI-style, with antithetic pairs and centred
// ranks, that scores whole greedy episodes. YAML keys as tagged.
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
	// LossWeight (GPU runs only), when > 0, makes a candidate's fitness
	// loss-averse against the selection policy played on the same
	// episodes: its mean objective minus LossWeight times the mean of
	// max(0, selection's - candidate's) per episode (lossAverse). 0: the
	// plain mean, as before the key existed.
	LossWeight float64 `yaml:"loss_weight" json:"loss_weight,omitempty"`
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
	case !(c.LossWeight >= 0) || math.IsInf(c.LossWeight, 0):
		return bad("loss_weight", c.LossWeight, "must be a finite number >= 0")
	}
	return nil
}

// Checkpoint metadata of an ES run.
const (
	metaESGenerations = "es/generations"
	metaESConfig      = "es/config"
)

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

// esSearch is the search both ES trainers share: the weights, a
// generation's noise, its jobs and its step. What a fitness is (the
// episodes, the score) is the trainer's.
type esSearch struct {
	es    ESConfig
	seed  uint64 // the run's seed (ppo.seed)
	theta []float64
	noise [][]float64
}

func newESSearch(es ESConfig, seed uint64, theta []float64) *esSearch {
	s := &esSearch{es: es, seed: seed, theta: theta, noise: make([][]float64, es.Pairs)}
	for i := range s.noise {
		s.noise[i] = make([]float64, len(theta))
	}
	return s
}

// draw starts generation gen (0-based): its random stream, a function of
// the run's seed and gen only (so a resumed run continues exactly), first
// gives the trainer its episodes, then the noise vectors.
func (s *esSearch) draw(gen int, episodes func(r *rand.Rand)) {
	rng := rand.New(rand.NewPCG(s.seed, 0x6573+uint64(gen))) // "es"
	episodes(rng)
	for _, e := range s.noise {
		for j := range e {
			e[j] = rng.NormFloat64()
		}
	}
}

// play scores the generation on nw workers. Job c < 2 Pairs is pair c/2's
// candidate, theta + sigma e for even c and theta - sigma e for odd c;
// job 2 Pairs is the centre (theta itself) and job 2 Pairs+1 the baseline
// (weights nil: the trainer's heuristic), both on the same episodes for a
// paired log. fitness(w, c, weights) runs on worker w only; fit holds every
// job's score, decisions the candidates' and the centre's.
func (s *esSearch) play(nw int, fitness func(w, c int, weights []float64) (float64, int64, error)) (fit []float64, decisions int64, err error) {
	cands := 2 * s.es.Pairs
	fit = make([]float64, cands+2)
	n := make([]int64, len(fit))
	bufs := make([][]float64, nw) // worker w's candidate
	err = runJobs(nw, len(fit), func(w, c int) error {
		var weights []float64 // nil: the baseline
		switch {
		case c < cands:
			if bufs[w] == nil {
				bufs[w] = make([]float64, len(s.theta))
			}
			sg := s.es.Sigma
			if c%2 == 1 {
				sg = -sg
			}
			for j := range bufs[w] {
				bufs[w][j] = s.theta[j] + sg*s.noise[c/2][j]
			}
			weights = bufs[w]
		case c == cands:
			weights = s.theta
		}
		f, k, err := fitness(w, c, weights)
		fit[c] = f
		if weights != nil {
			n[c] = k
		}
		return err
	})
	for _, k := range n {
		decisions += k
	}
	return fit, decisions, err
}

// runJobs runs jobs 0..n-1 on nw workers, each job k on one worker w
// (job(w, k) calls of one w never overlap), and returns the first error;
// after one, no new job starts.
func runJobs(nw, n int, job func(w, k int) error) error {
	var mu sync.Mutex
	var firstErr error
	next := 0
	var wg sync.WaitGroup
	for w := range nw {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				k := next
				next++
				stop := k >= n || firstErr != nil
				mu.Unlock()
				if stop {
					return
				}
				if err := job(w, k); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return firstErr
}

// step moves theta by LearningRate x (1 / (2 Pairs sigma)) x the sum over
// pairs of (rank(theta+) - rank(theta-)) e, with the candidates' centred
// ranks (cands: the first 2 Pairs entries of play's fit).
func (s *esSearch) step(cands []float64) {
	u := centredRanks(cands)
	scale := s.es.LearningRate / (2 * float64(s.es.Pairs) * s.es.Sigma)
	for i, e := range s.noise {
		k := scale * (u[2*i] - u[2*i+1])
		for j := range s.theta {
			s.theta[j] += k * e[j]
		}
	}
}

// esResumed reads an ES checkpoint's counters (its metadata meta, read
// from path): the generations and decisions done and the best selection
// score under bestKey. Its search (pairs, episodes, sigma, learning rate)
// must be es's; generations, eval_freq and workers may change.
func esResumed(path string, meta map[string]string, es ESConfig, bestKey string) (gen int, steps int64, best float64, err error) {
	var was ESConfig
	if err := json.Unmarshal([]byte(meta[metaESConfig]), &was); err != nil {
		return 0, 0, 0, fmt.Errorf("%w: resuming from %s: no es config (%v): not an es run", ErrConfig, path, err)
	}
	if was.Pairs != es.Pairs || was.Episodes != es.Episodes || was.Sigma != es.Sigma || was.LearningRate != es.LearningRate || was.LossWeight != es.LossWeight {
		esJSON, _ := json.Marshal(es)
		return 0, 0, 0, fmt.Errorf("%w: resuming from %s: its search (pairs, episodes, sigma, learning_rate, loss_weight) %s differs from %s; only generations, eval_freq and workers may change",
			ErrConfig, path, meta[metaESConfig], esJSON)
	}
	if gen, err = strconv.Atoi(meta[metaESGenerations]); err != nil {
		return 0, 0, 0, fmt.Errorf("resuming from %s: bad %s: %w", path, metaESGenerations, err)
	}
	if steps, err = strconv.ParseInt(meta[metaSteps], 10, 64); err != nil {
		return 0, 0, 0, fmt.Errorf("resuming from %s: bad %s: %w", path, metaSteps, err)
	}
	if best, err = strconv.ParseFloat(meta[bestKey], 64); err != nil {
		return 0, 0, 0, fmt.Errorf("resuming from %s: bad %s: %w", path, bestKey, err)
	}
	return gen, steps, best, nil
}

// esWorkers is the worker count of es (0: 2).
func esWorkers(es ESConfig) int {
	if es.Workers == 0 {
		return 2
	}
	return es.Workers
}
