package registry_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/acme/codescan-api/internal/registry"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/reportstore"
	"github.com/acme/codescan-api/shared/routes"
)

// Credentials of FuzzEdge's inputs: each process has its own table, users
// and keys, so inputs name them and the target puts them in.
const (
	keyMark    = "$KEY"    // an admin's API key (every permission)
	otherMark  = "$OTHER"  // another company's admin key
	bearerMark = "$BEARER" // a bearer token of the admin
)

// encodeHeader writes headers as FuzzEdge reads them: one "Name: value"
// line each, in a stable order.
func encodeHeader(h http.Header) string {
	var lines []string
	for k, vs := range h {
		for _, v := range vs {
			lines = append(lines, k+": "+v)
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// eventSeeds are the sample API Gateway events of events/ (one real
// request per route) as FuzzEdge inputs, credentials marked.
func eventSeeds(f *testing.F) (seeds [][3]string, bodies [][]byte) {
	files, err := filepath.Glob("../../events/*.json")
	if err != nil || len(files) == 0 {
		f.Fatalf("events: %v", err)
	}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		var ev struct {
			HTTPMethod        string              `json:"httpMethod"`
			Path              string              `json:"path"`
			MultiValueHeaders map[string][]string `json:"multiValueHeaders"`
			MultiValueQuery   url.Values          `json:"multiValueQueryStringParameters"`
			Body              string              `json:"body"`
			IsBase64Encoded   bool                `json:"isBase64Encoded"`
		}
		if err := json.Unmarshal(raw, &ev); err != nil {
			f.Fatalf("%s: %v", file, err)
		}
		h := http.Header{}
		for k, vs := range ev.MultiValueHeaders {
			for _, v := range vs {
				if strings.EqualFold(k, auth.APIKeyHeader) {
					v = keyMark
				}
				if strings.EqualFold(k, "Authorization") {
					v = "Bearer " + bearerMark
				}
				h.Add(k, v)
			}
		}
		target := strings.TrimPrefix(ev.Path, routes.BasePath)
		if strings.HasPrefix(target, "/verify/") { // the legacy route's key is in its path
			target = "/verify/" + keyMark
		}
		if len(ev.MultiValueQuery) > 0 {
			target += "?" + ev.MultiValueQuery.Encode()
		}
		body := []byte(ev.Body)
		if ev.IsBase64Encoded {
			if body, err = base64.StdEncoding.DecodeString(ev.Body); err != nil {
				f.Fatalf("%s: %v", file, err)
			}
		}
		seeds = append(seeds, [3]string{ev.HTTPMethod, target, encodeHeader(h)})
		bodies = append(bodies, body)
	}
	return seeds, bodies
}

// countingWriter counts what the log receives.
type countingWriter struct{ n atomic.Int64 }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n.Add(int64(len(p)))
	return len(p), nil
}

// execReports is the report bucket reached through the running input's
// *testing.T: testenv's lazy bucket must not be given the *testing.F
// inside the fuzz function.
type execReports struct{ t *atomic.Pointer[testing.T] }

func (r execReports) bucket() reportstore.Store { return testenv.Reports(r.t.Load()) }
func (r execReports) Put(ctx context.Context, key string, body []byte) error {
	return r.bucket().Put(ctx, key, body)
}
func (r execReports) Get(ctx context.Context, key string, limit int64) ([]byte, error) {
	return r.bucket().Get(ctx, key, limit)
}
func (r execReports) List(ctx context.Context, prefix string) ([]reportstore.Object, error) {
	return r.bucket().List(ctx, prefix)
}

// FuzzEdge sends any method, path and query (under /api/v1), headers
// ("Name: value" lines, $KEY, $OTHER and $BEARER standing for real
// credentials) and body to the whole API, every group mounted as the dev
// server does, on DynamoDB Local. No answer is a 5xx; every answer but a
// report's is JSON; a 4xx is a JSON object carrying its message (the
// route's error form or a body the spec fixes); one request adds less
// than 8 KiB to the log. Seeds: the sample events of every route
// (events/), per route a plain request and a hostile one in the manner of
// the hostile-input table, and edited page tokens for every token-paged
// list.
//
// No input reaches the network: the only outbound calls (a webhook's test
// or redelivery, an integration's verification) need an endpoint or
// integration whose random uuid no input can know.
func FuzzEdge(f *testing.F) {
	env := testenv.New(f)
	acme := env.Company(f, "Acme")
	admin := env.User(f, acme, testenv.UserSpec{Email: "root@acme.test", IsAdmin: true, Permissions: routes.AllPermissions})
	other := env.Company(f, "Globex")
	marks := strings.NewReplacer(keyMark, admin.APIKey, otherMark, other.Admin.APIKey, bearerMark, env.Token(f, admin))
	var logged countingWriter
	var current atomic.Pointer[testing.T]
	deps := env.Deps
	deps.Server = &httpapi.Server{Auth: env.Deps.Server.Auth, Log: slog.New(slog.NewJSONHandler(&logged, nil))}
	deps.Reports = execReports{&current}
	mux := registry.Mux(deps)

	seeds, bodies := eventSeeds(f)
	for i, s := range seeds {
		f.Add(s[0], s[1], s[2], bodies[i])
	}
	for i, rt := range routes.Table {
		for _, c := range edgeSeeds(i, rt) {
			f.Add(rt.Method, c.target, encodeHeader(c.header), c.body)
		}
	}
	for _, q := range []string{"page_token=eyJQSyI6IkMjMSJ9", "next_page_token=eyJQSyI6IkMjMSJ9", "page_token=e30&page=2", "next_page_token=x.y"} {
		for _, p := range []string{"/projects", "/policies", "/blocking-rules", "/scans", "/users", "/api-keys", "/audit-log", "/webhooks", "/teams", "/integrations/scm-provider"} {
			f.Add("GET", p+"?"+q, auth.APIKeyHeader+": "+keyMark, []byte(nil))
		}
	}

	f.Fuzz(func(t *testing.T, method, target, header string, body []byte) {
		current.Store(t)
		req, err := http.NewRequest(method, "http://127.0.0.1"+routes.BasePath+marks.Replace(target), bytes.NewReader(body))
		if err != nil {
			return // not a request HTTP can carry
		}
		for _, line := range strings.Split(header, "\n") {
			name, value, ok := strings.Cut(line, ":")
			name = strings.TrimSpace(name)
			if !ok || !headerName(name) {
				continue
			}
			req.Header.Add(name, marks.Replace(strings.TrimPrefix(value, " ")))
		}
		before := logged.n.Load()
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		res := &testenv.Response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
		show := func() string {
			return method + " " + target + "\n" + header + "\n\n" + clip(string(body)) + "\n=> " + clip(string(res.Body))
		}
		if res.Status >= 500 {
			t.Fatalf("%d answered to\n%s", res.Status, show())
		}
		report := res.Status < 300 && strings.HasSuffix(req.URL.Path, "/report")
		if ct := res.Header.Get("Content-Type"); !report && (!strings.HasPrefix(ct, "application/json") || !json.Valid(res.Body)) {
			t.Fatalf("%d with Content-Type %q, not JSON, answered to\n%s", res.Status, ct, show())
		}
		if res.Status >= 400 {
			var m map[string]any
			if json.Unmarshal(res.Body, &m) != nil || !slices.ContainsFunc([]string{"error", "message", "status"}, func(k string) bool {
				s, ok := m[k].(string)
				return ok && s != ""
			}) {
				t.Fatalf("%d without an error message answered to\n%s", res.Status, show())
			}
		}
		if grew := logged.n.Load() - before; grew >= 8<<10 {
			t.Fatalf("the log grew by %d bytes for\n%s", grew, show())
		}
	})
}

// headerName tells whether s can be a header name (an HTTP token).
func headerName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

func clip(s string) string {
	if len(s) > 500 {
		return s[:500] + "…"
	}
	return s
}

// edgeSeeds are requests to the i-th route: a plain one, and one hostile
// one, in turn with a malformed path parameter (where the route has one),
// an unbounded query value, two credentials, an unknown Content-Encoding.
func edgeSeeds(i int, rt routes.Route) []hostileCase {
	key := http.Header{auth.APIKeyHeader: {keyMark}}
	var body []byte
	if hasBody(rt) {
		body = []byte("{}")
	}
	plain := hostileCase{target: basePath(rt, nil), header: key, body: body}
	hostile := []hostileCase{
		{target: withQuery(basePath(rt, nil), "zz="+strings.Repeat("z", routes.MaxQueryValueBytes+1)), header: key, body: body},
		{target: basePath(rt, nil), header: http.Header{auth.APIKeyHeader: {otherMark, keyMark}}, body: body},
		{target: basePath(rt, nil), header: http.Header{auth.APIKeyHeader: {keyMark}, "Content-Encoding": {"br"}}, body: body},
	}
	for _, n := range rt.PathParams() {
		p, _ := rt.Declared(n)
		bad := strings.Repeat("7", p.Limit()+1)
		switch p.Kind {
		case routes.ID:
			bad = badIDs[i%len(badIDs)]
		case routes.UUID:
			bad = badUUIDs[i%len(badUUIDs)]
		}
		hostile = append(hostile, hostileCase{target: basePath(rt, map[string]string{n: bad}), header: key, body: body})
	}
	return []hostileCase{plain, hostile[i%len(hostile)]}
}
