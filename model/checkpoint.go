package model

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"slices"

	"gorgonia.org/tensor"

	"github.com/kubesim/kubesim/model/internal/nn"

	"github.com/kubesim/kubesim/internal/atomicfile"
)

// Checkpoint file layout (all integers little-endian):
//
//	magic     8 bytes  "KSPOLICY"
//	version   uint32   checkpointVersion
//	hdrLen    uint32   length of the JSON header
//	header    JSON     checkpointHeader: config, dtype, parameter names and
//	                   shapes, Adam step, caller metadata
//	weights   every parameter's elements in header order, as float32 or
//	          float64 per the dtype
//	moments   when adam_step > 0: Adam's first moments, then second
//	          moments, same order and type
//	crc       uint32   CRC-32 (Castagnoli) of everything before it
const (
	checkpointMagic   = "KSPOLICY"
	checkpointVersion = 2 // 2: node scores centred on the graph mean
	maxHeaderLen      = 1 << 20
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

type checkpointHeader struct {
	Config   Config            `json:"config"`
	Dtype    string            `json:"dtype"`
	Params   []paramInfo       `json:"params"`
	AdamStep int               `json:"adam_step"`
	Meta     map[string]string `json:"meta,omitempty"`
}

type paramInfo struct {
	Name  string `json:"name"`
	Shape []int  `json:"shape"`
}

// Save writes the policy to path atomically (a temporary file in the same
// folder, then a rename): its architecture, weights and Adam state, so that
// Load or Restore continues exactly, plus meta, the caller's own metadata
// (e.g. the trainer's step count and configuration; may be nil).
func (p *Policy) Save(path string, meta map[string]string) error {
	hdr := checkpointHeader{Config: p.cfg, Dtype: p.dtype().String(), AdamStep: p.opt.t, Meta: meta}
	for _, w := range p.params {
		hdr.Params = append(hdr.Params, paramInfo{Name: w.Name, Shape: slices.Clone([]int(w.Value.Shape()))})
	}
	js, err := json.Marshal(hdr)
	if err != nil {
		return fmt.Errorf("saving policy %s: %w", path, err)
	}
	var buf bytes.Buffer
	buf.WriteString(checkpointMagic)
	buf.Write(binary.LittleEndian.AppendUint32(nil, checkpointVersion))
	buf.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(js))))
	buf.Write(js)
	groups := [][]*tensor.Dense{p.values()}
	if p.opt.t > 0 {
		groups = append(groups, p.opt.m, p.opt.v)
	}
	for _, g := range groups {
		for _, d := range g {
			writeDense(&buf, d)
		}
	}
	buf.Write(binary.LittleEndian.AppendUint32(nil, crc32.Checksum(buf.Bytes(), crcTable)))
	return writeAtomic(path, buf.Bytes())
}

func (p *Policy) dtype() tensor.Dtype { return nn.Dtype(p.cfg.Float64) }

func (p *Policy) values() []*tensor.Dense {
	vs := make([]*tensor.Dense, len(p.params))
	for i, w := range p.params {
		vs[i] = w.Value
	}
	return vs
}

func writeDense(buf *bytes.Buffer, d *tensor.Dense) {
	switch s := d.Data().(type) {
	case []float32:
		for _, v := range s {
			buf.Write(binary.LittleEndian.AppendUint32(nil, math.Float32bits(v)))
		}
	case []float64:
		for _, v := range s {
			buf.Write(binary.LittleEndian.AppendUint64(nil, math.Float64bits(v)))
		}
	}
}

func writeAtomic(path string, data []byte) error {
	if err := atomicfile.WriteBytes(path, data); err != nil {
		return fmt.Errorf("saving policy: %w", err)
	}
	return nil
}

// ErrCheckpoint is wrapped by every error about a checkpoint file's
// contents (as opposed to failing to read it).
var ErrCheckpoint = errors.New("invalid policy checkpoint")

