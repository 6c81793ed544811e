package main

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/acme/codescan-api/internal/registry"
	"github.com/acme/codescan-api/internal/testenv"
)

func TestMain(m *testing.M) { testenv.MainOwnDynamoDB(m) } // its tables have streams

// The client's flows against every group's handlers on a loopback server.
func TestClientFlows(t *testing.T) {
	env := testenv.NewStreaming(t)
	env.StartIngester(t)
	acme := env.Company(t, "Acme")
	srv := httptest.NewServer(registry.Mux(env.Deps))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := &client{base: srv.URL + "/api/v1", key: acme.Admin.APIKey, http: srv.Client(), poll: 50 * time.Millisecond, logf: t.Logf}
	if err := c.run(ctx); err != nil {
		t.Fatal(err)
	}
}

// The parser fails where the client's does: a missing or null required
// member, a number where a string is read; optional members may be absent.
func TestDecodeIsAsStrictAsTheClient(t *testing.T) {
	ok := `{"id":"s1","project":"p","status":"complete","engine":"sarif","created_at":"2026-01-01T00:00:00Z","scan_errors":null}`
	var sc scanResponse
	if err := decode([]byte(ok), &sc); err != nil || sc.ID != "s1" {
		t.Fatalf("%v %+v", err, sc)
	}
	for _, bad := range []string{
		`{"project":"p","status":"complete","engine":"sarif","created_at":"x"}`,
		`{"id":null,"project":"p","status":"complete","engine":"sarif","created_at":"x"}`,
		`{"id":7,"project":"p","status":"complete","engine":"sarif","created_at":"x"}`,
		`{"id":"s","project":"p","status":"complete","engine":"sarif","created_at":"x","pull_request_id":12}`,
	} {
		if err := decode([]byte(bad), &sc); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
	var g blockingResponse
	if err := decode([]byte(`{"block":true,"blocking_issues":[{"id":"i","triggered_by_rules":[7]}],"total_pages":1}`), &g); err == nil {
		t.Error("numeric rule ids accepted")
	}
	if err := decode([]byte(`{"block":true,"blocking_issues":[{"id":"i"}],"total_pages":1}`), &g); err == nil ||
		!strings.Contains(err.Error(), "triggered_by_rules") {
		t.Errorf("missing triggered_by_rules: %v", err)
	}
	var v verifyResponse
	if err := decode([]byte(`{"status":"ok","user":{"id":1}}`), &v); err == nil {
		t.Error("a nested verify answer parsed as a string map")
	}
}
