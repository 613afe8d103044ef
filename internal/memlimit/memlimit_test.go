package memlimit

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"testing"
)

// fakeFS returns a readFile over the given files; others do not exist.
func fakeFS(files map[string]string) func(string) ([]byte, error) {
	return func(name string) ([]byte, error) {
		if s, ok := files[name]; ok {
			return []byte(s), nil
		}
		return nil, fmt.Errorf("open %s: %w", name, fs.ErrNotExist)
	}
}

const meminfo = `MemTotal:       24576000 kB
MemFree:        23000000 kB
MemAvailable:   23500000 kB
`

func TestDetectWith(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		want  Limit
	}{
		// 24,576,000 kB * 1,024 = 25,165,824,000 B.
		{"meminfo only", map[string]string{MeminfoFile: meminfo}, Limit{25165824000, SourceMeminfo}},
		{"cgroup max is no limit", map[string]string{
			MeminfoFile: meminfo, "/sys/fs/cgroup/memory.max": "max\n",
		}, Limit{25165824000, SourceMeminfo}},
		{"root cgroup limit", map[string]string{
			MeminfoFile: meminfo, "/sys/fs/cgroup/memory.max": "8589934592\n",
		}, Limit{8 << 30, SourceCgroup}},
		// a limit above the machine's memory does not raise it
		{"cgroup limit above MemTotal", map[string]string{
			MeminfoFile: meminfo, "/sys/fs/cgroup/memory.max": "109951162777600\n",
		}, Limit{25165824000, SourceMeminfo}},
		// the smallest limit on the path from the process's cgroup to the root
		{"nested cgroup", map[string]string{
			MeminfoFile: meminfo,
			SelfCgroup:  "0::/user.slice/job.scope\n",
			"/sys/fs/cgroup/user.slice/job.scope/memory.max": "max\n",
			"/sys/fs/cgroup/user.slice/memory.max":           "2147483648\n",
			"/sys/fs/cgroup/memory.max":                      "4294967296\n",
		}, Limit{2 << 30, SourceCgroup}},
		{"cgroup without meminfo", map[string]string{"/sys/fs/cgroup/memory.max": "1073741824"}, Limit{1 << 30, SourceCgroup}},
		{"nothing readable", nil, Limit{Fallback, SourceFallback}},
		{"garbage everywhere", map[string]string{
			MeminfoFile: "MemTotal: lots\n", "/sys/fs/cgroup/memory.max": "plenty\n",
		}, Limit{Fallback, SourceFallback}},
	}
	for _, tc := range cases {
		if got := DetectWith(fakeFS(tc.files)); got != tc.want {
			t.Errorf("%s: DetectWith = %+v; want %+v", tc.name, got, tc.want)
		}
	}
}

func TestParseCgroupMax(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		limit   uint64
		set     bool
		wantErr bool
	}{
		{"max", "max\n", 0, false, false},
		{"number", "536870912\n", 512 << 20, true, false},
		{"no newline", "1024", 1024, true, false},
		{"negative", "-1\n", 0, false, true},
		{"empty", "", 0, false, true},
	}
	for _, tc := range cases {
		limit, set, err := ParseCgroupMax([]byte(tc.in))
		if limit != tc.limit || set != tc.set || (err != nil) != tc.wantErr {
			t.Errorf("%s: ParseCgroupMax(%q) = %d, %v, %v; want %d, %v, error %v", tc.name, tc.in, limit, set, err, tc.limit, tc.set, tc.wantErr)
		}
	}
}

