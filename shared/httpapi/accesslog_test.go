package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/acme/codescan-api/shared/metrics"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/store/ddb"
)

// The edge counts 503s (and 429s) by route group in EMF lines; other
// answers emit nothing. A 503 line is at error level, a 404 at warn.
func TestEdgeMetricsAndLevels(t *testing.T) {
	var logs, out bytes.Buffer
	s := newServer(&logs)
	s.Metrics = metrics.New(&out, time.Now)
	for _, c := range []struct {
		h      HandlerFunc
		status int
		level  string
	}{
		{func(w http.ResponseWriter, _ *http.Request) error { return WriteJSON(w, 200, map[string]string{}) }, 200, "INFO"},
		{func(http.ResponseWriter, *http.Request) error { return Errorf(404, "Project not found") }, 404, "WARN"},
		{func(http.ResponseWriter, *http.Request) error { return ddb.ErrUnavailable }, 503, "ERROR"},
		{func(http.ResponseWriter, *http.Request) error { return ErrRateLimited }, 429, "WARN"},
	} {
		logs.Reset()
		rt := routes.Route{Method: "GET", Path: "/projects/{id}", Group: routes.GroupProjects, Access: routes.Public}
		rec := httptest.NewRecorder()
		s.serve(rt, c.h).ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/projects/7", nil))
		all := strings.Split(strings.TrimSpace(logs.String()), "\n")
		var line map[string]any // the request line is the last
		if rec.Code != c.status || json.Unmarshal([]byte(all[len(all)-1]), &line) != nil || line["msg"] != "request" {
			t.Fatalf("%d, want %d; log %q", rec.Code, c.status, logs.String())
		}
		if line["level"] != c.level || line["route"] != "GET /api/v1/projects/{id}" || line["path"] != "/api/v1/projects/7" {
			t.Errorf("%d: %v", c.status, line)
		}
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d metric lines: %q", len(lines), out.String())
	}
	for i, name := range []string{metrics.Unavailable, metrics.RateLimited} {
		var got map[string]any
		if err := json.Unmarshal([]byte(lines[i]), &got); err != nil {
			t.Fatal(err)
		}
		if got["Service"] != "api" || got["Group"] != routes.GroupProjects || got[name] != 1.0 || len(got) != 4 {
			t.Errorf("line %d: %v", i, got)
		}
	}
}
