package dataset

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/sim"
)

func TestWindowsValidate(t *testing.T) {
	h := sim.Hour
	cases := []struct {
		name    string
		ws      Windows
		overlap bool
		err     string // substring; "" means valid
	}{
		{"disjoint", Windows{Train: []Window{{"a", 0, h}}, Test: []Window{{"b", 2 * h, 3 * h}}}, false, ""},
		// [0, 1h) and [1h, 2h) share no instant
		{"touching", Windows{Train: []Window{{"a", 0, h}}, Test: []Window{{"b", h, 2 * h}}}, false, ""},
		{"overlapping", Windows{Train: []Window{{"a", 0, 2 * h}}, Test: []Window{{"b", h, 3 * h}}}, true, "train a"},
		{"test inside train", Windows{Train: []Window{{"a", 0, 10 * h}}, Test: []Window{{"b", h, 2 * h}}}, true, ""},
		// an open end runs to the end of the trace
		{"open-ended train", Windows{Train: []Window{{"a", 5 * h, 0}}, Test: []Window{{"b", h, 6 * h}}}, true, ""},
		{"two trains may overlap", Windows{Train: []Window{{"a", 0, 2 * h}, {"c", h, 3 * h}}, Test: []Window{{"b", 3 * h, 4 * h}}}, false, ""},
		{"duplicate name", Windows{Train: []Window{{"a", 0, h}}, Test: []Window{{"a", 2 * h, 3 * h}}}, false, "used twice"},
		{"no name", Windows{Train: []Window{{"", 0, h}}}, false, "no name"},
		{"inverted", Windows{Test: []Window{{"b", 2 * h, h}}}, false, "end must be after start"},
		{"negative start", Windows{Test: []Window{{"b", -h, h}}}, false, "negative start"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.ws.Validate()
			if got := errors.Is(err, ErrOverlap); got != tc.overlap {
				t.Fatalf("Validate() = %v; overlap %v, want %v", err, got, tc.overlap)
			}
			if !tc.overlap && (tc.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Validate() = %v; want error containing %q", err, tc.err)
			}
		})
	}
}

func TestSplit(t *testing.T) {
	d := Day
	cases := []struct {
		name  string
		span  sim.Time
		train []Window
		test  []Window
	}{
		// the full trace: 8 days, a quarter (2) for test
		{"full trace", 691200 * sim.Second,
			[]Window{{"train-0", 0, d}, {"train-1", d, 2 * d}, {"train-2", 2 * d, 3 * d}, {"train-3", 3 * d, 4 * d}, {"train-4", 4 * d, 5 * d}, {"train-5", 5 * d, 6 * d}},
			[]Window{{"test-0", 6 * d, 7 * d}, {"test-1", 7 * d, 8 * d}}},
		// the default synthetic trace: last stamp just under 48 h rounds up
		// to two days
		{"two days", 172790 * sim.Second, []Window{{"train-0", 0, d}}, []Window{{"test-0", d, 2 * d}}},
		// under two days: hours; 36 h gives 27 train and 9 test hours
		{"36 hours", 36 * sim.Hour, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws, err := DefaultWindows(tc.span)
			if err != nil {
				t.Fatal(err)
			}
			if tc.train == nil {
				if len(ws.Train) != 27 || len(ws.Test) != 9 || ws.Test[8] != (Window{"test-8", 35 * sim.Hour, 36 * sim.Hour}) {
					t.Errorf("%d train, %d test windows, last %v; want 27, 9, test-8 [35h, 36h)", len(ws.Train), len(ws.Test), ws.Test[len(ws.Test)-1])
				}
				return
			}
			if !reflect.DeepEqual(ws.Train, tc.train) || !reflect.DeepEqual(ws.Test, tc.test) {
				t.Errorf("windows %v / %v; want %v / %v", ws.Train, ws.Test, tc.train, tc.test)
			}
		})
	}
	if _, err := Split(sim.Hour, sim.Hour, 1); err == nil {
		t.Error("split of one window into train and test succeeded")
	}
}

func TestParseWindow(t *testing.T) {
	cases := []struct {
		spec string
		want Window
		err  bool
	}{
		{"all", Window{Name: "all"}, false},
		{"day1", Window{"day1", 0, Day}, false},
		{"day3", Window{"day3", 2 * Day, 3 * Day}, false},
		{"3600-7200", Window{"3600-7200", sim.Hour, 2 * sim.Hour}, false},
		{"30h-36h", Window{"30h-36h", 30 * sim.Hour, 36 * sim.Hour}, false},
		{"90m-", Window{"90m-", 90 * sim.Minute, 0}, false},
		{"day0", Window{}, true},
		{"2h-1h", Window{}, true},
		{"yesterday", Window{}, true},
		{"x-1h", Window{}, true},
	}
	for _, tc := range cases {
		t.Run(tc.spec, func(t *testing.T) {
			got, err := ParseWindow(tc.spec)
			if (err != nil) != tc.err || !tc.err && got != tc.want {
				t.Errorf("ParseWindow(%q) = %v, %v; want %v, error %v", tc.spec, got, err, tc.want, tc.err)
			}
		})
	}
}