func TestParseMemTotal(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		want    uint64
		wantErr bool
	}{
		{"typical", meminfo, 24576000 * 1024, false},
		{"not first", "MemFree: 1 kB\nMemTotal: 2 kB\n", 2048, false},
		{"missing", "MemFree: 1 kB\n", 0, true},
		{"not a number", "MemTotal: x kB\n", 0, true},
		{"other unit", "MemTotal: 3 MB\n", 0, true},
	}
	for _, tc := range cases {
		got, err := ParseMemTotal([]byte(tc.in))
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("%s: ParseMemTotal = %d, %v; want %d, error %v", tc.name, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestParseSelfCgroup(t *testing.T) {
	cases := []struct{ in, want string }{
		{"0::/\n", "/"},
		{"0::/a/b\n", "/a/b"},
		{"12:memory:/v1\n0::/v2/x/\n", "/v2/x"},
		{"12:memory:/v1\n", "/"},
		{"", "/"},
	}
	for _, tc := range cases {
		if got := ParseSelfCgroup([]byte(tc.in)); got != tc.want {
			t.Errorf("ParseSelfCgroup(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}

func TestCheck(t *testing.T) {
	l := Limit{Bytes: 24 << 30, Source: SourceMeminfo}
	if err := l.Check("--nodes 40", Estimate(40, 10000)); err != nil {
		t.Errorf("small request refused: %v", err)
	}
	// 1e8 nodes * 2 KiB = 190.7 GiB (plus 64 MiB of base).
	err := l.Check("--nodes 100000000", Estimate(100_000_000, 0))
	if !errors.Is(err, ErrTooBig) {
		t.Fatalf("Check = %v; want ErrTooBig", err)
	}
	if want := "--nodes 100000000 needs about 191 GiB of memory, this machine has 24 GiB"; err.Error() != want {
		t.Errorf("message %q; want %q", err, want)
	}
	var tb *TooBigError
	if !errors.As(err, &tb) || tb.Have != l {
		t.Errorf("errors.As: %+v", tb)
	}
	cg := Limit{Bytes: 1 << 30, Source: SourceCgroup}
	if got, want := cg.Check("x", 2<<30).Error(), "x needs about 2 GiB of memory, this process may use 1 GiB (cgroup memory.max)"; got != want {
		t.Errorf("message %q; want %q", got, want)
	}
}

func TestEstimateSaturates(t *testing.T) {
	cases := []struct {
		name        string
		nodes, pods uint64
		want        uint64
	}{
		{"empty", 0, 0, BaseBytes},
		// 1,000 nodes * 2,048 B + 250,000 pods * 1,536 B + 64 MiB = 2,048,000 + 384,000,000 + 67,108,864 = 453,156,864 B.
		{"default shape", 1000, 250_000, 453_156_864},
		{"nodes overflow", math.MaxUint64 / 2, 0, math.MaxUint64},
		{"pods overflow", 1, math.MaxUint64, math.MaxUint64},
		{"sum overflow", math.MaxUint64 / BytesPerNode, math.MaxUint64 / BytesPerPod, math.MaxUint64},
	}
	for _, tc := range cases {
		if got := Estimate(tc.nodes, tc.pods); got != tc.want {
			t.Errorf("%s: Estimate(%d, %d) = %d; want %d", tc.name, tc.nodes, tc.pods, got, tc.want)
		}
	}
	// Two replays of 1,000 nodes and 250,000 pods: the base once.
	if got, want := EstimateConcurrent(2, 1000, 250_000), uint64(2*(453_156_864-BaseBytes)+BaseBytes); got != want {
		t.Errorf("EstimateConcurrent = %d; want %d", got, want)
	}
	if got := EstimateConcurrent(math.MaxUint64, 1, 1); got != math.MaxUint64 {
		t.Errorf("EstimateConcurrent did not saturate: %d", got)
	}
}

func TestBytes(t *testing.T) {
	cases := []struct {
		in   uint64
		want string
	}{
		{0, "0 B"},
		{1023, "1023 B"},
		{1024, "1 KiB"},
		{1536 << 20, "1.5 GiB"},
		{24 << 30, "24 GiB"},
		{35 << 40, "35 TiB"},
		{math.MaxUint64, "16 EiB"},
	}
	for _, tc := range cases {
		if got := Bytes(tc.in); got != tc.want {
			t.Errorf("Bytes(%d) = %q; want %q", tc.in, got, tc.want)
		}
	}
}

func ExampleLimit_Check() {
	l := Limit{Bytes: 16 << 30, Source: SourceMeminfo}
	fmt.Println(l.Check("--nodes 1000", Estimate(1000, 250*1000)))
	fmt.Println(l.Check("--nodes 100000", Estimate(100000, 250*100000)))
	// Output:
	// <nil>
	// --nodes 100000 needs about 36 GiB of memory, this machine has 16 GiB
}
