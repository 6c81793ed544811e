package registry_test

import (
	"strings"
	"testing"

	"github.com/acme/codescan-api/internal/registry"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/routes"
)

func TestMain(m *testing.M) { testenv.Main(m) }

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
			path = strings.Replace(path, "{"+p+"}", "1", 1)
		}
		res := testenv.Do(t, mux, rt.Method, path, "{}")
		want := 401
		if rt.Access == routes.Public {
			want = 200
		}
		if res.Status != want {
			t.Errorf("%s %s: %d %s, want %d", rt.Method, path, res.Status, res.Body, want)
		}
	}
}
