package dataset

// The openb traces of Alibaba's cluster-trace-gpu-v2023 (FGD, Weng et al.,
// ATC'23): a node list (openb_node_list_*.csv: sn, cpu_milli, memory_mib,
// gpu, model) and a pod list (openb_pod_list_*.csv: name, cpu_milli,
// memory_mib, num_gpu, gpu_milli, and optionally gpu_spec, qos, pod_phase,
// creation_time, deletion_time, scheduled_time; the multigpu lists have only
// the first five). The schemas are those of the artifact's data/README.md.

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/kubesim/kubesim/sim"
)

// openb file name patterns.
const (
	openbNodePrefix = "openb_node_list_"
	openbPodPrefix  = "openb_pod_list_"
)

// Range limits of openb fields, checked where the rows are read.
const (
	openbMaxCPU   = 10_000_000 // millicores: 10,000 cores
	openbMaxMem   = 1 << 30    // MiB: 1 PiB
	openbMaxTime  = 1 << 40    // seconds
	openbMaxNames = 1 << 24    // rows per file
)

// OpenbError is a malformed openb row or file: the file, the line (1-based,
// 0 for the whole file), the column and what is wrong.
type OpenbError struct {
	File   string
	Line   int
	Column string
	Msg    string
}

func (e *OpenbError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Column != "" {
		fmt.Fprintf(&b, ": column %s", e.Column)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// FindOpenb reports whether dir holds an openb trace: exactly one
// openb_node_list_*.csv and one openb_pod_list_*.csv. ok is false when it
// holds neither; more than one of a kind, or one kind without the other,
// is an error.
func FindOpenb(dir string) (nodes, pods string, ok bool, err error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", "", false, fmt.Errorf("reading %s: %w", dir, err)
	}
	var ns, ps []string
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".csv") {
			continue
		}
		switch {
		case strings.HasPrefix(n, openbNodePrefix):
			ns = append(ns, filepath.Join(dir, n))
		case strings.HasPrefix(n, openbPodPrefix):
			ps = append(ps, filepath.Join(dir, n))
		}
	}
	switch {
	case len(ns) == 0 && len(ps) == 0:
		return "", "", false, nil
	case len(ns) != 1 || len(ps) != 1:
		return "", "", false, fmt.Errorf("%s: an openb trace folder holds one %s*.csv and one %s*.csv, found %d and %d (%s)",
			dir, openbNodePrefix, openbPodPrefix, len(ns), len(ps), strings.Join(append(ns, ps...), ", "))
	}
	return ns[0], ps[0], true, nil
}

// OpenbNode is one row of an openb node list.
type OpenbNode struct {
	Name     string
	CPUMilli int64
	MemMiB   int64
	GPUs     int64
	Model    string // empty for a node without GPUs
}

// OpenbPod is one row of an openb pod list. Times are seconds; -1 where the
// list has no such column or the field is empty.
type OpenbPod struct {
	Name      string
	CPUMilli  int64
	MemMiB    int64
	NumGPU    int64
	GPUMilli  int64
	GPUSpec   string // allowed models joined by '|', empty for any
	QoS       string
	Phase     string
	Creation  int64
	Deletion  int64
	Scheduled int64
}

// OpenbTrace is an openb node list and pod list as read.
type OpenbTrace struct {
	Name  string // the pod list's name without prefix and suffix (default, gpushare40, ...)
	Nodes []OpenbNode
	Pods  []OpenbPod
}

// csvRows reads a CSV file with a header, checks that the required columns
// are there (others are optional: a getter reports them absent), and calls row for each data row with a field getter and the
// row's line.
func csvRows(path string, required []string, row func(get func(col string) (string, bool), line int) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.ReuseRecord = true
	head, err := r.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return &OpenbError{File: path, Msg: "empty file, want a header"}
		}
		return &OpenbError{File: path, Line: 1, Msg: err.Error()}
	}
	idx := make(map[string]int, len(head))
	for i, h := range head {
		idx[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	for _, c := range required {
		if _, ok := idx[c]; !ok {
			return &OpenbError{File: path, Line: 1, Column: c, Msg: fmt.Sprintf("missing from the header (have %s)", strings.Join(head, ","))}
		}
	}
	var rec []string
	get := func(col string) (string, bool) {
		i, ok := idx[col]
		if !ok || i >= len(rec) {
			return "", false
		}
		return strings.TrimSpace(rec[i]), true
	}
	for n := 0; ; n++ {
		rec, err = r.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		line, _ := r.FieldPos(0)
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return &OpenbError{File: path, Line: pe.Line, Msg: pe.Err.Error()}
			}
			return &OpenbError{File: path, Line: line, Msg: err.Error()}
		}
		if n >= openbMaxNames {
			return &OpenbError{File: path, Line: line, Msg: fmt.Sprintf("more than %d rows", openbMaxNames)}
		}
		if err := row(get, line); err != nil {
			return err
		}
	}
}

