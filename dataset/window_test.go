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
		{"three disjoint splits", Windows{Train: []Window{{"a", 0, h}}, Val: []Window{{"v", h, 2 * h}}, Test: []Window{{"b", 2 * h, 3 * h}}}, false, ""},
		{"validation overlaps test", Windows{Val: []Window{{"v", 0, 2 * h}}, Test: []Window{{"b", h, 3 * h}}}, true, "validation v"},
		{"train overlaps validation", Windows{Train: []Window{{"a", 0, 2 * h}}, Val: []Window{{"v", h, 3 * h}}}, true, "train a"},
		{"name shared by validation and test", Windows{Val: []Window{{"x", 0, h}}, Test: []Window{{"x", 2 * h, 3 * h}}}, false, "used twice"},
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
	h := sim.Hour
	cases := []struct {
		name              string
		span              sim.Time
		train, val, test  []Window
		nTrain, nVal, nTe int // counts, when the windows are not listed
	}{
		// the full trace: 8 days; a quarter (2) for test, an eighth (1) for
		// validation, the 5 first days for training
		{name: "full trace", span: 691200 * sim.Second,
			train: []Window{{"train-0", 0, d}, {"train-1", d, 2 * d}, {"train-2", 2 * d, 3 * d}, {"train-3", 3 * d, 4 * d}, {"train-4", 4 * d, 5 * d}},
			val:   []Window{{"val-0", 5 * d, 6 * d}},
			test:  []Window{{"test-0", 6 * d, 7 * d}, {"test-1", 7 * d, 8 * d}}},
		// the default synthetic trace: the last stamp just under 48 h rounds
		// up to two days, too few for three splits of days: 48 hours, 48/4 =
		// 12 test, 48/8 = 6 validation, 30 training hours
		{name: "two days", span: 172790 * sim.Second, nTrain: 30, nVal: 6, nTe: 12},
		// 36 h: 36/4 = 9 test, 36/8 = 4 validation, 23 training hours
		{name: "36 hours", span: 36 * h, nTrain: 23, nVal: 4, nTe: 9},
		// 3 h: one window each
		{name: "3 hours", span: 3 * h, train: []Window{{"train-0", 0, h}}, val: []Window{{"val-0", h, 2 * h}}, test: []Window{{"test-0", 2 * h, 3 * h}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws, err := DefaultWindows(tc.span)
			if err != nil {
				t.Fatal(err)
			}
			if tc.train == nil {
				if len(ws.Train) != tc.nTrain || len(ws.Val) != tc.nVal || len(ws.Test) != tc.nTe {
					t.Fatalf("%d train, %d validation, %d test windows; want %d, %d, %d", len(ws.Train), len(ws.Val), len(ws.Test), tc.nTrain, tc.nVal, tc.nTe)
				}
				// contiguous and in time order: train, then validation, then test
				last := ws.Test[len(ws.Test)-1]
				if ws.Val[0].From != ws.Train[len(ws.Train)-1].To || ws.Test[0].From != ws.Val[len(ws.Val)-1].To || last.To != sim.Time(tc.nTrain+tc.nVal+tc.nTe)*h {
					t.Errorf("splits not contiguous: %v / %v / %v", ws.Train, ws.Val, ws.Test)
				}
				return
			}
			if !reflect.DeepEqual(ws.Train, tc.train) || !reflect.DeepEqual(ws.Val, tc.val) || !reflect.DeepEqual(ws.Test, tc.test) {
				t.Errorf("windows %v / %v / %v; want %v / %v / %v", ws.Train, ws.Val, ws.Test, tc.train, tc.val, tc.test)
			}
		})
	}
	if _, err := Split(2*sim.Hour, sim.Hour, 1, 1); err == nil {
		t.Error("split of two windows into train, validation and test succeeded")
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
