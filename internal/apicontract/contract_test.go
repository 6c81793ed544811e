package apicontract

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// description is a small OpenAPI document in the shape the vendors' are:
// a path parameter that may hold an escaped "/", a required JSON body, a
// declared answer.
const description = `
openapi: 3.0.3
info: {title: t, version: "1"}
servers: [{url: "https://api.example.com"}]
paths:
  /projects/{id}/notes:
    post:
      operationId: createNote
      parameters:
        - {name: id, in: path, required: true, schema: {type: string}}
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [body]
              properties: {body: {type: string, maxLength: 10}}
      responses:
        "201":
          description: created
          content:
            application/json:
              schema:
                type: object
                required: [id]
                properties: {id: {type: integer}}
  /user:
    get:
      operationId: getUser
      responses: {"200": {description: ok}}
`

func load(t *testing.T) *Contract {
	t.Helper()
	c, err := Load("the test description", []byte(description))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestLoadRefusesWhatIsNotOpenAPI(t *testing.T) {
	if _, err := Load("junk", []byte("{")); err == nil || !strings.HasPrefix(err.Error(), "junk: ") {
		t.Fatalf("unreadable: %v", err)
	}
	if _, err := Load("bad", []byte("openapi: 3.0.3\ninfo: {title: t}\npaths: {}\n")); err == nil || !strings.Contains(err.Error(), "not valid OpenAPI") {
		t.Fatalf("no info.version: %v", err)
	}
	if got := load(t).OperationIDs(); !slices.Equal(got, []string{"createNote", "getUser"}) {
		t.Fatalf("operations: %v", got)
	}
}

// Paths are matched on their escaped form, on any host (servers dropped).
func TestMatchAndValidateRequest(t *testing.T) {
	c := load(t)
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:9/ignored", nil)
	r.Header.Set("Content-Type", "application/json")
	op, err := c.Match(r, "/projects/group%2Fsub%2Fapp/notes")
	if err != nil || op.ID != "createNote" || op.PathParams["id"] != "group%2Fsub%2Fapp" {
		t.Fatalf("match: %+v %v", op, err)
	}
	if err := c.ValidateRequest(r, "/projects/group%2Fapp/notes", []byte(`{"body":"hi"}`), op); err != nil {
		t.Fatalf("a good request: %v", err)
	}
	for name, body := range map[string]string{"no body": ``, "missing field": `{}`, "too long": `{"body":"eleven char"}`, "not JSON": `{`} {
		if err := c.ValidateRequest(r, "/projects/group%2Fapp/notes", []byte(body), op); err == nil || !strings.Contains(err.Error(), "(createNote)") {
			t.Errorf("%s: %v", name, err)
		}
	}
	get := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:9/", nil)
	userOp, err := c.Match(get, "/user")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ValidateRequest(get, "/user", []byte(`{}`), userOp); err == nil {
		t.Error("a body on an operation that takes none was accepted")
	}
	for _, m := range []struct{ method, path string }{{http.MethodDelete, "/user"}, {http.MethodGet, "/projects/a/b/notes"}, {http.MethodGet, "/nothing"}} {
		if _, err := c.Match(httptest.NewRequest(m.method, "http://127.0.0.1:9/", nil), m.path); !errors.Is(err, ErrNotDescribed) ||
			!strings.Contains(err.Error(), "the test description") {
			t.Errorf("%s %s: %v", m.method, m.path, err)
		}
	}
}

func TestValidateResponse(t *testing.T) {
	c := load(t)
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:9/", nil)
	op, err := c.Match(r, "/projects/1/notes")
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{"Content-Type": {"application/json"}}
	if err := c.ValidateResponse(r, "/projects/1/notes", op, http.StatusCreated, h, []byte(`{"id":5}`)); err != nil {
		t.Fatalf("a good answer: %v", err)
	}
	if err := c.ValidateResponse(r, "/projects/1/notes", op, http.StatusCreated, h, []byte(`{"id":"five"}`)); err == nil || !strings.Contains(err.Error(), "answer 201") {
		t.Fatalf("a bad answer: %v", err)
	}
}

// Loopback listens on 127.0.0.1 only; Recorder holds an answer until
// Flush, its first status kept.
func TestLoopbackAndRecorder(t *testing.T) {
	srv := Loopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := NewRecorder()
		rec.Header().Set("X-Test", "1")
		rec.WriteHeader(http.StatusTeapot)
		rec.WriteHeader(http.StatusOK)
		_, _ = rec.Write([]byte("short and stout"))
		if rec.Status() != http.StatusTeapot || string(rec.Body()) != "short and stout" || w.Header().Get("X-Test") != "" {
			t.Errorf("before Flush: %d %q %v", rec.Status(), rec.Body(), w.Header())
		}
		rec.Flush(w)
	}))
	defer srv.Close()
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
		t.Fatalf("listening on %s", srv.URL)
	}
	res, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusTeapot || res.Header.Get("X-Test") != "1" || string(body) != "short and stout" {
		t.Fatalf("answer: %d %v %q", res.StatusCode, res.Header, body)
	}
	if NewRecorder().Status() != http.StatusOK {
		t.Fatal("an answer with nothing written is not 200")
	}
}
