package model

import (
	"fmt"

	"github.com/kubesim/kubesim/model/gnn"
	"github.com/kubesim/kubesim/model/pointer"
)

// Defaults applied by New to zero fields.
const (
	DefaultHidden    = 64
	DefaultRounds    = 2
	DefaultLogitClip = 10.0
	DefaultMaxGraphs = 8
)

// Config is the policy's architecture and run-time settings. Zero Hidden,
// Rounds, LogitClip and MaxGraphs take the defaults above.
type Config struct {
	NodeFeatures int     `json:"node_features"` // D, features per node
	PodFeatures  int     `json:"pod_features"`  // P, features of the pod to place
	Hidden       int     `json:"hidden"`        // H, embedding width
	Rounds       int     `json:"rounds"`        // L, message-passing rounds
	LogitClip    float64 `json:"logit_clip"`    // C in C*tanh(q.k/sqrt(H))
	// PendingClip is Pending's C (0: LogitClip): with Prior, how far the
	// correction can move Pending's logit. Part of the architecture;
	// absent (0) in checkpoints from before it existed, which clip Pending
	// at LogitClip as they did.
	PendingClip float64 `json:"pending_clip,omitempty"`
	// Float64 selects float64 weights and graphs: slower, for gradient
	// checks. The default is float32.
	Float64 bool   `json:"float64"`
	Seed    uint64 `json:"seed"` // seed of the weight initialisation
	// MaxGraphs bounds the training graphs kept (one per (B, N) shape,
	// least recently used evicted first). Not part of the architecture.
	MaxGraphs int `json:"max_graphs"`
	// Prior makes the policy add Batch.Prior, an additive log-prior per
	// action, to its logits: logit_i = prior_i + C*tanh(score_i), so that
	// the network learns a bounded correction to a heuristic. Part of the
	// architecture; absent (false) in checkpoints from before it existed.
	Prior bool `json:"prior,omitempty"`
	// Gate is the number K >= 2 of priors a learned gate mixes (0: one
	// prior, added as is): Batch.Prior then holds K priors per sample and
	// the logits add sum_k w_k prior_k, with w a softmax of the context
	// (pointer.Config.Gate). Needs Prior. Part of the architecture; absent
	// (0) in checkpoints from before it existed.
	Gate int `json:"gate,omitempty"`
	// ZeroInit starts the decoder's query layer at zero, so that every
	// node and Pending score is 0 and a fresh policy with Prior is exactly
	// softmax(prior) over the allowed actions (without Prior: uniform).
	// Gradients still reach the query layer. An initialisation option, not
	// part of the architecture.
	ZeroInit bool `json:"zero_init,omitempty"`
}

// maxSize bounds the sizes in a Config, so that a corrupt checkpoint header
// cannot ask for an absurd allocation.
const maxSize = 4096

func (c Config) withDefaults() Config {
	if c.Hidden == 0 {
		c.Hidden = DefaultHidden
	}
	if c.Rounds == 0 {
		c.Rounds = DefaultRounds
	}
	if c.LogitClip == 0 {
		c.LogitClip = DefaultLogitClip
	}
	if c.MaxGraphs == 0 {
		c.MaxGraphs = DefaultMaxGraphs
	}
	return c
}

// Validate reports the first invalid field, after applying the defaults.
func (c Config) Validate() error {
	c = c.withDefaults()
	if err := c.encoder().Validate(); err != nil {
		return fmt.Errorf("model config: %w", err)
	}
	if err := c.decoder().Validate(); err != nil {
		return fmt.Errorf("model config: %w", err)
	}
	if c.Gate != 0 && !c.Prior {
		return fmt.Errorf("model config: Gate %d needs Prior", c.Gate)
	}
	if c.MaxGraphs < 1 {
		return fmt.Errorf("model config: MaxGraphs %d, want >= 1", c.MaxGraphs)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"NodeFeatures", c.NodeFeatures}, {"PodFeatures", c.PodFeatures}, {"Hidden", c.Hidden}, {"Rounds", c.Rounds}} {
		if f.v > maxSize {
			return fmt.Errorf("model config: %s %d, want <= %d", f.name, f.v, maxSize)
		}
	}
	return nil
}

func (c Config) encoder() gnn.Config {
	return gnn.Config{NodeFeatures: c.NodeFeatures, PodFeatures: c.PodFeatures, Hidden: c.Hidden, Rounds: c.Rounds, Float64: c.Float64}
}

func (c Config) decoder() pointer.Config {
	return pointer.Config{Hidden: c.Hidden, LogitClip: c.LogitClip, PendingClip: c.PendingClip, Float64: c.Float64, Gate: c.Gate}
}

// sameArchitecture reports the first architecture field where c and o
// differ (both with defaults applied), or nil.
func (c Config) sameArchitecture(o Config) error {
	c, o = c.withDefaults(), o.withDefaults()
	type field struct {
		name string
		a, b any
	}
	for _, f := range []field{
		{"node_features", c.NodeFeatures, o.NodeFeatures},
		{"pod_features", c.PodFeatures, o.PodFeatures},
		{"hidden", c.Hidden, o.Hidden},
		{"rounds", c.Rounds, o.Rounds},
		{"logit_clip", c.LogitClip, o.LogitClip},
		// Pending's C with its default resolved: 0 and an explicit
		// LogitClip are the same architecture
		{"pending_clip", c.decoder().PendingC(), o.decoder().PendingC()},
		{"float64", c.Float64, o.Float64},
		{"prior", c.Prior, o.Prior},
		{"gate", c.Gate, o.Gate},
	} {
		if f.a != f.b {
			return fmt.Errorf("architecture mismatch: %s is %v in the checkpoint, %v in the policy", f.name, f.a, f.b)
		}
	}
	return nil
}

// priors is the number of priors per sample in a Batch.Prior: Gate, or 1.
func (c Config) priors() int { return max(1, c.Gate) }
