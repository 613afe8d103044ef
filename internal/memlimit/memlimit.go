package memlimit

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"path"
	"strconv"
	"strings"
)

// ErrTooBig is the identity of every error that says a size needs more
// memory than this process has; the error itself is a *TooBigError.
var ErrTooBig = errors.New("needs more memory than available")

// Footprint of a replay: the workload, one simulator run over it and the Go
// collector's headroom, at their peak.
//
// Measured on 2026-12-04 (go1.26, linux/amd64, 2 cores, GOGC=100; peak of the
// process's mapped heap sampled every 1-2 ms, minus the heap before building
// the workload) for sim.Synthetic plus one sim.Run:
//
//	nodes    pods       scheduler     workload live   peak
//	1,000    50,000     first-fit       14 MB          43 MB
//	1,000    250,000    first-fit       69 MB         210 MB
//	1,000    250,000    kube-default    69 MB         178 MB
//	4,000    250,000    first-fit       71 MB         190 MB
//	16,000   250,000    first-fit       79 MB         222 MB
//	100,000  100,000    first-fit       79 MB         222 MB
//	200,000  100,000    first-fit      124 MB         357 MB
//
// which fits peak = 1,400 B per node + 880 B per pod (the workload alone is
// 290-310 B per pod and 470 B per node). dataset.Load of the default trace
// (400 machines, load factor 2: 962,574 pods) peaked at 520 B per pod, and
// its intermediate state is released before the run starts. The constants
// below add a margin of about 1.5 (more for nodes, whose cost grows with the
// learned policy's observations in eval).
const (
	BytesPerNode uint64 = 2 << 10  // 1,400 B measured
	BytesPerPod  uint64 = 1536     // 880 B measured
	BaseBytes    uint64 = 64 << 20 // runtime, binary, scheduler and policy state
)

// Estimate returns the bytes that replaying a workload of nodes nodes and
// pods pods needs at its peak (one replay at a time, as `kubesim replay`
// runs its schedulers one after the other on one workload).
func Estimate(nodes, pods uint64) uint64 {
	return add(BaseBytes, add(mul(nodes, BytesPerNode), mul(pods, BytesPerPod)))
}

// EstimateConcurrent returns the bytes that replays at once of workloads of
// nodes nodes and pods pods each need: every replay holds its own workload
// and simulator (the experiment runner loads up to GOMAXPROCS cases at once).
// The runtime's base is counted once.
func EstimateConcurrent(replays, nodes, pods uint64) uint64 {
	one := Estimate(nodes, pods) - BaseBytes
	return add(BaseBytes, mul(max(replays, 1), one))
}

// Limit is the memory this process may use.
type Limit struct {
	Bytes uint64
	// Source says where the figure comes from: SourceCgroup,
	// SourceMeminfo or SourceFallback.
	Source string
}

// Sources of a Limit.
const (
	SourceCgroup   = "cgroup memory.max"
	SourceMeminfo  = "MemTotal"
	SourceFallback = "assumed"
)

// String says how much memory there is and where the figure comes from:
// "this machine has 23 GiB".
func (l Limit) String() string {
	switch l.Source {
	case SourceCgroup:
		return fmt.Sprintf("this process may use %s (%s)", Bytes(l.Bytes), SourceCgroup)
	case SourceMeminfo:
		return fmt.Sprintf("this machine has %s", Bytes(l.Bytes))
	}
	return fmt.Sprintf("this machine has an assumed %s (its memory could not be read)", Bytes(l.Bytes))
}

// Files that Detect reads.
const (
	CgroupRoot  = "/sys/fs/cgroup"
	SelfCgroup  = "/proc/self/cgroup"
	MeminfoFile = "/proc/meminfo"
)

// Fallback is the memory assumed when neither the cgroup limit nor
// /proc/meminfo can be read (another OS, a sandbox without /proc).
const Fallback uint64 = 4 << 30

// Detect returns the memory available to this process, reading the files
// of the running system.
func Detect() Limit { return DetectWith(os.ReadFile) }

