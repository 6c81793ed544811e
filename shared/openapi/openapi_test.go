package openapi_test

import (
	"bytes"
	"context"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/acme/codescan-api/shared/openapi"
	"github.com/acme/codescan-api/shared/openapi/internal/assemble"
	"github.com/acme/codescan-api/shared/routes"
)

// The embedded document is the one its YAML sources assemble to: a source
// edited without go generate fails here.
func TestGeneratedDocumentIsCurrent(t *testing.T) {
	want, err := assemble.Document(os.DirFS("."))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(openapi.JSON(), want) {
		t.Fatal("openapi.json is not what base.yaml and groups/*.yaml assemble to: run go generate ./shared/openapi")
	}
}

// The document is valid OpenAPI and documents exactly the route table.
func TestDocumentMatchesRouteTable(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(openapi.JSON())
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1") {
		t.Fatalf("openapi %q, want 3.1", doc.OpenAPI)
	}
	var documented, table []string
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			documented = append(documented, method+" "+path)
			if op.OperationID == "" {
				t.Errorf("%s %s has no operationId", method, path)
			}
		}
	}
	for _, rt := range routes.Table {
		table = append(table, rt.Method+" "+rt.Path)
	}
	sort.Strings(documented)
	sort.Strings(table)
	if strings.Join(documented, "\n") != strings.Join(table, "\n") {
		t.Fatalf("documented routes:\n%s\n\nroute table:\n%s", strings.Join(documented, "\n"), strings.Join(table, "\n"))
	}
	// Public routes opt out of security; every other route inherits it.
	for _, rt := range routes.Table {
		op := doc.Paths.Find(rt.Path).GetOperation(rt.Method)
		// A credential in the path is no security scheme either.
		public := op.Security != nil && len(*op.Security) == 0
		if public != (rt.Access == routes.Public || rt.Access == routes.PathToken) {
			t.Errorf("%s %s: documented public=%v, table access %v", rt.Method, rt.Path, public, rt.Access)
		}
		if rt.Access != routes.Public && op.Responses.Status(401) == nil {
			t.Errorf("%s %s does not document 401", rt.Method, rt.Path)
		}
		if (rt.Access == routes.Permission || rt.Access == routes.Admin) && op.Responses.Status(403) == nil {
			t.Errorf("%s %s does not document 403", rt.Method, rt.Path)
		}
	}
}

func TestAuthenticatedOperationsDocumentTheRateLimit(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(openapi.JSON())
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range routes.Table {
		got := doc.Paths.Find(rt.Path).GetOperation(rt.Method).Responses.Status(429) != nil
		if got != (rt.Access != routes.Public) {
			t.Errorf("%s %s: 429 documented=%v", rt.Method, rt.Path, got)
		}
	}
}

// The request headers a route reads and the response headers it sets are
// documented on its operation (the headers in parameters, the response
// headers on its 200 answer).
func TestRouteHeadersAreDocumented(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(openapi.JSON())
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range routes.Table {
		op := doc.Paths.Find(rt.Path).GetOperation(rt.Method)
		for _, h := range rt.Headers {
			if op.Parameters.GetByInAndName("header", h) == nil {
				t.Errorf("%s %s: request header %s is not documented", rt.Method, rt.Path, h)
			}
		}
		for _, h := range rt.ResponseHeaders {
			if ok := op.Responses.Status(200); ok == nil || ok.Value.Headers[h] == nil {
				t.Errorf("%s %s: response header %s is not documented", rt.Method, rt.Path, h)
			}
		}
	}
}

// The edge's conventions are documented where the route table applies
// them: the POST routes answering 201 are exactly the creations (with
// Idempotency-Key, 409 and 422), the authenticated reads document ETag
// and 304, and authenticated answers the rate-limit headers.
func TestConventionsAreDocumented(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(openapi.JSON())
	if err != nil {
		t.Fatal(err)
	}
	creates := 0
	for _, rt := range routes.Table {
		op := doc.Paths.Find(rt.Path).GetOperation(rt.Method)
		if answers201 := rt.Method == "POST" && op.Responses.Status(201) != nil; answers201 != rt.Creates {
			t.Errorf("%s %s: documents 201=%v, route table Creates=%v", rt.Method, rt.Path, answers201, rt.Creates)
		}
		if rt.Creates {
			creates++
		}
		if rt.Creates || rt.Idempotent {
			if op.Parameters.GetByInAndName("header", "Idempotency-Key") == nil || op.Responses.Status(409) == nil || op.Responses.Status(422) == nil {
				t.Errorf("%s %s: Idempotency-Key, 409 or 422 not documented", rt.Method, rt.Path)
			}
		}
		ok := op.Responses.Status(200)
		if rt.Validated() && (op.Parameters.GetByInAndName("header", "If-None-Match") == nil || op.Responses.Status(304) == nil ||
			ok == nil || ok.Value.Headers["ETag"] == nil) {
			t.Errorf("%s %s: ETag, If-None-Match or 304 not documented", rt.Method, rt.Path)
		}
		if rt.Access == routes.Public {
			continue
		}
		for _, code := range []int{200, 201, 404, 429} {
			if r := op.Responses.Status(code); r != nil && r.Value.Headers["RateLimit-Remaining"] == nil {
				t.Errorf("%s %s: %d does not document the rate-limit headers", rt.Method, rt.Path, code)
			}
		}
	}
	if creates < 6 {
		t.Errorf("%d creations in the route table", creates)
	}
}
