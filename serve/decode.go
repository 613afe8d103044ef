package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	corev1 "k8s.io/api/core/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
)

// Request decoding, bounded before allocation: a body is read through a
// MaxBytesReader (Config.MaxBody), at most Config.MaxDecodes bodies are
// decoded at once, and the node lists (Nodes.Items, NodeNames, a NodeList's
// Items) are decoded one node at a time, counted as they come: the
// (MaxRequestNodes+1)-th node fails the request with 413 before it is
// decoded. The old decoder built the whole list first, so a 30 MB body of
// 950,000 name-only nodes (under the 32 MiB limit) took the server to 5 GB
// before the request failed.

// StatusClientClosed is the status (nginx's 499) under which
// kubesim_serve_errors_total counts requests whose client went away before
// its body was read: not bad input (400), not the server's fault (500).
const StatusClientClosed = 499

// decode reads a JSON body into v: an *extenderv1.ExtenderArgs or a
// *corev1.NodeList with their node lists bounded, anything else whole.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) error {
	select {
	case s.decodes <- struct{}{}:
		defer func() { <-s.decodes }()
	case <-r.Context().Done():
		return clientClosed(r.Context().Err())
	}
	body := &bodyReader{r: http.MaxBytesReader(w, r.Body, s.cfg.MaxBody)}
	dec := json.NewDecoder(body)
	var err error
	switch v := v.(type) {
	case *extenderv1.ExtenderArgs:
		err = readArgs(dec, s.cfg.MaxRequestNodes, v)
	case *corev1.NodeList:
		err = readNodeList(dec, s.cfg.MaxRequestNodes, "", v)
	default:
		err = dec.Decode(v)
	}
	if err == nil && dec.More() {
		err = errors.New("data after the JSON value")
	}
	if err == nil {
		return nil
	}
	if mb, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return &InputError{Status: http.StatusRequestEntityTooLarge, Field: "body", Msg: fmt.Sprintf("larger than the limit of %d bytes", mb.Limit)}
	}
	if ie, ok := errors.AsType[*InputError](err); ok {
		return ie
	}
	if body.err != nil || r.Context().Err() != nil {
		// the connection failed or closed inside the body: the client
		// gave up, the JSON itself may be fine
		return clientClosed(err)
	}
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		return badf(te.Field, "malformed JSON: %v", err)
	}
	if errors.Is(err, io.EOF) {
		return badf("body", "empty")
	}
	return badf("body", "malformed JSON: %v", err)
}

func clientClosed(err error) *InputError {
	return &InputError{Status: StatusClientClosed, Field: "body", Msg: fmt.Sprintf("the client closed the request: %v", err)}
}

// bodyReader remembers a read error other than io.EOF: the transport's
// (a connection reset, a body shorter than its Content-Length), which
// tells a client that gave up from a malformed body.
type bodyReader struct {
	r   io.Reader
	err error
}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF && b.err == nil {
		b.err = err
	}
	return n, err
}

// readArgs decodes ExtenderArgs as encoding/json would (keys matched
// without regard to case, unknown keys skipped, the last of a repeated key
// wins), with Nodes.Items and NodeNames bounded by max.
func readArgs(dec *json.Decoder, max int, args *extenderv1.ExtenderArgs) error {
	null, err := readObject(dec, "", func(key string) error {
		switch {
		case strings.EqualFold(key, "Pod"):
			var p *corev1.Pod
			if err := dec.Decode(&p); err != nil {
				return fieldError("Pod", err)
			}
			args.Pod = p
		case strings.EqualFold(key, "Nodes"):
			var l corev1.NodeList
			null, err := readNodeListOrNull(dec, max, "nodes", &l)
			if err != nil {
				return err
			}
			args.Nodes = nil
			if !null {
				args.Nodes = &l
			}
		case strings.EqualFold(key, "NodeNames"):
			names, err := readNames(dec, max)
			if err != nil {
				return err
			}
			args.NodeNames = names
		default:
			var skip json.RawMessage
			return dec.Decode(&skip)
		}
		return nil
	})
	if null && err == nil {
		return badf("body", "null, want ExtenderArgs")
	}
	return err
}

// readNodeList decodes a NodeList whose Items are bounded by max; field
// prefixes the names in errors ("" for a body that is the list).
func readNodeList(dec *json.Decoder, max int, field string, l *corev1.NodeList) error {
	null, err := readNodeListOrNull(dec, max, field, l)
	if null && err == nil {
		return badf("body", "null, want a NodeList")
	}
	return err
}