// DetectWith returns the memory available to this process, reading files
// through readFile (os.ReadFile, or a fake in tests): the smallest cgroup v2
// memory.max on the path from this process's cgroup (from /proc/self/cgroup)
// up to the root of /sys/fs/cgroup, where one is set and not "max", and
// MemTotal of /proc/meminfo, whichever is smaller; Fallback when neither can
// be read.
func DetectWith(readFile func(name string) ([]byte, error)) Limit {
	var l Limit
	if b, err := readFile(MeminfoFile); err == nil {
		if n, err := ParseMemTotal(b); err == nil {
			l = Limit{Bytes: n, Source: SourceMeminfo}
		}
	}
	if n, ok := cgroupLimit(readFile); ok && (l.Bytes == 0 || n < l.Bytes) {
		l = Limit{Bytes: n, Source: SourceCgroup}
	}
	if l.Bytes == 0 {
		l = Limit{Bytes: Fallback, Source: SourceFallback}
	}
	return l
}

// cgroupLimit is the smallest memory.max from this process's cgroup up to
// the root; ok is false when none is set.
func cgroupLimit(readFile func(string) ([]byte, error)) (limit uint64, ok bool) {
	dir := "/"
	if b, err := readFile(SelfCgroup); err == nil {
		dir = ParseSelfCgroup(b)
	}
	for {
		if b, err := readFile(path.Join(CgroupRoot, dir, "memory.max")); err == nil {
			if n, set, err := ParseCgroupMax(b); err == nil && set && (!ok || n < limit) {
				limit, ok = n, true
			}
		}
		if dir == "/" {
			return limit, ok
		}
		dir = path.Dir(dir)
	}
}

// ParseSelfCgroup returns the cgroup v2 path of /proc/self/cgroup (the line
// "0::/path"), "/" when it has none.
func ParseSelfCgroup(b []byte) string {
	for line := range strings.Lines(string(b)) {
		if p, ok := strings.CutPrefix(strings.TrimSpace(line), "0::"); ok && strings.HasPrefix(p, "/") {
			return path.Clean(p)
		}
	}
	return "/"
}

// ParseCgroupMax parses a cgroup v2 memory.max file: a byte count, or "max"
// for no limit (set is false).
func ParseCgroupMax(b []byte) (limit uint64, set bool, err error) {
	s := string(bytes.TrimSpace(b))
	if s == "max" {
		return 0, false, nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("memory.max %q: want a byte count or max", s)
	}
	return n, true, nil
}

// ParseMemTotal returns the MemTotal line of a /proc/meminfo file, in bytes.
func ParseMemTotal(b []byte) (uint64, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 || len(f) > 2 || (len(f) == 2 && f[1] != "kB") {
			return 0, fmt.Errorf("meminfo: MemTotal %q: want a number of kB", strings.TrimSpace(rest))
		}
		n, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("meminfo: MemTotal %q: want a number of kB", strings.TrimSpace(rest))
		}
		return mul(n, 1024), nil
	}
	return 0, errors.New("meminfo: no MemTotal line")
}

// TooBigError says that what needs Need bytes where the limit is Have.
// errors.Is(err, ErrTooBig) holds for it.
type TooBigError struct {
	What string // the request, as the user spelled it ("--nodes 100000000")
	Need uint64
	Have Limit
}

func (e *TooBigError) Error() string {
	return fmt.Sprintf("%s needs about %s of memory, %s", e.What, Bytes(e.Need), e.Have)
}

// Unwrap returns ErrTooBig.
func (e *TooBigError) Unwrap() error { return ErrTooBig }

// Check returns a *TooBigError when need exceeds the limit, nil otherwise.
// what names the request in the terms of the caller (a flag, a YAML key).
func (l Limit) Check(what string, need uint64) error {
	if need <= l.Bytes {
		return nil
	}
	return &TooBigError{What: what, Need: need, Have: l}
}

// Check is Detect().Check(what, need).
func Check(what string, need uint64) error { return Detect().Check(what, need) }

// Bytes formats n in binary units: "512 B", "1.5 GiB", "190 GiB", "35 TiB".
func Bytes(n uint64) string {
	const units = "KMGTPE"
	if n < 1024 {
		return strconv.FormatUint(n, 10) + " B"
	}
	v, u := float64(n)/1024, 0
	for v >= 1024 && u < len(units)-1 {
		v, u = v/1024, u+1
	}
	s := strconv.FormatFloat(v, 'f', 1, 64)
	if v >= 10 {
		s = strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	}
	return strings.TrimSuffix(s, ".0") + " " + units[u:u+1] + "iB"
}

// mul and add saturate at math.MaxUint64.
func mul(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	if hi != 0 {
		return math.MaxUint64
	}
	return lo
}

func add(a, b uint64) uint64 {
	s, carry := bits.Add64(a, b, 0)
	if carry != 0 {
		return math.MaxUint64
	}
	return s
}
