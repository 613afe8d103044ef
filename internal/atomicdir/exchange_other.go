//go:build !linux

package atomicdir

import "errors"

func exchange(a, b string) error { return errors.New("no atomic exchange") }
