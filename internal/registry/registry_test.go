package registry_test

import (
	"strings"
	"testing"

	"github.com/acme/codescan-api/internal/registry"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/routes"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// hostSigned are the public routes whose body is its own credential (the
// host's signature with an integration's webhook secret): without one they
// answer the spec's 401 as the authenticated routes do.
var hostSigned = map[string]bool{
	"POST /integrations/scm-provider/{integration_uuid}/events": true,
	// The trackers' deliveries to the tickets group: Jira's webhook (its
	// X-Hub-Signature with the integration's webhook secret) and GitHub's
	// issues events (X-Hub-Signature-256), checked before the body is read.
	"POST /integrations/jira/{integration_uuid}/events":                true,
	"POST /integrations/scm-provider/{integration_uuid}/ticket-events": true,
}

// Every group of the route table has a constructor, and the combined mux
// routes every route to a handler that applies its access rule: without a
// credential, public routes answer 200 and all others the spec's 401.
func TestEveryRouteIsServed(t *testing.T) {
	for _, g := range routes.Groups() {
		if registry.Constructors[g] == nil {
			t.Errorf("group %s has no constructor", g)
		}
	}
	if len(registry.Constructors) != len(routes.Groups()) {
		t.Errorf("%d constructors for %d groups", len(registry.Constructors), len(routes.Groups()))
	}
	env := testenv.New(t)
	mux := registry.Mux(env.Deps)
	for _, rt := range routes.Table {
		path := rt.Path
		for _, p := range rt.PathParams() {
			v := "1"
			if d, _ := rt.Declared(p); d.Kind == routes.UUID { // a public route checks it before answering
				v = "0b3e8a52-6d1c-4f7e-9a1b-2c3d4e5f6a7b"
			}
			path = strings.Replace(path, "{"+p+"}", v, 1)
		}
		res := testenv.Do(t, mux, rt.Method, path, "{}")
		want := 401
		if rt.Access == routes.Public && !hostSigned[rt.Method+" "+rt.Path] {
			want = 200
		}
		if res.Status != want {
			t.Errorf("%s %s: %d %s, want %d", rt.Method, path, res.Status, res.Body, want)
		}
	}
}
