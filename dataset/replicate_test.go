package dataset

import (
	"cmp"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/kubesim/kubesim/sim"
)

func TestSortRefs(t *testing.T) {
	// keys cross digit boundaries (one pass of 3 bits up to 3 of 14 for
	// 1<<40); equal keys keep their order
	in := []ref{{70000, 0, 0}, {3, 1, 0}, {1 << 40, 2, 0}, {3, 3, 0}, {65536, 4, 0}, {0, 5, 0}, {70000, 6, 0}, {65535, 7, 0}}
	r := rand.New(rand.NewPCG(7, 8))
	for _, top := range []int64{1, 7, 1 << 16, 1 << 17, 172800000, 1 << 40} {
		for i := range 500 {
			in = append(in, ref{arrival: sim.Time(r.Int64N(top)), pre: int32(i)})
		}
		// with 500 draws below 1 and 7, many equal keys
		got := sortRefs(slices.Clone(in))
		want := slices.Clone(in)
		slices.SortStableFunc(want, func(a, b ref) int { return cmp.Compare(a.arrival, b.arrival) })
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("sortRefs with keys below %d: wrong order", top)
		}
		in = in[:8]
	}
}

// TestPermute checks the in-place permutation that replicate uses against
// building the permuted slice by copying, on random permutations (with
// fixed points, single cycles and the empty case).
func TestPermute(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for n := range 40 {
		for range 5 {
			v := make([]int, n)
			for i := range v {
				v[i] = 100 + i
			}
			src := make([]int32, n)
			for i, p := range r.Perm(n) {
				src[i] = int32(p)
			}
			want := make([]int, n)
			for i, k := range src {
				want[i] = v[k]
			}
			permute(v, src)
			if !slices.Equal(v, want) {
				t.Fatalf("n=%d: permute = %v; want %v", n, v, want)
			}
		}
	}
}
