package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	extenderv1 "k8s.io/kube-scheduler/extender/v1"
)

// decodeBoth decodes body with readArgs and with encoding/json.
func decodeBoth(t testing.TB, body []byte, max int) (mine, std extenderv1.ExtenderArgs, errMine, errStd error) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	errMine = readArgs(dec, max, &mine)
	errStd = json.Unmarshal(body, &std)
	return
}

// TestDecodeMatchesEncodingJSON: the bounded decoder (decode.go) reads
// every well-formed ExtenderArgs as encoding/json does: keys in any case,
// unknown keys skipped, null lists, NodeNames, a NodeList's metadata.
func TestDecodeMatchesEncodingJSON(t *testing.T) {
	pod := mkPod("p").container("1", "1Gi", "", "").obj()
	full, err := json.Marshal(args(pod, mkNode("n1", "4", "8Gi").zone("a").obj(), mkNode("n2", "2", "4Gi").taint("k", "v", "NoSchedule").obj()))
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{
		string(full),
		`{"pod": {"metadata": {"name": "p"}}, "nodes": {"kind": "NodeList", "apiVersion": "v1", "metadata": {"resourceVersion": "7"}, "items": [{"metadata": {"name": "a"}}]}}`,
		`{"POD": null, "NodeNames": ["a", "b"], "extra": {"x": [1, 2, {"y": null}]}}`,
		`{"Pod": {}, "Nodes": null, "NodeNames": null}`,
		`{"Pod": {}, "Nodes": {"items": null}}`,
		`{"Pod": {}, "Nodes": {"items": []}, "NodeNames": []}`,
		`{}`,
	} {
		mine, std, em, es := decodeBoth(t, []byte(body), 100)
		if em != nil || es != nil {
			t.Errorf("%s: errors %v and %v; want none", body, em, es)
			continue
		}
		a, _ := json.Marshal(mine)
		b, _ := json.Marshal(std)
		if !bytes.Equal(a, b) {
			t.Errorf("%s:\nbounded  %s\nstandard %s", body, a, b)
		}
	}
}

// FuzzDecodeArgs: the bounded decoder never panics, never returns more
// nodes than its limit, and what both it and encoding/json accept in one
// piece (no repeated key) reads the same. Seeds: issue 28's requests (a
// list over the limit, a name twice, a body cut short).
func FuzzDecodeArgs(f *testing.F) {
	pod, _ := json.Marshal(mkPod("p").container("1", "1Gi", "", "").obj())
	for _, s := range []string{
		`{"Pod":` + string(pod) + `,"Nodes":{"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}},{"metadata":{"name":"c"}},{"metadata":{"name":"d"}}]}}`,
		`{"Pod":` + string(pod) + `,"Nodes":{"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"a"}}]}}`,
		`{"Pod":` + string(pod) + `,"NodeNames":["a","b","c","d","e"]}`,
		`{"Pod": {"metadata": {"na`,
		`{"Pod": 3}`, `[]`, `null`, `{"Nodes": {"items": [1]}}`, `{"NodeNames": "a"}`,
	} {
		f.Add([]byte(s))
	}
	const max = 3
	f.Fuzz(func(t *testing.T, body []byte) {
		mine, std, em, es := decodeBoth(t, body, max)
		if em != nil {
			if ie, ok := errors.AsType[*InputError](em); ok && ie.Status == 413 && !strings.Contains(ie.Msg, "more than 3 nodes") {
				t.Fatalf("413 without the limit: %v", ie)
			}
			return
		}
		if mine.Nodes != nil && len(mine.Nodes.Items) > max || mine.NodeNames != nil && len(*mine.NodeNames) > max {
			t.Fatalf("more than %d nodes decoded", max)
		}
		if es != nil || bytes.Count(body, []byte(`"`)) > 200 {
			return
		}
		a, _ := json.Marshal(mine)
		b, _ := json.Marshal(std)
		if !bytes.Equal(a, b) && !repeatsKey(body) {
			t.Fatalf("%s:\nbounded  %s\nstandard %s", body, a, b)
		}
	})
}

// repeatsKey reports whether a JSON text has an object with a key given
// twice (case folded), where encoding/json merges the values and the
// bounded decoder keeps the last.
func repeatsKey(body []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	var stack []map[string]bool
	expectKey := []bool{}
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, map[string]bool{})
				expectKey = append(expectKey, true)
			case '[':
				stack = append(stack, nil)
				expectKey = append(expectKey, false)
			default:
				stack, expectKey = stack[:len(stack)-1], expectKey[:len(expectKey)-1]
				if len(expectKey) > 0 && stack[len(stack)-1] != nil {
					expectKey[len(expectKey)-1] = true
				}
				continue
			}
			continue
		case string:
			if n := len(stack); n > 0 && stack[n-1] != nil && expectKey[n-1] {
				k := strings.ToLower(v)
				if stack[n-1][k] {
					return true
				}
				stack[n-1][k] = true
				expectKey[n-1] = false
				continue
			}
		}
		if n := len(stack); n > 0 && stack[n-1] != nil {
			expectKey[n-1] = true
		}
	}
}
