package env

import (
	"errors"
	"math/rand/v2"

	"github.com/kubesim/kubesim/sim"
)

// Traces is a Source over several traces (the multi-trace suite): each
// episode draws one of them, uniformly, from the episode's stream, then one
// of its windows as Trace does. A window listed twice in a Trace is drawn
// twice as often, which is how the suite oversamples each training trace's
// heaviest window. It is safe for concurrent use.
type Traces []Trace

var errNoTraces = errors.New("multi-trace source has no traces")

// Episode replays a window of one of the traces on nodes machines.
func (ts Traces) Episode(r *rand.Rand, nodes int) (*sim.Workload, error) {
	if len(ts) == 0 {
		return nil, errNoTraces
	}
	return ts[r.IntN(len(ts))].Episode(r, nodes)
}
