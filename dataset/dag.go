package dataset

import "strings"

// maxTaskName is the length at which the trace cuts task names; a name of
// this length may have lost the end of its last dependency.
const maxTaskName = 50

// parseTaskName reads the DAG information of a batch task name: "M5_3_4" is
// task 5, which depends on tasks 3 and 4 of the same job. The leading letters
// carry no dependency information. Names starting with "task_" (independent
// tasks) and names that do not follow the pattern give ok == false.
//
// A name of exactly 50 characters was cut by the trace, so its last
// dependency is unreliable ("M9_12" may have been "M9_123") and is dropped.
func parseTaskName(name string) (id int, deps []int, ok bool) {
	if strings.HasPrefix(name, "task_") {
		return 0, nil, false
	}
	i := 0
	for i < len(name) && (name[i] >= 'A' && name[i] <= 'Z' || name[i] >= 'a' && name[i] <= 'z') {
		i++
	}
	if i == 0 || i == len(name) {
		return 0, nil, false
	}
	parts := strings.Split(name[i:], "_")
	if len(name) >= maxTaskName && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	nums := make([]int, 0, len(parts))
	for _, p := range parts {
		n, good := atoiPos(p)
		if !good {
			return 0, nil, false
		}
		nums = append(nums, n)
	}
	return nums[0], nums[1:], true
}

// atoiPos parses a non-negative decimal integer of at most 9 digits.
func atoiPos(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i] - '0'
		if c > 9 {
			return 0, false
		}
		n = n*10 + int(c)
	}
	return n, true
}
