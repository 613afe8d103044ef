package sched

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestNames(t *testing.T) {
	want := []string{"best-fit", "first-fit", "holes", "kube-default", "kube-default-nospread", "most-allocated", "random", "tetris"}
	got := Names()
	if !slices.Equal(got, want) {
		t.Errorf("Names() = %v; want %v", got, want)
	}
	if !slices.IsSorted(got) {
		t.Errorf("Names() = %v is not sorted", got)
	}
	got[0] = "changed"
	if Names()[0] != "best-fit" {
		t.Error("Names() returned the registry's own storage")
	}
}

func TestNew(t *testing.T) {
	for _, name := range Names() {
		s, err := New(name, 1)
		if err != nil {
			t.Errorf("New(%q) error: %v", name, err)
			continue
		}
		if s.Name() != name {
			t.Errorf("New(%q).Name() = %q", name, s.Name())
		}
		if s2, _ := New(name, 1); s2 == s {
			t.Errorf("New(%q) returned the same instance twice; want fresh instances", name)
		}
	}
	_, err := New("kube-defualt", 1)
	if !errors.Is(err, ErrUnknownScheduler) {
		t.Fatalf("New(unknown) error = %v; want it to wrap ErrUnknownScheduler", err)
	}
	for _, want := range append([]string{`"kube-defualt"`}, Names()...) {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("New(unknown) error %q does not mention %s", err, want)
		}
	}
}
