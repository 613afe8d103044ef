package sweep

import (
	"fmt"
	"math"
	"reflect"
	"strconv"

	"gopkg.in/yaml.v3"
)

// checkNumbers walks a YAML tree along the Go type it decodes into and
// refuses what the decoder would take silently: a real where the setting is
// a whole number (yaml.v3 truncates eval.seeds: 2.5 to 2) and a NaN or an
// infinity where it is a real (trace.load_factor: .nan passed every check
// and failed later as "json: unsupported value: NaN", naming no key).
// Errors give the line and the dotted key. Keys that name no setting are
// left to the decoder, which reports them.
func checkNumbers(n *yaml.Node, t reflect.Type, key string) error {
	if n == nil {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if err := checkNumbers(c, t, key); err != nil {
				return err
			}
		}
		return nil
	case yaml.AliasNode:
		return checkNumbers(n.Alias, t, key)
	}
	switch t.Kind() {
	case reflect.Struct:
		if t == reflect.TypeOf(yaml.Node{}) || n.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			f, ok := yamlField(t, n.Content[i].Value)
			if !ok {
				continue
			}
			if err := checkNumbers(n.Content[i+1], f.Type, join(key, n.Content[i].Value)); err != nil {
				return err
			}
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := checkNumbers(n.Content[i+1], t.Elem(), join(key, n.Content[i].Value)); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		if n.Kind != yaml.SequenceNode {
			return nil
		}
		for i, c := range n.Content {
			if err := checkNumbers(c, t.Elem(), key+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!float" {
			return fmt.Errorf("line %d: %s = %s: want a whole number", n.Line, key, n.Value)
		}
	case reflect.Float32, reflect.Float64:
		if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!float" {
			var v float64
			if err := n.Decode(&v); err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
				return fmt.Errorf("line %d: %s = %s: want a finite number", n.Line, key, n.Value)
			}
		}
	}
	return nil
}

func join(key, k string) string {
	if key == "" {
		return k
	}
	return key + "." + k
}
