package dataset

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/sim"
)

func TestParseTaskName(t *testing.T) {
	// a name cut at 50 characters: M1 then _2 ... up to the cut
	long := "M1"
	for i := 2; len(long) < 50; i++ {
		long += fmt.Sprintf("_%d", i)
	}
	// "M1_2_3" is 6 characters, each of _4.._9 adds 2 and each of _10.._19
	// adds 3: 6 + 12 + 30 = 48, so 50 characters end with "_2" of "_20"
	long = long[:50]
	cases := []struct {
		name string
		task string
		id   int
		deps []int
		ok   bool
	}{
		{"example of the trace docs", "M5_3_4", 5, []int{3, 4}, true},
		{"root task", "M1", 1, []int{}, true},
		{"other letter", "J13_2_5_7_12", 13, []int{2, 5, 7, 12}, true},
		{"independent task", "task_Nzg3ODAwNDgzMTAwNTc2NTQ2Mw==", 0, nil, false},
		{"no number", "MergeTask", 0, nil, false},
		{"not a number", "M5_x", 0, nil, false},
		{"no letters", "5_3", 0, nil, false},
		{"empty", "", 0, nil, false},
		// the last dependency of a 50-character name is dropped
		{"cut at 50 characters", long, 1, []int{2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id, deps, ok := parseTaskName(tc.task)
			if ok != tc.ok || id != tc.id || fmt.Sprint(deps) != fmt.Sprint(tc.deps) {
				t.Errorf("parseTaskName(%q) = %d, %v, %v; want %d, %v, %v", tc.task, id, deps, ok, tc.id, tc.deps, tc.ok)
			}
		})
	}
	if !strings.HasSuffix(long, "_19_2") {
		t.Fatalf("test name %q does not end as planned", long)
	}
}

func TestLinkDAGCycle(t *testing.T) {
	// tasks 1 and 2 depend on each other: the job keeps no dependencies
	pods, idx, tasks := podsFor("M1_2", "M2_1", "M3")
	if linkDAG(pods, idx, tasks, &taskNames{}) {
		t.Error("linkDAG accepted a cycle")
	}
	for _, p := range pods {
		if p.After != nil {
			t.Errorf("%s keeps dependencies in a cyclic job", p.Name)
		}
	}
}

func podsFor(tasks ...string) ([]sim.PodSpec, []int32, []string) {
	pods := make([]sim.PodSpec, len(tasks))
	idx := make([]int32, len(tasks))
	for i, t := range tasks {
		pods[i].Name = t
		idx[i] = int32(i)
	}
	return pods, idx, tasks
}
