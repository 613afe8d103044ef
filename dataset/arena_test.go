package dataset

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestStringArena checks that arena strings are the joined parts and stay
// intact while later strings fill and overflow blocks.
func TestStringArena(t *testing.T) {
	var a stringArena
	var got, want []string
	for i := range 20000 {
		parts := []string{fmt.Sprintf("job_%d", i), strings.Repeat("t", i%7), strconv.Itoa(i)}
		if i%5000 == 0 {
			parts = append(parts, strings.Repeat("x", arenaBlock+i)) // longer than a block
		}
		got = append(got, a.join("/", parts...))
		want = append(want, strings.Join(parts, "/"))
	}
	if !slices.Equal(got, want) {
		t.Fatal("arena strings differ from strings.Join")
	}
	if a.join("/") != "" || a.join("/", "") != "" {
		t.Error("empty joins are not empty")
	}
}
