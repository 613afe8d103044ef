package serve

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"github.com/kubesim/kubesim/agent"
	"github.com/kubesim/kubesim/env"
	"github.com/kubesim/kubesim/model"
	"github.com/kubesim/kubesim/sim"
)

// Policy is a placement policy that says how much it likes each option.
// Probs writes into dst (len(c.Nodes())+1) the probability of each node of
// c and, last, of Pending, and returns dst. An instance is used by one
// goroutine at a time; a Server keeps a pool of them.
type Policy interface {
	Probs(c *sim.Cluster, p *sim.Pod, dst []float64) ([]float64, error)
}

// NewPolicy makes a fresh policy instance.
type NewPolicy func() (Policy, error)

// DefaultCheckpoint is the shipped checkpoint, relative to the working
// directory (the repository's root).
const DefaultCheckpoint = "results/policy/best.ckpt"

// ResolveCheckpoint returns path, or DefaultCheckpoint when path is empty,
// and an error that says where it looked when the file is missing.
func ResolveCheckpoint(path string) (string, error) {
	explicit := path != ""
	if !explicit {
		path = DefaultCheckpoint
	}
	if _, err := os.Stat(path); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("checkpoint %s: %w", path, err)
		}
		abs, _ := filepath.Abs(path)
		if explicit {
			return "", fmt.Errorf("checkpoint %s: no such file", abs)
		}
		return "", fmt.Errorf("no --checkpoint given and the shipped checkpoint %s is missing (looked for %s): run from the repository's root or pass --checkpoint FILE", DefaultCheckpoint, abs)
	}
	return path, nil
}

// LoadPolicy loads the checkpoint at path once to check it, and returns a
// maker of policy instances that each load their own copy (model.Policy
// is not safe for concurrent use).
func LoadPolicy(path string) (NewPolicy, error) {
	mk := func() (Policy, error) {
		pol, ec, err := agent.Load(path)
		if err != nil {
			return nil, err
		}
		return NewLearned(pol, ec)
	}
	if _, err := mk(); err != nil {
		return nil, err
	}
	return mk, nil
}

// Learned is a trained policy as a Policy: it encodes the decision as the
// environment does (env.Encoder), runs the policy's forward pass, and
// returns the probabilities of its actions; masked (infeasible) nodes get
// probability 0.
type Learned struct {
	pol *model.Policy
	enc *env.Encoder
	b   model.Batch
	out model.Output
	obs [1]env.Obs
}

var _ Policy = (*Learned)(nil)

// NewLearned wraps pol, whose observations follow cfg.
func NewLearned(pol *model.Policy, cfg env.Config) (*Learned, error) {
	enc, err := env.NewEncoder(cfg)
	if err != nil {
		return nil, err
	}
	return &Learned{pol: pol, enc: enc}, nil
}

// Probs implements Policy.
func (l *Learned) Probs(c *sim.Cluster, p *sim.Pod, dst []float64) ([]float64, error) {
	n := c.Len()
	dst = dst[:n+1]
	l.obs[0] = l.enc.Encode(c, p)
	agent.Fill(&l.b, l.obs[:])
	if err := l.pol.Forward(&l.b, &l.out); err != nil {
		return dst, err
	}
	lp := l.out.LogP[:l.b.N+1]
	for i := range n {
		dst[i] = math.Exp(lp[i])
	}
	dst[n] = math.Exp(lp[l.b.N])
	return dst, nil
}
