// Package memlimit refuses work that cannot fit in memory before it
// allocates anything: it reads the memory available to this process (the
// cgroup v2 limit, the machine's MemTotal, or a conservative default), and
// estimates the peak footprint of replaying a workload from its node and pod
// counts, so that an impossible size is a clear error (ErrTooBig) rather than
// the Go runtime's "fatal error: out of memory" minutes later.
//
// All sizes are bytes. Estimates saturate at math.MaxUint64 instead of
// overflowing, so any size a flag or a YAML file can spell is safe to pass.
package memlimit
