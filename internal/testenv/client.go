package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/openapi"
	"github.com/acme/codescan-api/shared/routes"
)

// Host is the host test requests are addressed to.
const Host = "http://api.test"

// Response is a recorded response.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body as a JSON object.
func (r *Response) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, r.Body)
	}
	return m
}

// Decode decodes the body into v.
func (r *Response) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode body: %v: %s", err, r.Body)
	}
}

// Key returns the header pair that authenticates as u with its API key.
func Key(u User) []string { return []string{auth.APIKeyHeader, u.APIKey} }

// Bearer returns the Authorization header pair for token.
func Bearer(token string) []string { return []string{"Authorization", "Bearer " + token} }

// Do sends a request to h (path relative to /api/v1, query included) with
// header name/value pairs, and fails the test when a response to a
// documented route does not match the OpenAPI document, or any response is
// not JSON.
func Do(t testing.TB, h http.Handler, method, path, body string, header ...string) *Response {
	t.Helper()
	return DoBytes(t, h, method, path, []byte(body), header...)
}

// DoBytes is Do with a binary body.
func DoBytes(t testing.TB, h http.Handler, method, path string, body []byte, header ...string) *Response {
	t.Helper()
	url := Host + routes.BasePath + path
	req := httptest.NewRequest(method, url, bytes.NewReader(body))
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	res := &Response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("%s %s: Content-Type %q, want application/json (status %d, body %s)", method, path, ct, res.Status, res.Body)
	}
	if !json.Valid(res.Body) {
		t.Fatalf("%s %s: body is not JSON: %s", method, path, res.Body)
	}
	CheckOpenAPI(t, method, url, res)
	return res
}

// DoText is Do for answers documented with a media type other than JSON
// (reports: HTML, Markdown, SARIF): the body is checked against the
// OpenAPI document but need not be JSON.
func DoText(t testing.TB, h http.Handler, method, path string, header ...string) *Response {
	t.Helper()
	url := Host + routes.BasePath + path
	req := httptest.NewRequest(method, url, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	res := &Response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
	CheckOpenAPI(t, method, url, res)
	return res
}

// textDecoder reads a text body whole, for the response validator.
func textDecoder(body io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
	b, err := io.ReadAll(body)
	return string(b), err
}

var (
	specOnce   sync.Once
	specRouter routers.Router
	specErr    error
)

func router() (routers.Router, error) {
	specOnce.Do(func() {
		for _, ct := range []string{"text/html", "text/markdown"} {
			openapi3filter.RegisterBodyDecoder(ct, textDecoder)
		}
		doc, err := openapi3.NewLoader().LoadFromData(openapi.JSON())
		if err != nil {
			specErr = err
			return
		}
		if err := doc.Validate(context.Background()); err != nil {
			specErr = err
			return
		}
		doc.Servers = openapi3.Servers{{URL: Host + routes.BasePath}}
		specRouter, specErr = gorillamux.NewRouter(doc)
	})
	return specRouter, specErr
}

// CheckOpenAPI fails the test when res, the answer to method url (absolute,
// under Host), does not match the OpenAPI document for a documented route.
// The event replay uses it for responses that did not come through Do.
func CheckOpenAPI(t testing.TB, method, url string, res *Response) {
	t.Helper()
	r, err := router()
	if err != nil {
		t.Fatalf("OpenAPI document: %v", err)
	}
	req := httptest.NewRequest(method, url, nil)
	route, params, err := r.FindRoute(req)
	if err != nil {
		return // not a documented route: the router's JSON 404/405 applies
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 res.Status,
		Header:                 res.Header,
		Body:                   io.NopCloser(bytes.NewReader(res.Body)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Fatalf("%s %s: response %d does not match the OpenAPI document: %v\nbody: %s", method, url, res.Status, err, res.Body)
	}
}
