//go:build !unix

package atomicdir

import "os"

// tryLock does not lock where flock is missing: the pid is still written.
func tryLock(*os.File) (bool, error) { return false, nil }
