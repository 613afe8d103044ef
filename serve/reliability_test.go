package serve

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"

	extenderv1 "k8s.io/kube-scheduler/extender/v1"
)

// Tests of issue 28 in serve, one per defect, named after it.

// endlessNodes is a request body that never ends: the ExtenderArgs head,
// then name-only nodes (or names) for ever. It counts the bytes read.
type endlessNodes struct {
	names bool // NodeNames, not Nodes
	i     int
	buf   []byte
	read  int64
}

func newEndlessNodes(t *testing.T, key string) *endlessNodes {
	pod, err := json.Marshal(mkPod("p").container("1", "1Gi", "", "").obj())
	if err != nil {
		t.Fatal(err)
	}
	head := `{"Pod":` + string(pod) + `,"Nodes":{"items":[`
	if key == "NodeNames" {
		head = `{"Pod":` + string(pod) + `,"NodeNames":[`
	}
	return &endlessNodes{names: key == "NodeNames", buf: []byte(head)}
}

func (e *endlessNodes) Read(p []byte) (int, error) {
	if len(e.buf) == 0 {
		e.i++
		el := `{"metadata":{"name":"n` + strconv.Itoa(e.i) + `"}}`
		if e.names {
			el = `"n` + strconv.Itoa(e.i) + `"`
		}
		if e.i > 1 {
			el = "," + el
		}
		e.buf = []byte(el)
	}
	n := copy(p, e.buf)
	e.buf = e.buf[n:]
	e.read += int64(n)
	return n, nil
}

// TestTooManyNodesRefusedWhileDecoding (issue 28, defect 9): a 30 MB body
// of 950,000 name-only nodes (under the 32 MiB limit) took the server to
// 5 GB before it failed. Node lists are now counted as they are decoded:
// a body of endless nodes gets 413 naming --max-nodes after reading about
// MaxRequestNodes nodes, on every verb and list, and never reads the rest.
func TestTooManyNodesRefusedWhileDecoding(t *testing.T) {
	s := newTestServer(t, Config{MaxRequestNodes: 100, MaxBody: 1 << 40}, prefer(0))
	for _, tc := range []struct{ path, key, field string }{
		{"/prioritize", "Nodes", "nodes.items"},
		{"/filter", "NodeNames", "nodeNames"},
	} {
		t.Run(tc.path+" "+tc.key, func(t *testing.T) {
			body := newEndlessNodes(t, tc.key)
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, tc.path, body))
			if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.Body.String(), tc.field+": more than 100 nodes") {
				t.Fatalf("status %d, %s; want 413 naming %s and the limit", rec.Code, rec.Body, tc.field)
			}
			// 101 nodes of under 40 bytes, the pod and the decoder's
			// read-ahead (a few KiB): far from the 1 TiB limit
			if body.read > 64<<10 {
				t.Errorf("read %d bytes; want the decoder stopped at the 101st node", body.read)
			}
		})
	}
	// POST /nodes, a NodeList: 101 nodes is one too many
	var items []string
	for i := range 101 {
		items = append(items, `{"metadata":{"name":"n`+strconv.Itoa(i)+`"}}`)
	}
	code, body := post(t, s, "/nodes", []byte(`{"items":[`+strings.Join(items, ",")+`]}`))
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), "items: more than 100 nodes") {
		t.Errorf("POST /nodes of 101 nodes: %d %s; want 413", code, body)
	}
	// 100 are fine
	code, body = post(t, s, "/nodes", []byte(`{"items":[`+strings.Join(items[:100], ",")+`]}`))
	if code == http.StatusRequestEntityTooLarge {
		t.Errorf("POST /nodes of 100 nodes: %d %s; want them decoded", code, body)
	}
}

// blockingBody blocks its first Read until release is closed.
type blockingBody struct {
	started chan struct{}
	release chan struct{}
}

func (b *blockingBody) Read([]byte) (int, error) {
	close(b.started)
	<-b.release
	return 0, io.ErrUnexpectedEOF
}

