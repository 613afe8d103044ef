package atomicdir

import "golang.org/x/sys/unix"

// exchange swaps the folders a and b in one step (renameat2
// RENAME_EXCHANGE); an error (an old kernel, a file system without it)
// makes the caller fall back to two renames.
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}