// intField parses a required integer field in [lo, hi].
func intField(path string, line int, get func(string) (string, bool), col string, lo, hi int64) (int64, error) {
	s, _ := get(col)
	if s == "" {
		return 0, &OpenbError{File: path, Line: line, Column: col, Msg: "empty, want an integer"}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		// the artifact's lists are written by pandas: 12000.0 is an integer too
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || f != float64(int64(f)) {
			return 0, &OpenbError{File: path, Line: line, Column: col, Msg: fmt.Sprintf("%q is not an integer", s)}
		}
		v = int64(f)
	}
	if v < lo || v > hi {
		return 0, &OpenbError{File: path, Line: line, Column: col, Msg: fmt.Sprintf("%d out of range [%d, %d]", v, lo, hi)}
	}
	return v, nil
}

// optTime parses an optional time field: -1 when absent or empty.
func optTime(path string, line int, get func(string) (string, bool), col string) (int64, error) {
	if s, ok := get(col); !ok || s == "" {
		return -1, nil
	}
	return intField(path, line, get, col, 0, openbMaxTime)
}

// nanModel maps pandas' missing-value spellings to empty.
func nanModel(s string) string {
	if strings.EqualFold(s, "nan") || strings.EqualFold(s, "none") {
		return ""
	}
	return s
}