// Load reads a policy saved by Save: the architecture comes from the file.
// A file that is not a checkpoint, of another version, truncated, corrupt,
// or whose weights do not fit its architecture gives an error wrapping
// ErrCheckpoint and naming the file.
func Load(path string) (*Policy, error) {
	ck, err := readCheckpoint(path)
	if err != nil {
		return nil, err
	}
	p, err := New(ck.hdr.Config)
	if err != nil {
		return nil, fmt.Errorf("loading policy %s: %w: %w", path, ErrCheckpoint, err)
	}
	if err := ck.apply(p); err != nil {
		return nil, fmt.Errorf("loading policy %s: %w", path, err)
	}
	return p, nil
}

// Restore loads a checkpoint into p, for a trainer resuming with its own
// configuration: the file's architecture must equal p's (the error names
// the first field that differs). Weights, Adam state and metadata are
// replaced; p's cached graphs stay valid, as they share the weight tensors.
func (p *Policy) Restore(path string) error {
	ck, err := readCheckpoint(path)
	if err != nil {
		return err
	}
	if err := ck.hdr.Config.sameArchitecture(p.cfg); err != nil {
		return fmt.Errorf("restoring policy %s: %w: %w", path, ErrCheckpoint, err)
	}
	if err := ck.apply(p); err != nil {
		return fmt.Errorf("restoring policy %s: %w", path, err)
	}
	return nil
}

type checkpoint struct {
	hdr  checkpointHeader
	body []byte // weights and moments
}

func readCheckpoint(path string) (*checkpoint, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("loading policy: %w", err)
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("loading policy %s: %w: %s", path, ErrCheckpoint, fmt.Sprintf(format, args...))
	}
	const fixed = len(checkpointMagic) + 8
	if len(data) < len(checkpointMagic) || string(data[:len(checkpointMagic)]) != checkpointMagic {
		return nil, bad("not a kubesim policy checkpoint (no %q magic)", checkpointMagic)
	}
	if len(data) < fixed {
		return nil, bad("truncated: %d bytes, shorter than the %d-byte preamble", len(data), fixed)
	}
	if v := binary.LittleEndian.Uint32(data[8:]); v != checkpointVersion {
		return nil, bad("version %d, this build reads version %d", v, checkpointVersion)
	}
	hl := int(binary.LittleEndian.Uint32(data[12:]))
	if hl > maxHeaderLen {
		return nil, bad("header length %d exceeds %d: corrupt", hl, maxHeaderLen)
	}
	if len(data) < fixed+hl {
		return nil, bad("truncated: %d bytes, the header alone needs %d", len(data), fixed+hl)
	}
	var ck checkpoint
	dec := json.NewDecoder(bytes.NewReader(data[fixed : fixed+hl]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ck.hdr); err != nil {
		return nil, bad("header: %v", err)
	}
	var size int
	switch ck.hdr.Dtype {
	case tensor.Float32.String():
		size = 4
	case tensor.Float64.String():
		size = 8
	default:
		return nil, bad("header: dtype %q", ck.hdr.Dtype)
	}
	if (size == 8) != ck.hdr.Config.Float64 {
		return nil, bad("header: dtype %s contradicts float64=%v", ck.hdr.Dtype, ck.hdr.Config.Float64)
	}
	if ck.hdr.AdamStep < 0 {
		return nil, bad("header: adam_step %d", ck.hdr.AdamStep)
	}
	elems := 0
	for _, pi := range ck.hdr.Params {
		n := 1
		for _, d := range pi.Shape {
			if d < 1 || d > 1<<24 {
				return nil, bad("header: parameter %q has shape %v", pi.Name, pi.Shape)
			}
			n *= d
		}
		elems += n
	}
	// Every round holds at least one Hidden x Hidden matrix and the input
	// embeddings Features x Hidden ones: a header whose architecture needs
	// more weights than it lists is corrupt, and is refused before New
	// builds (and allocates) that architecture.
	c := ck.hdr.Config.withDefaults()
	for _, need := range [][2]int{{max(c.Rounds, 1), c.Hidden}, {c.NodeFeatures, 1}, {c.PodFeatures, 1}} {
		if w := int64(need[0]) * int64(need[1]) * int64(max(c.Hidden, 1)); w > int64(elems) {
			return nil, bad("header: an architecture of hidden %d, rounds %d, %d node and %d pod features needs more than the %d weights listed",
				c.Hidden, c.Rounds, c.NodeFeatures, c.PodFeatures, elems)
		}
	}
	if ck.hdr.AdamStep > 0 {
		elems *= 3
	}
	want := fixed + hl + elems*size + 4
	switch {
	case len(data) < want:
		return nil, bad("truncated: %d bytes, the header promises %d", len(data), want)
	case len(data) > want:
		return nil, bad("%d unexpected bytes after the end: corrupt", len(data)-want)
	}
	if got, sum := binary.LittleEndian.Uint32(data[want-4:]), crc32.Checksum(data[:want-4], crcTable); got != sum {
		return nil, bad("checksum mismatch (stored %08x, computed %08x): corrupt", got, sum)
	}
	ck.body = data[fixed+hl : want-4]
	return &ck, nil
}

