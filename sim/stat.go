package sim

import (
	"encoding/json"
	"fmt"
	"math"
)

// Stat is a summary statistic that may have no sample to summarise (the
// off-peak variance of a run without off-peak samples, the hot-node share of
// a run without samples): NaN then means n/a, never 0. JSON writes n/a as
// null and reads null back as n/a.
type Stat float64

// NA returns the n/a statistic.
func NA() Stat { return Stat(math.NaN()) }

// Valid reports whether s is a number (not n/a).
func (s Stat) Valid() bool { return !math.IsNaN(float64(s)) }

// MarshalJSON writes s as a JSON number, or null when it is n/a (or
// infinite, which JSON cannot hold either).
func (s Stat) MarshalJSON() ([]byte, error) {
	f := float64(s)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}

// UnmarshalJSON reads a JSON number, or null as n/a.
func (s *Stat) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*s = NA()
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("statistic %s: %w", b, err)
	}
	*s = Stat(f)
	return nil
}
