package sched

import (
	"slices"
	"testing"
)

// Cases ported from kubernetes/kubernetes
// pkg/scheduler/framework/plugins/helper/normalize_score_test.go.
func TestNormalizeScore(t *testing.T) {
	tests := []struct {
		name    string
		reverse bool
		scores  []int64
		want    []int64
	}{
		// max 4: 100*s/4
		{"scale", false, []int64{1, 2, 3, 4}, []int64{25, 50, 75, 100}},
		// 100 - 100*s/4
		{"scale reversed", true, []int64{1, 2, 3, 4}, []int64{75, 50, 25, 0}},
		// max 1000: 100*10/1000 = 1, 100*20/1000 = 2, 100*30/1000 = 3
		{"large max", false, []int64{1000, 10, 20, 30}, []int64{100, 1, 2, 3}},
		{"large max reversed", true, []int64{1000, 10, 20, 30}, []int64{0, 99, 98, 97}},
		{"all equal", false, []int64{1, 1, 1, 1}, []int64{100, 100, 100, 100}},
		// 100*1/1000 truncates to 0
		{"truncation", false, []int64{1000, 1, 1, 1}, []int64{100, 0, 0, 0}},
		{"zero reversed", true, []int64{0, 1, 1, 1}, []int64{100, 0, 0, 0}},
		{"all zero", false, []int64{0, 0}, []int64{0, 0}},
		{"all zero reversed", true, []int64{0, 0}, []int64{100, 100}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := slices.Clone(tt.scores)
			NormalizeScore(MaxNodeScore, tt.reverse, got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("NormalizeScore(100, %v, %v) = %v; want %v", tt.reverse, tt.scores, got, tt.want)
			}
		})
	}
}
