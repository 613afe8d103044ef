package sweep

import (
	"fmt"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"
)

// Axis is one key of a spec's grid: a dotted path into the spec
// ("ppo.seed", "trace.load_factor") and the values it takes.
type Axis struct {
	Key  string
	Line int // of the key in the spec file
	// Values are the YAML values, in file order.
	Values []*yaml.Node
	// wrap puts a scalar value in a one-element list, for keys whose field
	// is a list (eval.nodes: [10, 50] expands to eval.nodes [10] and [50]).
	wrap bool
}

// Setting is one grid key's value at a grid point, as written in the spec.
type Setting struct {
	Key   string `json:"key" yaml:"key"`
	Value string `json:"value" yaml:"value"`
}

// Point names a grid point: "key=value" pairs joined by spaces, in the
// grid's order; "" for a spec without a grid.
func Point(settings []Setting) string {
	parts := make([]string, len(settings))
	for i, s := range settings {
		parts[i] = s.Key + "=" + s.Value
	}
	return strings.Join(parts, " ")
}

// parseGrid reads the grid section: a mapping of dotted keys to lists of
// values. Each key must name a setting of Spec; errors name the key and its
// line.
func parseGrid(n *yaml.Node) ([]Axis, error) {
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: grid: want a mapping of dotted keys to lists of values", n.Line)
	}
	var axes []Axis
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := k.Value
		if seen[key] {
			return nil, fmt.Errorf("line %d: grid key %q given twice", k.Line, key)
		}
		seen[key] = true
		t, err := fieldType(reflect.TypeOf(Spec{}), strings.Split(key, "."))
		if err != nil {
			return nil, fmt.Errorf("line %d: grid key %q names nothing: %v", k.Line, key, err)
		}
		if key == "grid" || key == "name" || strings.HasPrefix(key, "windows") {
			return nil, fmt.Errorf("line %d: grid key %q: not a setting a grid can vary", k.Line, key)
		}
		if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
			return nil, fmt.Errorf("line %d: grid key %q: want a non-empty list of values", k.Line, key)
		}
		for _, e := range v.Content {
			et := t
			if t.Kind() == reflect.Slice && e.Kind != yaml.SequenceNode {
				et = t.Elem() // a scalar wrapped in a one-element list
			}
			if err := checkNumbers(e, et, "grid key "+key); err != nil {
				return nil, err
			}
		}
		axes = append(axes, Axis{Key: key, Line: k.Line, Values: v.Content, wrap: t.Kind() == reflect.Slice})
	}
	if len(axes) == 0 {
		return nil, fmt.Errorf("line %d: grid: no keys", n.Line)
	}
	return axes, nil
}

// fieldType follows a dotted path of YAML keys through t's fields and
// returns the type of the field it names.
func fieldType(t reflect.Type, path []string) (reflect.Type, error) {
	for len(path) > 0 {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Map:
			t, path = t.Elem(), path[1:]
			continue
		case reflect.Struct:
		default:
			return nil, fmt.Errorf("%s is a %s, with no key %q", t, t.Kind(), path[0])
		}
		f, ok := yamlField(t, path[0])
		if !ok {
			return nil, fmt.Errorf("%s has no key %q", t, path[0])
		}
		t, path = f.Type, path[1:]
	}
	return t, nil
}

// yamlField finds the field of struct t that YAML decodes key into,
// looking into inlined structs.
func yamlField(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if strings.Contains(opts, "inline") {
			if g, ok := yamlField(f.Type, key); ok {
				return g, true
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		if name == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// Expand returns the spec's grid points, the cartesian product of its grid
// keys' values, each a validated spec whose Settings say where it lies; the
// first key varies slowest. A spec without a grid expands to itself. The
// order is the file's: the same file always expands the same way.
func (s *Spec) Expand() ([]*Spec, error) {
	var out []*Spec
	err := s.eachPoint(func(p *Spec) error {
		out = append(out, p)
		return nil
	})
	return out, err
}

// eachPoint calls fn with each grid point in Expand's order, one at a time,
// so that a caller can stop (NewPlan at maxCells) before all are built.
func (s *Spec) eachPoint(fn func(*Spec) error) error {
	if len(s.Grid) == 0 {
		c := *s
		return fn(&c)
	}
	total := 1
	for _, a := range s.Grid {
		total *= len(a.Values)
		if total > maxPoints {
			return fmt.Errorf("grid: more than %d points", maxPoints)
		}
	}
	idx := make([]int, len(s.Grid))
	for range total {
		doc := cloneNode(s.doc)
		settings := make([]Setting, len(s.Grid))
		for i, a := range s.Grid {
			v := cloneNode(a.Values[idx[i]])
			settings[i] = Setting{Key: a.Key, Value: nodeText(v)}
			if a.wrap && v.Kind != yaml.SequenceNode {
				v = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle, Content: []*yaml.Node{v}}
			}
			setPath(doc, strings.Split(a.Key, "."), v)
		}
		data, err := yaml.Marshal(doc)
		if err != nil {
			return fmt.Errorf("grid point %s: %w", Point(settings), err)
		}
		p, err := ParseSpec(data)
		if err != nil {
			return fmt.Errorf("grid point %s: %w", Point(settings), err)
		}
		p.resolve(s.dir)
		p.Settings = settings
		if err := fn(p); err != nil {
			return err
		}
		// the last key varies fastest
		for i := len(idx) - 1; i >= 0; i-- {
			if idx[i]++; idx[i] < len(s.Grid[i].Values) {
				break
			}
			idx[i] = 0
		}
	}
	return nil
}

// maxPoints bounds a grid's size.
const maxPoints = 1 << 16

// nodeText is a value as it reads in YAML, on one line.
func nodeText(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return n.Value
	}
	c := cloneNode(n)
	var style func(*yaml.Node)
	style = func(m *yaml.Node) {
		m.Style = yaml.FlowStyle
		m.HeadComment, m.LineComment, m.FootComment = "", "", ""
		for _, e := range m.Content {
			style(e)
		}
	}
	style(c)
	b, err := yaml.Marshal(c)
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}

// setPath sets the value at a dotted path of the document, making the
// mappings on the way that the file leaves out.
func setPath(doc *yaml.Node, path []string, v *yaml.Node) {
	m := doc
	if m.Kind == yaml.DocumentNode {
		m = m.Content[0]
	}
	for i, key := range path {
		var next *yaml.Node
		for j := 0; j+1 < len(m.Content); j += 2 {
			if m.Content[j].Value == key {
				next = m.Content[j+1]
				if i == len(path)-1 {
					m.Content[j+1] = v
					return
				}
				break
			}
		}
		if i == len(path)-1 {
			m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
			return
		}
		if next == nil || next.Kind != yaml.MappingNode {
			// absent, or null (a section written with no keys)
			n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			if next == nil {
				m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, n)
			} else {
				*next = *n
				n = next
			}
			next = n
		}
		m = next
	}
}

// cloneNode copies a YAML tree (aliases keep pointing into the original,
// which is not changed).
func cloneNode(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, e := range n.Content {
		c.Content[i] = cloneNode(e)
	}
	return &c
}