func readNodeListOrNull(dec *json.Decoder, max int, field string, l *corev1.NodeList) (bool, error) {
	items := join(field, "items")
	return readObject(dec, field, func(key string) error {
		switch {
		case strings.EqualFold(key, "items"):
			l.Items = []corev1.Node{}
			null := false
			err := readArrayOrNull(dec, items, &null, func(i int) error {
				if i >= max {
					return tooMany(items, max)
				}
				l.Items = append(l.Items, corev1.Node{})
				if err := dec.Decode(&l.Items[i]); err != nil {
					return fieldError(fmt.Sprintf("%s[%d]", items, i), err)
				}
				return nil
			})
			if null {
				l.Items = nil
			}
			return err
		case strings.EqualFold(key, "metadata"):
			return fieldError(join(field, "metadata"), dec.Decode(&l.ListMeta))
		case strings.EqualFold(key, "kind"):
			return fieldError(join(field, "kind"), dec.Decode(&l.Kind))
		case strings.EqualFold(key, "apiVersion"):
			return fieldError(join(field, "apiVersion"), dec.Decode(&l.APIVersion))
		default:
			var skip json.RawMessage
			return dec.Decode(&skip)
		}
	})
}

// readNames decodes NodeNames (null: nil), at most max of them.
func readNames(dec *json.Decoder, max int) (*[]string, error) {
	names := []string{}
	null := false
	err := readArrayOrNull(dec, "nodeNames", &null, func(i int) error {
		if i >= max {
			return tooMany("nodeNames", max)
		}
		var n string
		if err := dec.Decode(&n); err != nil {
			return fieldError(fmt.Sprintf("nodeNames[%d]", i), err)
		}
		names = append(names, n)
		return nil
	})
	if err != nil || null {
		return nil, err
	}
	return &names, nil
}

func tooMany(field string, max int) *InputError {
	return &InputError{Status: http.StatusRequestEntityTooLarge, Field: field,
		Msg: fmt.Sprintf("more than %d nodes (serve --max-nodes)", max)}
}

// readObject reads a JSON object (or null, reported as true) and calls fn
// with each key, fn reading its value.
func readObject(dec *json.Decoder, field string, fn func(key string) error) (bool, error) {
	tok, err := dec.Token()
	if err != nil {
		return false, err
	}
	switch tok {
	case nil:
		return true, nil
	case json.Delim('{'):
	default:
		return false, typeError(field, tok, "an object")
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return false, err
		}
		key, _ := k.(string)
		if err := fn(key); err != nil {
			return false, err
		}
	}
	_, err = dec.Token() // '}'
	return false, err
}

// readArrayOrNull reads a JSON array (or null, reported in null) and calls
// fn for each element, fn reading it.
func readArrayOrNull(dec *json.Decoder, field string, null *bool, fn func(i int) error) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case nil:
		*null = true
		return nil
	case json.Delim('['):
	default:
		return typeError(field, tok, "an array")
	}
	for i := 0; dec.More(); i++ {
		if err := fn(i); err != nil {
			return err
		}
	}
	_, err = dec.Token() // ']'
	return err
}

func typeError(field string, tok json.Token, want string) *InputError {
	if field == "" {
		field = "body"
	}
	return badf(field, "malformed JSON: want %s, got %v", want, tok)
}

// fieldError names field in a type error of a value decoded whole
// (nil stays nil; other errors pass unchanged).
func fieldError(field string, err error) error {
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		return badf(join(field, te.Field), "malformed JSON: %v", err)
	}
	return err
}

func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "." + b
}

// checkUniqueNames refuses a request that names one node twice: the answer
// would hold two scores for one name, and filter would list it as passed
// and as failed.
func checkUniqueNames(names []string, byName bool) error {
	seen := make(map[string]int, len(names))
	for i, n := range names {
		if j, dup := seen[n]; dup {
			field := fmt.Sprintf("nodes.items[%d].metadata.name", i)
			if byName {
				field = fmt.Sprintf("nodeNames[%d]", i)
			}
			return badf(field, "%q given twice (also at index %d)", n, j)
		}
		seen[n] = i
	}
	return nil
}

// Validate refuses impossible settings: a negative size, count or
// duration (zero takes the default).
func (c Config) Validate() error {
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"max body", c.MaxBody}, {"workers", int64(c.Workers)}, {"max nodes", int64(c.MaxNodes)},
		{"max request nodes", int64(c.MaxRequestNodes)}, {"max decodes", int64(c.MaxDecodes)},
		{"max assumed", int64(c.MaxAssumed)}, {"latency budget", int64(c.Budget)}, {"assume TTL", int64(c.AssumeTTL)},
	} {
		if f.v < 0 {
			return fmt.Errorf("serve: %s %d: must not be negative (0 takes the default)", f.name, f.v)
		}
	}
	return nil
}
