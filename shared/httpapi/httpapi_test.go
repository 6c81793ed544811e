package httpapi

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/store/ddb"
)

func newServer(logs *bytes.Buffer) *Server {
	return &Server{Log: slog.New(slog.NewJSONHandler(logs, nil))}
}

func TestErrorsNeverLeakInternals(t *testing.T) {
	var logs bytes.Buffer
	s := newServer(&logs)
	cases := []struct {
		name   string
		h      HandlerFunc
		status int
		body   string
	}{
		{"api error", func(http.ResponseWriter, *http.Request) error { return Errorf(409, "Team name taken") }, 409, `{"error":"Team name taken"}`},
		{"upload error", func(http.ResponseWriter, *http.Request) error { return UploadError(KindInvalid, "bad %s", "sarif") }, 400, `{"message":"bad sarif","status":"error"}`},
		{"internal", func(http.ResponseWriter, *http.Request) error {
			return errors.New("dynamodb: table secret-table not found")
		}, 500, `{"error":"Internal server error"}`},
		{"panic", func(http.ResponseWriter, *http.Request) error { panic("boom at secret-place") }, 500, `{"error":"Internal server error"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			s.serve(routes.Route{Method: "GET", Path: "/x", Access: routes.Public}, c.h).ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil))
			if rec.Code != c.status || strings.TrimSpace(rec.Body.String()) != c.body {
				t.Fatalf("got %d %s", rec.Code, rec.Body)
			}
			if rec.Header().Get("Content-Type") != "application/json" || rec.Header().Get(RequestIDHeader) == "" {
				t.Fatalf("headers %v", rec.Header())
			}
		})
	}
	if !strings.Contains(logs.String(), "secret-table") || !strings.Contains(logs.String(), "boom at secret-place") {
		t.Fatalf("internal details must be logged for operators: %s", logs.String())
	}
	if n := strings.Count(logs.String(), `"msg":"request"`); n != len(cases) {
		t.Fatalf("%d access log lines, want %d", n, len(cases))
	}
}

func TestRouterAnswersJSONForUnknownRoutes(t *testing.T) {
	var logs bytes.Buffer
	h := Router(map[string]http.Handler{
		"GET /api/v1/things/{id}": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_ = WriteJSON(w, 200, map[string]string{"id": r.PathValue("id")})
		}),
		"POST /api/v1/code-upload": http.NotFoundHandler(),
	}, slog.New(slog.NewJSONHandler(&logs, nil)))
	cases := []struct {
		method, path string
		status       int
		body         string
	}{
		{"GET", "/api/v1/things/7", 200, `{"id":"7"}`},
		{"POST", "/api/v1/things/7", 405, `{"error":"Method not allowed"}`},
		{"GET", "/api/v1/nothing", 404, `{"error":"Route not found"}`},
		// A wrong method answers in the error form of the path's routes.
		{"GET", "/api/v1/code-upload", 405, `{"message":"Method not allowed","status":"error"}`},
	}
	for _, c := range cases {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, nil))
		if rec.Code != c.status || strings.TrimSpace(rec.Body.String()) != c.body || rec.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%s %s: %d %s", c.method, c.path, rec.Code, rec.Body)
		}
		if c.status != 200 && rec.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s %s: X-Content-Type-Options %q", c.method, c.path, rec.Header().Get("X-Content-Type-Options"))
		}
	}
	if !strings.Contains(logs.String(), `"status":405`) || !strings.Contains(logs.String(), `"status":404`) {
		t.Fatalf("unmatched requests must be logged: %s", logs.String())
	}
}

func TestParsePaging(t *testing.T) {
	ok := map[string]Paging{
		"":                               {Page: 1, PageSize: 20},
		"page=3&page_size=100":           {Page: 3, PageSize: 100},
		"page=%201%20&page_size=1":       {Page: 1, PageSize: 1},
		"unknown=1":                      {Page: 1, PageSize: 20},
		"next_page_token=abc.def":        {Page: 1, PageSize: 20, Token: "abc.def"},
		"page_token=abc.def":             {Page: 1, PageSize: 20, Token: "abc.def"},
		"page_token=a&next_page_token=a": {Page: 1, PageSize: 20, Token: "a"},
	}
	for q, want := range ok {
		got, err := ParsePaging(httptest.NewRequest("GET", "/?"+q, nil), 20, 100)
		if err != nil || got != want {
			t.Errorf("%q: %+v %v, want %+v", q, got, err, want)
		}
	}
	for _, q := range []string{"page=0", "page=-1", "page=x", "page=1.5", "page_size=0", "page_size=101", "page_size=-5", "page=99999999999999999999", "page_token=a&next_page_token=b"} {
		if _, err := ParsePaging(httptest.NewRequest("GET", "/?"+q, nil), 20, 100); err == nil {
			t.Errorf("%q accepted", q)
		} else if e := (*Error)(nil); !errors.As(err, &e) || e.Status != 400 {
			t.Errorf("%q: %v, want a 400", q, err)
		}
	}
	if p := (Paging{Page: 2, PageSize: 20}); p.Offset() != 20 || p.TotalPages(41) != 3 || p.TotalPages(0) != 0 {
		t.Fatalf("offset/total pages: %d %d", p.Offset(), p.TotalPages(41))
	}
	rows := []int{1, 2, 3, 4, 5}
	for _, c := range []struct {
		p    Paging
		want string
	}{{Paging{Page: 1, PageSize: 2}, "[1 2]"}, {Paging{Page: 3, PageSize: 2}, "[5]"}, {Paging{Page: 4, PageSize: 2}, "[]"}, {Paging{Page: 1, PageSize: 10}, "[1 2 3 4 5]"}} {
		got := Slice(c.p, rows)
		if fmt.Sprint(got.Items) != c.want || got.Offset != c.p.Offset() || got.Next != "" || got.Count() != 5 {
			t.Errorf("Slice(%+v) = %+v, want %s at %d of 5", c.p, got, c.want, c.p.Offset())
		}
	}
}

func TestDecodeJSON(t *testing.T) {
	type body struct {
		Name string   `json:"name"`
		IDs  []int64  `json:"ids"`
		Tags []string `json:"tags"`
	}
	cases := map[string]string{
		`{"name":"a","ids":[1]}`: "",
		`{"name":1}`:             `{"error":"Field \"name\" must be of type string"}`,
		`{"ids":"x"}`:            `{"error":"Field \"ids\" must be of type array"}`,
		`{"nope":1}`:             `{"error":"Unknown field \"nope\""}`,
		`[]`:                     `{"error":"Invalid JSON body"}`,
		`{"name":`:               `{"error":"Invalid JSON body"}`,
		``:                       `{"error":"Invalid JSON body"}`,
	}
	for in, want := range cases {
		var b body
		err := DecodeJSON(httptest.NewRequest("POST", "/", strings.NewReader(in)), &b)
		got := ""
		if e := (*Error)(nil); errors.As(err, &e) {
			rec := httptest.NewRecorder()
			_ = WriteJSON(rec, e.Status, errorBody(e, routes.ErrorField))
			got = strings.TrimSpace(rec.Body.String())
		} else if err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("%q: got %s, want %s", in, got, want)
		}
	}
	big := `{"name":"` + strings.Repeat("a", MaxBodyBytes) + `"}`
	var b body
	if e := (*Error)(nil); !errors.As(DecodeJSON(httptest.NewRequest("POST", "/", strings.NewReader(big)), &b), &e) || e.Status != 413 {
		t.Fatal("oversized body must be 413")
	}
}

// Whatever refuses a request (the edge, the handler, a failure), the
// answer is in the route's one error form and carries nosniff.
func TestEveryErrorInTheRoutesForm(t *testing.T) {
	var logs bytes.Buffer
	s := newServer(&logs)
	gate := `{"inactive_slugs":[],"message":"%s","non_ci_slugs":[],"unknown_slugs":[]}`
	cases := []struct {
		name    string
		form    routes.ErrorForm
		h       HandlerFunc
		header  http.Header
		status  int
		message string
	}{
		{"handler", routes.StatusMessage, func(http.ResponseWriter, *http.Request) error { return Errorf(404, "Run not found") }, nil, 404, "Run not found"},
		{"internal", routes.StatusMessage, func(http.ResponseWriter, *http.Request) error { return errors.New("secret") }, nil, 500, "Internal server error"},
		{"unavailable", routes.StatusMessage, func(http.ResponseWriter, *http.Request) error { return ddb.ErrUnavailable }, nil, 503, "Service temporarily unavailable; retry later"},
		{"encoding", routes.StatusMessage, nil, http.Header{"Content-Encoding": {"br"}}, 415, "Unsupported Content-Encoding (use gzip or identity)"},
		{"credentials", routes.StatusMessage, nil, http.Header{"Authorization": {"a", "b"}}, 400, "ambiguous credentials"},
		{"gate handler", routes.BlockOnMessage, func(http.ResponseWriter, *http.Request) error { return Errorf(404, "Scan not found") }, nil, 404, "Scan not found"},
		{"gate internal", routes.BlockOnMessage, func(http.ResponseWriter, *http.Request) error { panic("boom") }, nil, 500, "Internal server error"},
		{"plain unavailable", routes.ErrorField, func(http.ResponseWriter, *http.Request) error { return ddb.ErrUnavailable }, nil, 503, "Service temporarily unavailable; retry later"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rt := routes.Route{Method: "POST", Path: "/x", Access: routes.Public, Errors: c.form}
			rec := httptest.NewRecorder()
			req := httptest.NewRequest("POST", "/x", strings.NewReader("{}"))
			for k, vs := range c.header {
				req.Header[k] = vs
			}
			s.serve(rt, c.h).ServeHTTP(rec, req)
			want := map[routes.ErrorForm]string{
				routes.ErrorField:     fmt.Sprintf(`{"error":"%s"}`, c.message),
				routes.StatusMessage:  fmt.Sprintf(`{"message":"%s","status":"error"}`, c.message),
				routes.BlockOnMessage: fmt.Sprintf(gate, c.message),
			}[c.form]
			if rec.Code != c.status || strings.TrimSpace(rec.Body.String()) != want {
				t.Fatalf("%d %s, want %d %s", rec.Code, rec.Body, c.status, want)
			}
			if rec.Header().Get("X-Content-Type-Options") != "nosniff" {
				t.Fatalf("X-Content-Type-Options %q", rec.Header().Get("X-Content-Type-Options"))
			}
		})
	}
}

// A file path is held to the bound of a name on a file system, segment by
// segment, once percent-decoded as the handler reads it; text parameters
// reach the handler NFC-normalized.
func TestFilePathAndTextParams(t *testing.T) {
	path := routes.FilePathParam("path")
	for v, ok := range map[string]bool{
		"src/" + strings.Repeat("a", 255) + "/" + strings.Repeat("b", 255): true,
		strings.Repeat("a", 256):                   false,
		strings.Repeat("p", 768):                   false,
		"src/" + strings.Repeat("\u00e9", 128):     false, // 256 bytes
		"src\\" + strings.Repeat("w", 256):         false,
		"src/" + strings.Repeat("%61", 256) + "/x": false, // decoded, one name of 256 bytes
		"cafe\u0301/main.go":                       true,  // reports/norm makes it NFC
		"a%00b":                                    false,
		"a%2500b":                                  true, // decoded as the handler does, once: the text "a%00b"
		"a\x00b":                                   false, "a\nb": false, "a\rb": false, "a\tb": false, "a\x01b": false, "a\x7fb": false, "rtl\u202e.go": false,
	} {
		got, err := checkValue(path, v)
		if (err == nil) != ok {
			t.Errorf("%q: %v, want accepted %v", Truncate(v, 40), err, ok)
		}
		if err == nil && got != v {
			t.Errorf("%q became %q", v, got)
		}
		var e *Error
		if err != nil && (!errors.As(err, &e) || e.Status != 400 || !strings.HasPrefix(e.Message, "path ")) {
			t.Errorf("%q: %#v", v, err)
		}
	}
	if got, err := checkValue(routes.TextParam("project", 16), "cafe\u0301"); err != nil || got != "caf\u00e9" {
		t.Errorf("text: %q %v", got, err)
	}
	for _, v := range []string{"yes", "2", ""} {
		if _, err := checkValue(routes.BoolParam("ci"), v); err == nil {
			t.Errorf("bool %q accepted", v)
		}
	}
}
