package dataset

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/sim"
)

// writeTrace writes CSV tables (table name -> lines) into a new directory.
func writeTrace(t *testing.T, tables map[string][]string) string {
	t.Helper()
	dir := t.TempDir()
	for table, lines := range tables {
		if err := os.WriteFile(filepath.Join(dir, table+".csv"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// convertTrace converts a CSV directory into a new temporary directory.
func convertTrace(t testing.TB, csvDir string) string {
	t.Helper()
	out := t.TempDir()
	if _, err := Convert(context.Background(), csvDir, out, ConvertOptions{Logger: quiet}); err != nil {
		t.Fatal(err)
	}
	return out
}

// loadBoth loads through Arrow and through CSV, checks that the two
// workloads are identical, and returns the Arrow one.
func loadBoth(t *testing.T, csvDir string, opts LoadOptions) *sim.Workload {
	t.Helper()
	wa, err := Load(convertTrace(t, csvDir), opts)
	if err != nil {
		t.Fatal(err)
	}
	wc, err := LoadCSV(csvDir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(wa, wc) {
		t.Fatalf("Load and LoadCSV differ: %d and %d pods", len(wa.Pods), len(wc.Pods))
	}
	return wa
}

func podsByName(w *sim.Workload) map[string]int {
	m := make(map[string]int, len(w.Pods))
	for i, p := range w.Pods {
		m[p.Name] = i
	}
	return m
}

func TestLoadFixtures(t *testing.T) {
	w := loadBoth(t, fixtures, LoadOptions{})
	// 10 machines, all USING throughout: no events. Pods: the sum of
	// batch_task's instance_num (17,104) plus container c_1.
	if len(w.Nodes) != 10 || len(w.Events) != 0 || len(w.Pods) != 17105 {
		t.Fatalf("%d nodes, %d events, %d pods; want 10, 0, 17105", len(w.Nodes), len(w.Events), len(w.Pods))
	}
	// m_1,0,219,17,96,100,USING: 96 cores, memory 100 = 384 GiB
	n := w.Nodes[0]
	want := sim.NodeSpec{Name: "m_1", Allocatable: sim.Resources{CPU: 96000, Mem: 393216},
		Labels: map[string]string{sim.LabelZone: "219", sim.LabelRack: "17"}}
	if !reflect.DeepEqual(n, want) {
		t.Errorf("node 0 = %+v; want %+v", n, want)
	}
	by := podsByName(w)
	cases := []struct {
		name string
		pod  string
		want sim.PodSpec
	}{
		// c_1,m_2556,0,app_5052,started,400,400,1.56: every machine is kept,
		// so the container counts although m_2556 is not in machine_meta;
		// 400 = 4 cores; 1.56% of 393216 MiB = 6134.17 MiB
		{"online container", "c_1", sim.PodSpec{Name: "c_1", Group: "app_5052", Priority: sim.High,
			Requests: sim.Resources{CPU: 4000, Mem: 6134}, Limits: sim.Resources{CPU: 4000}}},
		// M1,1.0,j_1,1,Terminated,419912,419912,100.0,0.2: zero length gives
		// the 1 s floor; 0.2% of 393216 = 786.4 MiB
		{"task of zero length", "j_1/M1/1", sim.PodSpec{Name: "j_1/M1/1", Group: "j_1", Priority: sim.Low,
			Arrival: 419912 * sim.Second, Duration: sim.Second, Requests: sim.Resources{CPU: 1000, Mem: 786}}},
		// M3,12846.0,j_3,1,Terminated,157213,157295,100.0,0.3: 82 s; 0.3% = 1179.6 MiB
		{"last of 12846 instances", "j_3/M3/12846", sim.PodSpec{Name: "j_3/M3/12846", Group: "j_3", Priority: sim.Low,
			Arrival: 157213 * sim.Second, Duration: 82 * sim.Second, Requests: sim.Resources{CPU: 1000, Mem: 1180}}},
		// R2_1,1.0,j_2,1,Terminated,87076,87086,50.0,0.2: half a core, 10 s
		{"half a core", "j_2/R2_1/1", sim.PodSpec{Name: "j_2/R2_1/1", Group: "j_2", Priority: sim.Low,
			Arrival: 87076 * sim.Second, Duration: 10 * sim.Second, Requests: sim.Resources{CPU: 500, Mem: 786}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			i, ok := by[tc.pod]
			if !ok {
				t.Fatalf("no pod %s", tc.pod)
			}
			if got := w.Pods[i]; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("pod = %+v; want %+v", got, tc.want)
			}
		})
	}
	// j_3's tasks: 371+1111+1+1111+12846+1+371+1+1 instances
	groups := 0
	for _, p := range w.Pods {
		if p.Group == "j_3" {
			groups++
		}
	}
	if groups != 15814 {
		t.Errorf("job j_3 has %d pods; want 15814", groups)
	}
	if !slices.IsSortedFunc(w.Pods, func(a, b sim.PodSpec) int { return int(a.Arrival - b.Arrival) }) {
		t.Error("pods are not sorted by arrival")
	}
}

func TestLoadDAG(t *testing.T) {
	w := loadBoth(t, fixtures, LoadOptions{DAG: true})
	by := podsByName(w)
	names := func(idx []int32) []string {
		var out []string
		for _, i := range idx {
			out = append(out, w.Pods[i].Name)
		}
		sort.Strings(out)
		return out
	}
	cases := []struct {
		name string
		pod  string
		want []string
	}{
		// job j_15: M1; R2_1 after 1; R3_2 after 2; M4_3 after 3; R5_4 after 4
		{"chain start", "j_15/M1/1", nil},
		{"one dependency", "j_15/R2_1/1", []string{"j_15/M1/1"}},
		{"chain middle", "j_15/M4_3/1", []string{"j_15/R3_2/1"}},
		{"chain end", "j_15/R5_4/1", []string{"j_15/M4_3/1"}},
		// j_8's J13_2_5_7_12 waits for tasks 2 (1 instance), 5 (1), 7 (5)
		// and 12 (1): 8 pods
		{"four dependencies", "j_8/J13_2_5_7_12/2", []string{"j_8/J12_10_11/1", "j_8/R2_1/1", "j_8/R5_4/1",
			"j_8/R7_6/1", "j_8/R7_6/2", "j_8/R7_6/3", "j_8/R7_6/4", "j_8/R7_6/5"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := names(w.Pods[by[tc.pod]].After); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s after %v; want %v", tc.pod, got, tc.want)
			}
		})
	}
	// j_3's J4_2_3 waits for R2_1 (1 instance) and M3 (12846): every one of
	// its 1111 instances shares one slice of 12847 indices
	a, b := w.Pods[by["j_3/J4_2_3/1"]].After, w.Pods[by["j_3/J4_2_3/1111"]].After
	if len(a) != 12847 || &a[0] != &b[0] {
		t.Errorf("J4_2_3 waits for %d pods (shared: %v); want 12847, shared", len(a), len(a) > 0 && &a[0] == &b[0])
	}
	for i, p := range w.Pods {
		for _, d := range p.After {
			if w.Pods[d].Group != p.Group {
				t.Fatalf("pod %d (%s) depends on %s of another job", i, p.Name, w.Pods[d].Name)
			}
		}
	}
	// without the option no pod waits
	w = loadBoth(t, fixtures, LoadOptions{})
	for _, p := range w.Pods {
		if p.After != nil {
			t.Fatalf("%s has dependencies without the DAG option", p.Name)
		}
	}
}

var machineLines = []string{
	"m_a,0,1,r1,96,100,USING",
	"m_a,100,1,r1,96,100,IMPORT_INSTALLING",
	"m_a,200,1,r1,96,100,USING",
	"m_b,0,2,r2,64,50,IMPORT_INSTALLING",
	"m_b,50,2,r2,64,50,USING",
	"m_c,0,3,,96,,USING", // no memory size: never a node
}

func TestLoadMachineEvents(t *testing.T) {
	dir := writeTrace(t, map[string][]string{MachineMeta: machineLines})
	ma := sim.NodeSpec{Name: "m_a", Allocatable: sim.Resources{CPU: 96000, Mem: 393216},
		Labels: map[string]string{sim.LabelZone: "1", sim.LabelRack: "r1"}}
	// m_b: 64 cores, memory 50 = 196608 MiB
	mb := sim.NodeSpec{Name: "m_b", Allocatable: sim.Resources{CPU: 64000, Mem: 196608},
		Labels: map[string]string{sim.LabelZone: "2", sim.LabelRack: "r2"}}
	cases := []struct {
		name   string
		window Window
		nodes  []sim.NodeSpec
		events []sim.MachineEvent
		end    sim.Time
	}{
		// m_b is installing at 0 and joins at 50 s; m_a leaves at 100 s and
		// returns at 200 s
		{"whole trace", Window{}, []sim.NodeSpec{ma}, []sim.MachineEvent{
			{At: 50 * sim.Second, Kind: sim.MachineAdd, Node: mb},
			{At: 100 * sim.Second, Kind: sim.MachineRemove, Node: sim.NodeSpec{Name: "m_a"}},
			{At: 200 * sim.Second, Kind: sim.MachineAdd, Node: ma},
		}, 0},
		// at 60 s both are up; m_a leaves 40 s into the window
		{"window 60-150 s", Window{From: 60 * sim.Second, To: 150 * sim.Second}, []sim.NodeSpec{ma, mb}, []sim.MachineEvent{
			{At: 40 * sim.Second, Kind: sim.MachineRemove, Node: sim.NodeSpec{Name: "m_a"}},
		}, 90 * sim.Second},
		// a record at the window start belongs to the initial state
		{"window 100-300 s", Window{From: 100 * sim.Second, To: 300 * sim.Second}, []sim.NodeSpec{mb}, []sim.MachineEvent{
			{At: 100 * sim.Second, Kind: sim.MachineAdd, Node: ma},
		}, 200 * sim.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := loadBoth(t, dir, LoadOptions{Window: tc.window})
			if !reflect.DeepEqual(w.Nodes, tc.nodes) {
				t.Errorf("nodes %+v; want %+v", w.Nodes, tc.nodes)
			}
			if !reflect.DeepEqual(w.Events, tc.events) {
				t.Errorf("events %+v; want %+v", w.Events, tc.events)
			}
			if w.End != tc.end {
				t.Errorf("end %s; want %s", w.End, tc.end)
			}
		})
	}
}

func TestLoadContainers(t *testing.T) {
	dir := writeTrace(t, map[string][]string{
		MachineMeta: machineLines,
		ContainerMeta: {
			"c_pre,m_a,0,app_x,started,400,800,3.125",
			"c_pre,m_a,2000,app_x,started,400,800,3.125",
			"c_new,m_a,1600,app_y,started,200,200,1.5625",
			"c_late,m_a,6000,app_y,started,100,100,1",
		},
		ContainerUsage: {
			"c_pre,m_a,900,99,99,,,,,,",    // before the window
			"c_pre,m_a,1000,50,80,,,,,,",   // step 0
			"c_pre,m_a,1100,70,90,,,,,,",   // step 0
			"c_pre,m_a,1400,,101,,,,,,",    // step 1: nothing valid
			"c_pre,m_a,1700,25,-1,,,,,,",   // step 2: cpu only
			"c_new,m_a,1500,90,90,,,,,,",   // before c_new arrives
			"c_new,m_a,1600,10,50,,,,,,",   // c_new step 0
			",m_a,1600,10,50,,,,,,",        // no container id
			"c_late,m_a,1600,10,50,,,,,,",  // container not loaded
			"c_new,m_a,5000.0,10,50,,,,,,", // after the window
		},
	})
	w := loadBoth(t, dir, LoadOptions{Window: Window{From: 1000 * sim.Second, To: 5000 * sim.Second}})
	want := []sim.PodSpec{
		// deployed before the window: arrives at its start; 3.125% of 393216
		// = 12288 MiB. Step 0 averages 60% cpu of 4000m = 2400m and 85% of
		// 12288 = 10444.8 MiB; step 1 has no valid sample (101 is invalid)
		// and repeats it, so no point; step 2 (600 s) has cpu 25% = 1000m
		// and keeps the memory.
		{Name: "c_pre", Group: "app_x", Priority: sim.High, Requests: sim.Resources{CPU: 4000, Mem: 12288},
			Limits: sim.Resources{CPU: 8000}, Usage: []sim.UsagePoint{
				{Offset: 0, Use: sim.Resources{CPU: 2400, Mem: 10445}},
				{Offset: 600 * sim.Second, Use: sim.Resources{CPU: 1000, Mem: 10445}},
			}},
		// first record at 1600 s: 600 s into the window; 1.5625% = 6144 MiB;
		// 10% of 2000m = 200m, 50% of 6144 = 3072
		{Name: "c_new", Group: "app_y", Priority: sim.High, Arrival: 600 * sim.Second,
			Requests: sim.Resources{CPU: 2000, Mem: 6144}, Limits: sim.Resources{CPU: 2000},
			Usage: []sim.UsagePoint{{Offset: 0, Use: sim.Resources{CPU: 200, Mem: 3072}}}},
	}
	if !reflect.DeepEqual(w.Pods, want) {
		t.Errorf("pods:\n%+v\nwant:\n%+v", w.Pods, want)
	}
}

var batchLines = map[string][]string{
	MachineMeta: machineLines[:2],
	BatchTask: {
		"M1,2,j_1,1,Terminated,100,200,50,0.5",
		"R2_1,1,j_1,1,Terminated,210,300,100,1",
	},
	BatchInstance: {
		"i1,M1,j_1,1,Terminated,100,150,m_a,1,1,40,60,0.25,0.4",
		"i2,M1,j_1,1,Running,105,0,m_a,1,1,,,,",
		"i3,R2_1,j_1,1,Terminated,210,300,m_a,1,1,80,90,0.5,0.6",
		"i4,X9,j_9,1,Terminated,10,20,m_a,1,1,30,45,0.1,0.2",
		"i5,M1,j_1,1,Terminated,0,20,m_a,1,1,1,1,1,1",
		"i6,M1,j_1,1,Terminated,400,300,m_a,1,1,1,1,1,1",
		"i7,Y1,j_8,1,Terminated,50,60,m_a,1,1,,,,",
	},
}

func TestLoadBatchInstances(t *testing.T) {
	dir := writeTrace(t, batchLines)
	w := loadBoth(t, dir, LoadOptions{DAG: true})
	want := []sim.PodSpec{
		// task j_9/X9 is missing: requests fall back to cpu_max 45 = 450m and
		// mem_max 0.2% = 786 MiB; usage cpu_avg 30 = 300m, mem_avg 0.1% = 393
		{Name: "j_9/X9/i4", Group: "j_9", Arrival: 10 * sim.Second, Duration: 10 * sim.Second,
			Requests: sim.Resources{CPU: 450, Mem: 786}, Usage: []sim.UsagePoint{{Use: sim.Resources{CPU: 300, Mem: 393}}}},
		// plan 50 = 500m, 0.5% = 1966 MiB; 50 s; usage 400m and 0.25% = 983
		{Name: "j_1/M1/i1", Group: "j_1", Arrival: 100 * sim.Second, Duration: 50 * sim.Second,
			Requests: sim.Resources{CPU: 500, Mem: 1966}, Usage: []sim.UsagePoint{{Use: sim.Resources{CPU: 400, Mem: 983}}}},
		// end 0: still running when the trace ends, so no duration; no usage
		{Name: "j_1/M1/i2", Group: "j_1", Arrival: 105 * sim.Second, Requests: sim.Resources{CPU: 500, Mem: 1966}},
		// plan 100 = 1000m, 1% = 3932 MiB; after both M1 instances
		{Name: "j_1/R2_1/i3", Group: "j_1", Arrival: 210 * sim.Second, Duration: 90 * sim.Second,
			Requests: sim.Resources{CPU: 1000, Mem: 3932}, Usage: []sim.UsagePoint{{Use: sim.Resources{CPU: 800, Mem: 1966}}},
			After: []int32{1, 2}},
		// i5 (start 0), i6 (end before start) and i7 (no plan, no usage) are skipped
	}
	if !reflect.DeepEqual(w.Pods, want) {
		t.Errorf("pods:\n%+v\nwant:\n%+v", w.Pods, want)
	}
}

// synthTrace generates a small synthetic trace once per test.
func synthTrace(t testing.TB, opts SynthOptions) string {
	t.Helper()
	dir := t.TempDir()
	if err := Synth(context.Background(), opts, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// readCSV reads a whole CSV table.
func readCSV(t testing.TB, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// Sampling K machines keeps exactly the pods that ran on them, counted here
// straight from the CSV; the same seed gives the same workload.
func TestLoadSampling(t *testing.T) {
	dir := synthTrace(t, SynthOptions{Machines: 30, Days: 1, Seed: 3, BatchConcurrency: 1})
	arrowDir := convertTrace(t, dir)
	src, err := openArrowSource(arrowDir)
	if err != nil {
		t.Fatal(err)
	}
	opts := LoadOptions{Machines: 6, Seed: 11, Window: Window{From: 6 * sim.Hour, To: 18 * sim.Hour}}
	w, st, err := load(context.Background(), src, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.selectedIDs) != 6 {
		t.Fatalf("%d machines kept; want 6", len(st.selectedIDs))
	}
	kept := make(map[string]bool)
	for _, id := range st.selectedIDs {
		kept[id] = true
	}
	for _, n := range w.Nodes {
		if !kept[n.Name] {
			t.Errorf("node %s was not sampled", n.Name)
		}
	}
	from, to := int64(6*3600), int64(18*3600)
	wantBatch := 0
	for _, r := range readCSV(t, filepath.Join(dir, BatchInstance+".csv")) {
		s, _ := strconv.ParseInt(r[biStart], 10, 64)
		if kept[r[biMachine]] && s >= from && s < to && s > 0 {
			wantBatch++
		}
	}
	seen := make(map[string]bool)
	wantOnline := 0
	for _, r := range readCSV(t, filepath.Join(dir, ContainerMeta+".csv")) {
		ts, _ := strconv.ParseInt(r[cmTime], 10, 64)
		if kept[r[cmMachine]] && ts < to && !seen[r[cmContainer]] {
			seen[r[cmContainer]] = true
			wantOnline++
		}
	}
	var online, batch int
	for _, p := range w.Pods {
		if p.Priority == sim.High {
			online++
		} else {
			batch++
		}
	}
	if online != wantOnline || batch != wantBatch || wantBatch == 0 {
		t.Errorf("%d online and %d batch pods; want %d and %d (non-zero)", online, batch, wantOnline, wantBatch)
	}
	again, _, err := load(context.Background(), src, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(w, again) {
		t.Error("the same seed gave a different workload")
	}
	opts.Seed = 12
	_, st2, err := load(context.Background(), src, opts)
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(st.selectedIDs, st2.selectedIDs) {
		t.Errorf("seeds 11 and 12 kept the same machines %v", st.selectedIDs)
	}
}

// Without batch_instance, batch_task rows expand to instance_num pods, each
// kept with probability K / machines.
func TestLoadTaskSampling(t *testing.T) {
	tasks := []string{"M1,4000,j_1,1,Terminated,10,20,100,1"}
	machines := make([]string, 40)
	for i := range machines {
		machines[i] = fmt.Sprintf("m_%d,0,1,1,96,100,USING", i)
	}
	dir := writeTrace(t, map[string][]string{MachineMeta: machines, BatchTask: tasks})
	// K = 10 of 40 machines: each of the 4000 instances is kept with
	// probability 1/4; the count is Binomial(4000, 0.25): mean 1000,
	// standard deviation 27.4, so [900, 1100] is more than 3.6 sigma
	w := loadBoth(t, dir, LoadOptions{Machines: 10, Seed: 5})
	if n := len(w.Pods); n < 900 || n > 1100 {
		t.Errorf("%d pods; want about 1000", n)
	}
	w = loadBoth(t, dir, LoadOptions{})
	if n := len(w.Pods); n != 4000 {
		t.Errorf("%d pods with every machine; want 4000", n)
	}
}

func TestLoadFactor(t *testing.T) {
	dir := synthTrace(t, SynthOptions{Machines: 20, Days: 1, Seed: 4, BatchConcurrency: 1})
	arrowDir := convertTrace(t, dir)
	base := LoadOptions{Window: Window{From: 2 * sim.Hour, To: 20 * sim.Hour}, DAG: true, Seed: 1, Jitter: 30 * sim.Second}
	load := func(f float64) *sim.Workload {
		o := base
		o.LoadFactor = f
		w, err := Load(arrowDir, o)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	one, two, half := load(1), load(2), load(0.5)
	orig := podsByName(one)
	t.Run("factor 2 doubles every unit", func(t *testing.T) {
		if len(two.Pods) != 2*len(one.Pods) {
			t.Fatalf("%d pods; want 2 x %d", len(two.Pods), len(one.Pods))
		}
		by := podsByName(two)
		for i, p := range two.Pods {
			name, isCopy := strings.CutSuffix(p.Name, "#1")
			o, ok := orig[name]
			if !ok {
				t.Fatalf("pod %s is not a copy of an original", p.Name)
			}
			shift := p.Arrival - one.Pods[o].Arrival
			if !isCopy && shift != 0 || isCopy && (shift < 0 || shift >= 30*sim.Second) && p.Arrival != two.End-1 {
				t.Fatalf("pod %s arrives %s after its original; want 0 for originals, [0, 30s) for copies", p.Name, shift)
			}
			for _, d := range p.After {
				dep := two.Pods[d].Name
				if strings.HasSuffix(dep, "#1") != isCopy {
					t.Fatalf("pod %d %s depends on %s of the other copy", i, p.Name, dep)
				}
				if _, ok := by[dep]; !ok {
					t.Fatalf("dependency %s missing", dep)
				}
			}
		}
	})
	t.Run("factor 0.5 keeps whole jobs", func(t *testing.T) {
		count := func(w *sim.Workload) map[string]int {
			m := make(map[string]int)
			for _, p := range w.Pods {
				if p.Priority == sim.Low {
					m[p.Group]++
				} else {
					m["c/"+p.Name]++
				}
			}
			return m
		}
		full, thin := count(one), count(half)
		for u, n := range thin {
			if full[u] != n {
				t.Fatalf("unit %s has %d of its %d pods", u, n, full[u])
			}
		}
		// each unit is kept with probability 1/2: with n units the kept
		// share has standard deviation 0.5/sqrt(n)
		share := float64(len(thin)) / float64(len(full))
		sd := 0.5 / math.Sqrt(float64(len(full)))
		if math.Abs(share-0.5) > 4*sd {
			t.Errorf("kept %.3f of %d units; want 0.5 +- %.3f", share, len(full), 4*sd)
		}
	})
}

// Load on Arrow and LoadCSV on the CSV give the same workload, with every
// option in play.
func TestLoadArrowEqualsCSV(t *testing.T) {
	dir := synthTrace(t, SynthOptions{Machines: 20, Days: 1, Seed: 5, BatchConcurrency: 1})
	w := loadBoth(t, dir, LoadOptions{Machines: 8, Seed: 9, DAG: true, LoadFactor: 1.7,
		Window: Window{From: 3 * sim.Hour, To: 15 * sim.Hour}, UsageStep: 10 * sim.Minute})
	if len(w.Pods) == 0 || len(w.Nodes) == 0 {
		t.Fatalf("%d nodes, %d pods; want some", len(w.Nodes), len(w.Pods))
	}
}

func TestLoadErrors(t *testing.T) {
	dir := convertTrace(t, writeTrace(t, batchLines))
	noMachines := convertTrace(t, writeTrace(t, map[string][]string{BatchTask: batchLines[BatchTask]}))
	cases := []struct {
		name string
		dir  string
		opts LoadOptions
		want string
	}{
		{"more machines than the trace has", dir, LoadOptions{Machines: 3}, "3 machines asked, the trace has 1"},
		{"negative machines", dir, LoadOptions{Machines: -1}, "machines -1"},
		{"inverted window", dir, LoadOptions{Window: Window{From: 10, To: 5}}, "end must be after start"},
		{"negative load factor", dir, LoadOptions{LoadFactor: -1}, "load factor"},
		{"NaN load factor", dir, LoadOptions{LoadFactor: math.NaN()}, "load factor"},
		{"no machine table", noMachines, LoadOptions{}, "no machine_meta table"},
		{"no such directory", filepath.Join(dir, "nope"), LoadOptions{}, "nope"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(tc.dir, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v; want one containing %q", err, tc.want)
			}
		})
	}
}

func TestLoadSplitRefusesOverlap(t *testing.T) {
	tables := maps.Clone(batchLines)
	tables[MachineMeta] = machineLines[:3] // m_a in use again at 200 s, for test-0
	dir := convertTrace(t, writeTrace(t, tables))
	ws := Windows{
		Train: []Window{{Name: "train-0", From: 0, To: 200 * sim.Second}},
		Test:  []Window{{Name: "test-0", From: 150 * sim.Second, To: 400 * sim.Second}},
	}
	if _, _, _, err := LoadSplit(dir, ws, LoadOptions{}); !errors.Is(err, ErrOverlap) {
		t.Fatalf("error %v; want ErrOverlap", err)
	}
	ws.Test[0].From = 200 * sim.Second
	ws.Val = []Window{{Name: "val-0", From: 100 * sim.Second, To: 200 * sim.Second}}
	if _, _, _, err := LoadSplit(dir, ws, LoadOptions{}); !errors.Is(err, ErrOverlap) {
		t.Fatalf("validation overlapping training: error %v; want ErrOverlap", err)
	}
	ws.Val[0].From, ws.Val[0].To, ws.Test[0].From = 200*sim.Second, 205*sim.Second, 205*sim.Second
	train, val, test, err := LoadSplit(dir, ws, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// i4 (10 s), i1 (100 s), i2 (105 s) start in train-0 [0, 200 s); none in
	// val-0 [200 s, 205 s); i3 (210 s) in test-0
	if len(train) != 1 || len(val) != 1 || len(test) != 1 || len(train[0].Pods) != 3 || len(val[0].Pods) != 0 || len(test[0].Pods) != 1 {
		t.Errorf("train %d, validation %d, test %d workloads; pods %d, %d, %d; want one each with 3, 0 and 1 pods",
			len(train), len(val), len(test), len(train[0].Pods), len(val[0].Pods), len(test[0].Pods))
	}
	if train[0].Name != "alibaba-v2018 train-0 [0.000s, 200.000s)" {
		t.Errorf("workload name %q", train[0].Name)
	}
}
