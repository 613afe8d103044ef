package dataset

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/sim"
)

const openbDefault = "testdata/openb/default"

// writeOpenb writes a node list and a pod list into a new folder.
func writeOpenb(t *testing.T, nodes, pods string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "openb_node_list_x.csv"), []byte(nodes), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "openb_pod_list_y.csv"), []byte(pods), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

const (
	okNodes = "sn,cpu_milli,memory_mib,gpu,model\nn0,32000,262144,0,\nn1,96000,393216,8,G2\nn2,64000,262144,2,P100\n"
	okPods  = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n" +
		"p0,12000,16384,1,1000,,LS,Running,0,12537496,0\n" +
		"p1,6000,12288,1,460,P100|T4,BE,Failed,427061,,427061\n" +
		"p2,88000,327680,8,1000,G2,Burstable,Succeeded,9437497,10769854,9437497\n" +
		"p3,4000,8192,0,0,,BE,Running,1,2,1\n"
)

func TestReadOpenbCSV(t *testing.T) {
	dir := writeOpenb(t, okNodes, okPods)
	nodes, pods, ok, err := FindOpenb(dir)
	if err != nil || !ok {
		t.Fatalf("FindOpenb = %v, %v", ok, err)
	}
	tr, err := ReadOpenbCSV(nodes, pods)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Name != "y" || len(tr.Nodes) != 3 || len(tr.Pods) != 4 {
		t.Fatalf("name %q, %d nodes, %d pods; want y, 3, 4", tr.Name, len(tr.Nodes), len(tr.Pods))
	}
	if p := tr.Pods[1]; p.Deletion != -1 || p.GPUSpec != "P100|T4" || p.GPUMilli != 460 {
		t.Errorf("pod p1 = %+v; want no deletion time, spec P100|T4, 460 m", p)
	}
	w, err := tr.Workload()
	if err != nil {
		t.Fatal(err)
	}
	// models: the nodes' G2 (0) and P100 (1), then T4 that only a pod names (2)
	if !reflect.DeepEqual(w.Models, []string{"G2", "P100", "T4"}) {
		t.Errorf("models %v; want [G2 P100 T4]", w.Models)
	}
	if g := w.Pods[1].GPU; g != (sim.GPURequest{Count: 1, Milli: 460, Models: 0b110}) {
		t.Errorf("pod p1 GPU %+v; want a 460 m share of P100 or T4", g)
	}
	if n := w.Nodes[0]; n.GPUs != 0 || n.Model != -1 {
		t.Errorf("node n0 %+v; want no GPU, model -1", n)
	}
	if w.GPUCapacity() != 10 {
		t.Errorf("capacity %d GPUs; want 10", w.GPUCapacity())
	}
}

func TestReadOpenbCSVMultigpuSchema(t *testing.T) {
	// the multigpu lists have only the first five columns
	dir := writeOpenb(t, okNodes, "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,12000,16384,2,1000\n")
	tr, err := ReadOpenbCSV(filepath.Join(dir, "openb_node_list_x.csv"), filepath.Join(dir, "openb_pod_list_y.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if p := tr.Pods[0]; p.Creation != -1 || p.GPUSpec != "" || p.NumGPU != 2 {
		t.Errorf("pod %+v", p)
	}
}

func TestReadOpenbCSVErrors(t *testing.T) {
	podHead := "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
	tests := []struct {
		name, nodes, pods string
		file              string // openb_node_list_x or openb_pod_list_y
		line              int
		col, msg          string
	}{
		{"nine GPUs", "sn,cpu_milli,memory_mib,gpu,model\nn0,32000,1024,9,T4\n", podHead, "node", 2, "gpu", "out of range"},
		{"model missing", "sn,cpu_milli,memory_mib,gpu,model\nn0,32000,1024,2,\n", podHead, "node", 2, "model", "empty for a node with 2 GPUs"},
		{"model without GPU", "sn,cpu_milli,memory_mib,gpu,model\nn0,32000,1024,0,T4\n", podHead, "node", 2, "model", "without GPUs"},
		{"zero cpu node", "sn,cpu_milli,memory_mib,gpu,model\nn0,0,1024,0,\n", podHead, "node", 2, "cpu_milli", "out of range"},
		{"duplicate node", "sn,cpu_milli,memory_mib,gpu,model\nn0,1,1,0,\nn0,1,1,0,\n", podHead, "node", 3, "sn", "repeats line 2"},
		{"header", "name,cpu\n", podHead, "node", 1, "sn", "missing from the header"},
		{"milli over 1000", okNodes, podHead + "p0,1000,1,1,1200\n", "pod", 2, "gpu_milli", "out of range [1, 1000]"},
		{"shared pair", okNodes, podHead + "p0,1000,1,1,1000\np1,1000,1,2,500\n", "pod", 3, "gpu_milli", "for num_gpu 2"},
		{"milli without GPU", okNodes, podHead + "p0,1000,1,0,300\n", "pod", 2, "gpu_milli", "out of range [0, 0]"},
		{"negative memory", okNodes, podHead + "p0,1000,-5,0,0\n", "pod", 2, "memory_mib", "out of range"},
		{"not a number", okNodes, podHead + "p0,lots,1,0,0\n", "pod", 2, "cpu_milli", "not an integer"},
		{"bad time", okNodes, "name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time\np0,1,1,0,0,-4\n", "pod", 2, "creation_time", "out of range"},
		{"short row", okNodes, podHead + "p0,1,1\n", "pod", 2, "", "wrong number of fields"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeOpenb(t, tc.nodes, tc.pods)
			np, pp := filepath.Join(dir, "openb_node_list_x.csv"), filepath.Join(dir, "openb_pod_list_y.csv")
			_, err := ReadOpenbCSV(np, pp)
			var oe *OpenbError
			if !errors.As(err, &oe) {
				t.Fatalf("error %v; want an *OpenbError", err)
			}
			want := np
			if tc.file == "pod" {
				want = pp
			}
			if oe.File != want || oe.Line != tc.line || oe.Column != tc.col || !strings.Contains(oe.Msg, tc.msg) {
				t.Errorf("error %q; want %s:%d column %q mentioning %q", err, want, tc.line, tc.col, tc.msg)
			}
		})
	}
}

