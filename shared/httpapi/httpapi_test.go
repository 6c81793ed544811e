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
		{"upload error", func(http.ResponseWriter, *http.Request) error { return UploadError(400, "bad %s", "sarif") }, 400, `{"message":"bad sarif","status":"error"}`},
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
	}, slog.New(slog.NewJSONHandler(&logs, nil)))
	cases := []struct {
		method, path string
		status       int
		body         string
	}{
		{"GET", "/api/v1/things/7", 200, `{"id":"7"}`},
		{"POST", "/api/v1/things/7", 405, `{"error":"Method not allowed"}`},
		{"GET", "/api/v1/nothing", 404, `{"error":"Route not found"}`},
	}
	for _, c := range cases {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, nil))
		if rec.Code != c.status || strings.TrimSpace(rec.Body.String()) != c.body || rec.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%s %s: %d %s", c.method, c.path, rec.Code, rec.Body)
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
		if got := fmt.Sprint(Slice(c.p, rows)); got != c.want {
			t.Errorf("Slice(%+v) = %s, want %s", c.p, got, c.want)
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
