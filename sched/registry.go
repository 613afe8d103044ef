package sched

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kubesim/kubesim/sim"
)

// Scheduler names accepted by New.
const (
	NameBestFit     = "best-fit"
	NameFirstFit    = "first-fit"
	NameHoles       = "holes"
	NameKubeDefault = "kube-default"
	// NameKubeDefaultNoSpread is kube-default without PodTopologySpread,
	// the profile kube-default was before kubesim modelled that plugin.
	NameKubeDefaultNoSpread = "kube-default-nospread"
	NameMostAllocated       = "most-allocated"
	NameRandom              = "random"
	NameTetris              = "tetris"
)

// ErrUnknownScheduler is wrapped by New's error for a name it does not know.
var ErrUnknownScheduler = errors.New("unknown scheduler")

// registry lists every scheduler New can build, sorted by name, except
// that kube-default-nospread follows kube-default (experiments run "all"
// in this order).
var registry = [...]struct {
	name  string
	build func(seed uint64) sim.Scheduler
}{
	{NameBestFit, func(seed uint64) sim.Scheduler { return NewBestFit(seed) }},
	{NameFirstFit, func(uint64) sim.Scheduler { return NewFirstFit() }},
	{NameHoles, func(seed uint64) sim.Scheduler { return NewHoles(seed) }},
	{NameKubeDefault, func(seed uint64) sim.Scheduler {
		return newFramework(KubeDefaultProfile(KubeDefaultOptions{}), seed)
	}},
	{NameKubeDefaultNoSpread, func(seed uint64) sim.Scheduler {
		return newFramework(KubeDefaultProfile(KubeDefaultOptions{NoSpread: true}), seed)
	}},
	{NameMostAllocated, func(seed uint64) sim.Scheduler {
		return newFramework(KubeDefaultProfile(KubeDefaultOptions{Strategy: MostAllocatedStrategy, NoSpread: true}), seed)
	}},
	{NameRandom, func(seed uint64) sim.Scheduler { return NewRandom(seed) }},
	{NameTetris, func(seed uint64) sim.Scheduler { return NewTetris(seed) }},
}

// Names returns the names New accepts, in the registry's order (sorted,
// kube-default-nospread right after kube-default). The slice is the
// caller's.
func Names() []string {
	names := make([]string, len(registry))
	for i, e := range registry {
		names[i] = e.name
	}
	return names
}

// New returns a fresh instance of the named scheduler whose random choices
// draw from seed. An unknown name gives an error that wraps
// ErrUnknownScheduler and lists the valid names. A name may add a size cap
// to any of them, "NAME@capGIB" (sizecap.go): pods requesting more memory
// than GIB GiB are left pending; or an admission rule,
// "NAME@adm:KEY=VALUE,..." (admission.go): large pods are left pending
// while the rule's conditions hold; or ties to the lowest node index,
// "NAME@lowest" (ties.go). Those names are not in Names(). The admission
// suffix is parsed first, then the cap, so NAME may itself carry a cap and
// ties to the lowest index ("tetris@lowest@cap30").
func New(name string, seed uint64) (sim.Scheduler, error) {
	if s, ok, err := newAdmission(name, seed); ok {
		return s, err
	}
	if s, ok, err := newSizeCap(name, seed); ok {
		return s, err
	}
	if s, ok, err := newLowest(name, seed); ok {
		return s, err
	}
	for _, e := range registry {
		if e.name == name {
			return e.build(seed), nil
		}
	}
	return nil, fmt.Errorf("%w %q (valid: %s)", ErrUnknownScheduler, name, strings.Join(Names(), ", "))
}

// Variant reports whether name is a registered heuristic with a size cap
// ("NAME@capGIB"), an admission rule ("NAME@adm:...") or ties to the lowest
// index ("NAME@lowest"), the names New accepts beyond Names(). It does not
// check that New accepts name.
func Variant(name string) bool {
	return strings.Contains(name, capSuffix) || strings.Contains(name, admSuffix) || strings.Contains(name, lowestSuffix)
}