// ReadOpenbCSV reads an openb node list and pod list, checking every
// numeric field's range where it enters: CPU, memory, GPU counts 0..8,
// gpu_milli 0 without a GPU, 1..1000 with one, 1000 for more than one (only
// one GPU can be shared), a model for every node with GPUs, unique names.
// Errors are *OpenbError values naming the file, line and column.
func ReadOpenbCSV(nodesPath, podsPath string) (*OpenbTrace, error) {
	t := &OpenbTrace{Name: strings.TrimSuffix(strings.TrimPrefix(filepath.Base(podsPath), openbPodPrefix), ".csv")}
	seen := make(map[string]int)
	err := csvRows(nodesPath, []string{"sn", "cpu_milli", "memory_mib", "gpu"}, func(get func(string) (string, bool), line int) error {
		var n OpenbNode
		var err error
		n.Name, _ = get("sn")
		if err := uniqueName(nodesPath, line, "sn", "node", n.Name, seen); err != nil {
			return err
		}
		if n.CPUMilli, err = intField(nodesPath, line, get, "cpu_milli", 1, openbMaxCPU); err != nil {
			return err
		}
		if n.MemMiB, err = intField(nodesPath, line, get, "memory_mib", 1, openbMaxMem); err != nil {
			return err
		}
		if n.GPUs, err = intField(nodesPath, line, get, "gpu", 0, sim.MaxGPUs); err != nil {
			return err
		}
		m, _ := get("model")
		n.Model = nanModel(m)
		switch {
		case n.GPUs > 0 && n.Model == "":
			return &OpenbError{File: nodesPath, Line: line, Column: "model", Msg: fmt.Sprintf("empty for a node with %d GPUs", n.GPUs)}
		case n.GPUs == 0 && n.Model != "":
			return &OpenbError{File: nodesPath, Line: line, Column: "model", Msg: fmt.Sprintf("%q for a node without GPUs", n.Model)}
		case strings.Contains(n.Model, "|"):
			return &OpenbError{File: nodesPath, Line: line, Column: "model", Msg: fmt.Sprintf("%q: a node has one GPU model", n.Model)}
		}
		t.Nodes = append(t.Nodes, n)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(t.Nodes) == 0 {
		return nil, &OpenbError{File: nodesPath, Msg: "no nodes"}
	}
	clear(seen)
	err = csvRows(podsPath, []string{"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"},
		func(get func(string) (string, bool), line int) error {
			var p OpenbPod
			var err error
			p.Name, _ = get("name")
			if err := uniqueName(podsPath, line, "name", "pod", p.Name, seen); err != nil {
				return err
			}
			if p.CPUMilli, err = intField(podsPath, line, get, "cpu_milli", 0, openbMaxCPU); err != nil {
				return err
			}
			if p.MemMiB, err = intField(podsPath, line, get, "memory_mib", 0, openbMaxMem); err != nil {
				return err
			}
			if p.NumGPU, err = intField(podsPath, line, get, "num_gpu", 0, sim.MaxGPUs); err != nil {
				return err
			}
			lo, hi := int64(1), int64(sim.GPUMilli)
			switch {
			case p.NumGPU == 0:
				lo, hi = 0, 0
			case p.NumGPU > 1:
				lo = sim.GPUMilli
			}
			if p.GPUMilli, err = intField(podsPath, line, get, "gpu_milli", lo, hi); err != nil {
				var oe *OpenbError
				if errors.As(err, &oe) && p.NumGPU != 1 {
					oe.Msg += fmt.Sprintf(" for num_gpu %d", p.NumGPU)
				}
				return err
			}
			s, _ := get("gpu_spec")
			p.GPUSpec = nanModel(s)
			p.QoS, _ = get("qos")
			p.Phase, _ = get("pod_phase")
			if p.Creation, err = optTime(podsPath, line, get, "creation_time"); err != nil {
				return err
			}
			if p.Deletion, err = optTime(podsPath, line, get, "deletion_time"); err != nil {
				return err
			}
			if p.Scheduled, err = optTime(podsPath, line, get, "scheduled_time"); err != nil {
				return err
			}
			t.Pods = append(t.Pods, p)
			return nil
		})
	if err != nil {
		return nil, err
	}
	if _, err := t.Workload(); err != nil {
		return nil, err
	}
	return t, nil
}

// Workload turns the trace into a sim.GPUWorkload: GPU model ids in order
// of first appearance in the node list, then models only pods name (in
// sorted order); a pod's gpu_spec becomes the set of its models (empty
// names between '|' are ignored, as the artifact does).
func (t *OpenbTrace) Workload() (*sim.GPUWorkload, error) {
	w := &sim.GPUWorkload{Name: "openb-" + t.Name, Nodes: make([]sim.GPUNodeSpec, len(t.Nodes)), Pods: make([]sim.GPUPodSpec, len(t.Pods))}
	id := make(map[string]int8)
	for i, n := range t.Nodes {
		model := int8(-1)
		if n.GPUs > 0 {
			m, ok := id[n.Model]
			if !ok {
				if len(w.Models) == sim.MaxGPUModels {
					return nil, fmt.Errorf("openb %s: node %s: more than %d GPU models", t.Name, n.Name, sim.MaxGPUModels)
				}
				m = int8(len(w.Models))
				id[n.Model] = m
				w.Models = append(w.Models, n.Model)
			}
			model = m
		}
		w.Nodes[i] = sim.GPUNodeSpec{Name: n.Name, CPU: n.CPUMilli, Mem: n.MemMiB, GPUs: int8(n.GPUs), Model: model}
	}
	var extra []string
	for _, p := range t.Pods {
		if p.NumGPU == 0 {
			continue // the artifact ignores gpu_spec without a GPU
		}
		for _, m := range strings.Split(p.GPUSpec, "|") {
			if _, ok := id[m]; !ok && m != "" {
				id[m] = -1
				extra = append(extra, m)
			}
		}
	}
	sort.Strings(extra)
	for _, m := range extra {
		if len(w.Models) == sim.MaxGPUModels {
			return nil, fmt.Errorf("openb %s: pod GPU model %s: more than %d GPU models", t.Name, m, sim.MaxGPUModels)
		}
		id[m] = int8(len(w.Models))
		w.Models = append(w.Models, m)
	}
	for i, p := range t.Pods {
		var set sim.GPUModels
		for _, m := range strings.Split(p.GPUSpec, "|") {
			if m != "" && p.NumGPU > 0 {
				set |= 1 << uint(id[m])
			}
		}
		w.Pods[i] = sim.GPUPodSpec{Name: p.Name, CPU: p.CPUMilli, Mem: p.MemMiB,
			GPU: sim.GPURequest{Count: int8(p.NumGPU), Milli: int16(p.GPUMilli), Models: set}}
	}
	if err := w.Validate(); err != nil {
		return nil, fmt.Errorf("openb %s: %w", t.Name, err)
	}
	return w, nil
}

// uniqueName checks the name of a row of kind (node or pod) in column col:
// present, and not given on an earlier line (seen maps names to lines).
func uniqueName(path string, line int, col, kind, name string, seen map[string]int) error {
	if name == "" {
		return &OpenbError{File: path, Line: line, Column: col, Msg: "empty " + kind + " name"}
	}
	if l, dup := seen[name]; dup {
		return &OpenbError{File: path, Line: line, Column: col, Msg: fmt.Sprintf("%s %s repeats line %d", kind, name, l)}
	}
	seen[name] = line
	return nil
}
