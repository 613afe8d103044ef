package ppo

import (
	"slices"
	"testing"

	"github.com/kubesim/kubesim/env"
)

// testObs is an observation of n nodes whose values derive from v, with a
// prior when prior is set.
func testObs(n int, v float64, prior bool) env.Obs {
	o := env.Obs{N: n, Pod: make([]float64, env.PodFeatures), Nodes: make([]float64, n*env.NodeFeatures),
		Domain: make([]int32, n), Mask: make([]bool, n+1)}
	for i := range o.Nodes {
		o.Nodes[i] = v + float64(i)
	}
	for i := range n + 1 {
		o.Mask[i] = i%2 == 0 || i == n
	}
	if prior {
		o.Prior = make([]float64, n+1)
		for i := range o.Prior {
			o.Prior[i] = -v - float64(i)/10
		}
	}
	return o
}

// The rollout store gives back every observation as stored, prior
// included, whether or not its neighbours have one, also after a reset.
func TestStoreKeepsPrior(t *testing.T) {
	var s store
	for round := range 2 {
		s.reset()
		in := []env.Obs{testObs(3, 1, true), testObs(5, 2, false), testObs(2, 3, true), testObs(4, 4, round == 0)}
		for i := range in {
			s.add(&in[i])
		}
		for i, want := range in {
			got := s.obs(i)
			if got.N != want.N || !slices.Equal(got.Nodes, want.Nodes) || !slices.Equal(got.Mask, want.Mask) ||
				!slices.Equal(got.Prior, want.Prior) || (got.Prior == nil) != (want.Prior == nil) {
				t.Errorf("round %d transition %d: got %+v, want %+v", round, i, got, want)
			}
		}
	}
}