// apply checks that the checkpoint's parameters are p's, by name and shape,
// and copies the weights, Adam state and metadata into p.
func (ck *checkpoint) apply(p *Policy) error {
	if len(ck.hdr.Params) != len(p.params) {
		return fmt.Errorf("%w: %d parameters, the architecture has %d", ErrCheckpoint, len(ck.hdr.Params), len(p.params))
	}
	for i, w := range p.params {
		pi := ck.hdr.Params[i]
		if pi.Name != w.Name || !slices.Equal(pi.Shape, []int(w.Value.Shape())) {
			return fmt.Errorf("%w: parameter %d is %q %v, the architecture needs %q %v", ErrCheckpoint, i, pi.Name, pi.Shape, w.Name, []int(w.Value.Shape()))
		}
	}
	if err := ck.checkFinite(p); err != nil {
		return err
	}
	body := ck.body
	read := func(d *tensor.Dense) {
		switch s := d.Data().(type) {
		case []float32:
			for j := range s {
				s[j] = math.Float32frombits(binary.LittleEndian.Uint32(body))
				body = body[4:]
			}
		case []float64:
			for j := range s {
				s[j] = math.Float64frombits(binary.LittleEndian.Uint64(body))
				body = body[8:]
			}
		}
	}
	for _, d := range p.values() {
		read(d)
	}
	p.opt.init(p.params)
	if ck.hdr.AdamStep > 0 {
		p.opt.t = ck.hdr.AdamStep
		for _, d := range p.opt.m {
			read(d)
		}
		for _, d := range p.opt.v {
			read(d)
		}
	}
	p.meta = ck.hdr.Meta
	return nil
}

// checkFinite refuses a checkpoint holding a NaN or infinite weight (or
// Adam moment) before anything is copied: such a policy loads, then gives
// NaN probabilities, and a greedy pick on NaN chooses Pending for every
// pod. The error names the parameter and the element.
func (ck *checkpoint) checkFinite(p *Policy) error {
	size := 8
	if p.dtype() == tensor.Float32 {
		size = 4
	}
	body := ck.body
	check := func(what, name string, n int) error {
		for j := range n {
			if len(body) < size {
				return nil // a short body is apply's to report
			}
			var v float64
			if size == 4 {
				v = float64(math.Float32frombits(binary.LittleEndian.Uint32(body)))
			} else {
				v = math.Float64frombits(binary.LittleEndian.Uint64(body))
			}
			body = body[size:]
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: %s %q element %d is %v", ErrCheckpoint, what, name, j, v)
			}
		}
		return nil
	}
	passes := []string{"weight"}
	if ck.hdr.AdamStep > 0 {
		passes = append(passes, "Adam first moment of", "Adam second moment of")
	}
	for _, what := range passes {
		for _, w := range p.params {
			if err := check(what, w.Name, w.Value.Shape().TotalSize()); err != nil {
				return err
			}
		}
	}
	return nil
}