// TestConcurrentDecodesBounded (issue 28, defect 9): three 30 MB bodies at
// once reached 9.3 GB. At most MaxDecodes bodies are decoded at once; a
// request that waits for a slot and whose client goes away is answered
// 499, not decoded.
func TestConcurrentDecodesBounded(t *testing.T) {
	s := newTestServer(t, Config{MaxDecodes: 1}, prefer(0))
	held := &blockingBody{started: make(chan struct{}), release: make(chan struct{})}
	done := make(chan int)
	go func() {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/prioritize", held))
		done <- rec.Code
	}()
	<-held.started // the first request holds the only slot
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // its client has gone
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/prioritize", strings.NewReader("{}")).WithContext(ctx))
	if rec.Code != StatusClientClosed {
		t.Errorf("second request with no slot and no client: %d %s; want %d", rec.Code, rec.Body, StatusClientClosed)
	}
	if len(s.decodes) != 1 {
		t.Errorf("%d decodes in progress; want 1 (the first request)", len(s.decodes))
	}
	close(held.release)
	<-done
	for len(s.decodes) != 0 {
		runtime.Gosched() // the slot is released when the handler returns
	}
}

// TestDuplicateNodeNamesRefused (issue 28, defect 13): a request naming one
// node twice got two scores for one name, and filter listed it as passed
// and as failed. It is now a 400 naming the second occurrence.
func TestDuplicateNodeNamesRefused(t *testing.T) {
	s := newTestServer(t, Config{}, prefer(0))
	pod := mkPod("p").container("1", "1Gi", "", "").obj()
	n1, n2 := mkNode("n1", "4", "8Gi").obj(), mkNode("n2", "4", "8Gi").obj()
	for _, verb := range []string{"/filter", "/prioritize"} {
		code, body := post(t, s, verb, args(pod, n1, n2, n1))
		if code != http.StatusBadRequest || !strings.Contains(string(body), `nodes.items[2].metadata.name: \"n1\" given twice (also at index 0)`) {
			t.Errorf("%s with n1 twice: %d %s; want 400 naming items[2]", verb, code, body)
		}
	}
	post(t, s, "/nodes", map[string]any{"items": []any{n1, n2}})
	code, body := post(t, s, "/filter", extenderv1.ExtenderArgs{Pod: pod, NodeNames: &[]string{"n1", "n2", "n2"}})
	if code != http.StatusBadRequest || !strings.Contains(string(body), "nodeNames[2]") {
		t.Errorf("NodeNames with n2 twice: %d %s; want 400 naming nodeNames[2]", code, body)
	}
}

// TestNegativeLimitsRefused (issue 28, defect 14): negative sizes and
// counts were taken as "use the default". New refuses them (the command
// line exits 2: TestServeNegativeFlagsExit2 in cmd/kubesim).
func TestNegativeLimitsRefused(t *testing.T) {
	for _, cfg := range []Config{{MaxBody: -1}, {Workers: -3}, {MaxRequestNodes: -1}, {MaxDecodes: -2}, {MaxNodes: -5}} {
		if _, err := New(cfg, prefer(0)); err == nil || !strings.Contains(err.Error(), "must not be negative") {
			t.Errorf("New(%+v): %v; want an error", cfg, err)
		}
	}
}

// abortedBody sends part of a body, then fails as a closed connection does.
type abortedBody struct{ sent bool }

func (a *abortedBody) Read(p []byte) (int, error) {
	if a.sent {
		return 0, io.ErrUnexpectedEOF
	}
	a.sent = true
	return copy(p, `{"Pod": {"metadata": {"na`), nil
}

// TestClientAbortNotCountedAsBadInput (issue 28, defect 17): a client that
// gave up mid-request was counted as errors_total{code="400"}, bad input.
// It is now counted under 499 (client closed request); a body that is
// complete but malformed is still a 400.
func TestClientAbortNotCountedAsBadInput(t *testing.T) {
	s := newTestServer(t, Config{}, prefer(0))
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/prioritize", &abortedBody{}))
	if rec.Code != StatusClientClosed {
		t.Errorf("aborted body: status %d; want %d", rec.Code, StatusClientClosed)
	}
	post(t, s, "/prioritize", []byte(`{"Pod": {"metadata": {"na`)) // the same bytes, complete: bad input
	m := metricsText(t, s)
	for _, want := range []string{
		`kubesim_serve_errors_total{code="499",verb="prioritize"} 1`,
		`kubesim_serve_errors_total{code="400",verb="prioritize"} 1`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s:\n%s", want, grepLines(m, "errors_total"))
		}
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
