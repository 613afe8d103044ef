package sim

import (
	"fmt"
	"maps"
	"slices"
)

// Resize returns w on a cluster of n initial nodes, for comparisons at a
// fixed workload and a varying cluster size (cluster compaction). The pods,
// their order and the machine events are w's. The nodes are w's first n when
// n <= len(w.Nodes); beyond that w's nodes are repeated in order, each copy
// named NAME~k for its k-th repetition (k >= 2), so every node keeps a shape
// and labels that occur in w. A warm-start placement on a node that no
// longer exists is dropped: that pod arrives at its Arrival and goes through
// the scheduler like any other. A removal event for such a node is ignored
// by the engine. w is not modified and shares nothing mutable with the result
// (NodeSpec labels and taints are copied).
func Resize(w *Workload, n int) (*Workload, error) {
	if n < 1 {
		return nil, fmt.Errorf("resize workload %q: %d nodes, want >= 1", w.Name, n)
	}
	if len(w.Nodes) == 0 {
		return nil, fmt.Errorf("resize workload %q: it has no nodes to copy", w.Name)
	}
	out := *w
	out.Name = fmt.Sprintf("%s@%d", w.Name, n)
	out.Nodes = make([]NodeSpec, n)
	for i := range out.Nodes {
		src := &w.Nodes[i%len(w.Nodes)]
		nd := *src
		nd.Taints = slices.Clone(src.Taints)
		nd.Labels = maps.Clone(src.Labels)
		if k := i/len(w.Nodes) + 1; k > 1 {
			nd.Name = fmt.Sprintf("%s~%d", src.Name, k)
		}
		out.Nodes[i] = nd
	}
	out.Initial = nil
	for _, pl := range w.Initial {
		if int(pl.Node) < n {
			out.Initial = append(out.Initial, pl)
		}
	}
	return &out, nil
}