func TestFindOpenbErrors(t *testing.T) {
	dir := writeOpenb(t, okNodes, okPods)
	if err := os.WriteFile(filepath.Join(dir, "openb_pod_list_z.csv"), []byte(okPods), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := FindOpenb(dir); err == nil || !strings.Contains(err.Error(), "found 1 and 2") {
		t.Errorf("two pod lists: %v; want an error counting them", err)
	}
	if _, _, ok, err := FindOpenb(t.TempDir()); ok || err != nil {
		t.Errorf("empty folder: %v, %v; want not openb, no error", ok, err)
	}
}

// TestConvertOpenbRoundTrip converts the default trace kept in testdata
// and loads it back: the same rows as the CSV, manifest checksums that
// catch a corrupted file, and a refused non-trace output folder.
func TestConvertOpenbRoundTrip(t *testing.T) {
	out := filepath.Join(t.TempDir(), "trace")
	sum, err := Convert(context.Background(), openbDefault, out, ConvertOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Tables) != 2 || sum.Tables[0].Kept != 1213 || sum.Tables[1].Kept != 8152 {
		t.Fatalf("summary %+v; want 1,213 nodes and 8,152 pods", sum.Tables)
	}
	if !IsOpenb(out) {
		t.Fatal("IsOpenb = false after conversion")
	}
	csvTrace, err := ReadOpenbCSV(filepath.Join(openbDefault, "openb_node_list_gpu_node.csv"), filepath.Join(openbDefault, "openb_pod_list_default.csv"))
	if err != nil {
		t.Fatal(err)
	}
	arrowTrace, err := LoadOpenbTrace(out)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(csvTrace, arrowTrace) {
		t.Error("the Arrow trace differs from the CSV it was converted from")
	}
	w, err := LoadOpenb(out)
	if err != nil {
		t.Fatal(err)
	}
	if w.GPUCapacity() != 6212 || len(w.Nodes) != 1213 {
		t.Errorf("%d GPUs on %d nodes; want 6,212 on 1,213", w.GPUCapacity(), len(w.Nodes))
	}
	// a flipped byte is caught by the checksum, naming the file
	p := filepath.Join(out, OpenbPods+".arrow")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOpenb(out); err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "corrupt") {
		t.Errorf("corrupted file: %v; want a checksum error naming %s", err, p)
	}
	// a folder with other files is not replaced
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Convert(context.Background(), openbDefault, other, ConvertOptions{}); err == nil {
		t.Error("converting into a folder holding notes.txt: no error")
	}
	// a bad row leaves the previous trace in place
	bad := writeOpenb(t, okNodes, "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1,1,9,1000\n")
	good := filepath.Join(t.TempDir(), "good")
	if _, err := Convert(context.Background(), writeOpenb(t, okNodes, okPods), good, ConvertOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := Convert(context.Background(), bad, good, ConvertOptions{}); err == nil {
		t.Fatal("a pod with 9 GPUs: no error")
	}
	if tr, err := LoadOpenbTrace(good); err != nil || len(tr.Pods) != 4 {
		t.Errorf("after a failed conversion: %v pods, %v; want the previous 4", tr, err)
	}
}
