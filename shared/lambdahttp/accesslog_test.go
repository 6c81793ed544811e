package lambdahttp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/acme/codescan-api/functions/notifications"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/lambdahttp"
	"github.com/acme/codescan-api/shared/store/ledger"
)

// runtimeTraceKey is the key under which aws-lambda-go puts the
// invocation's trace header in the handler's context.
const runtimeTraceKey = "x-amzn-trace-id"

// Each request's one log line names the route by its pattern, the caller
// by company, user and key id, the invocation by cold start and X-Ray
// trace id (from the runtime's context, or _X_AMZN_TRACE_ID), and carries
// request id, status, duration and a level by status; no credential
// appears in any line.
func TestRequestLogLine(t *testing.T) {
	env := testenv.New(t)
	acme := env.Company(t, "Acme")
	bearer := env.Token(t, acme.Admin)
	const badKey = "cs_this-key-does-not-exist-0123456789"
	handle := lambdahttp.Handler(notifications.New(env.Deps))

	post := events.APIGatewayProxyRequest{
		Resource: "/api/v1/notifications/company-defaults/{type_code}", Path: "/api/v1/notifications/company-defaults/scan_completed",
		HTTPMethod: http.MethodPost, PathParameters: map[string]string{"type_code": "scan_completed"},
		Headers:        map[string]string{auth.APIKeyHeader: acme.Admin.APIKey, "Content-Type": "application/json"},
		Body:           `{"email_enabled":false}`,
		RequestContext: events.APIGatewayProxyRequestContext{RequestID: "gw-1"},
	}
	//lint:ignore SA1029 the Lambda runtime client's own key, as it sets it
	traced := context.WithValue(context.Background(), runtimeTraceKey, "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1")
	if res, err := handle(traced, post); err != nil || res.StatusCode != 200 {
		t.Fatalf("api key: %d %v %s", res.StatusCode, err, res.Body)
	}

	t.Setenv("_X_AMZN_TRACE_ID", "Root=1-6759e988-000000000000000000000001;Parent=1;Sampled=0")
	get := events.APIGatewayProxyRequest{
		Resource: "/api/v1/notifications/preferences", Path: "/api/v1/notifications/preferences", HTTPMethod: http.MethodGet,
		Headers:        map[string]string{"Authorization": "Bearer " + bearer},
		RequestContext: events.APIGatewayProxyRequestContext{RequestID: "gw-2"},
	}
	if res, err := handle(context.Background(), get); err != nil || res.StatusCode != 200 {
		t.Fatalf("bearer: %d %v %s", res.StatusCode, err, res.Body)
	}
	get.Headers = map[string]string{auth.APIKeyHeader: badKey}
	get.RequestContext.RequestID = "gw-3"
	if res, err := handle(context.Background(), get); err != nil || res.StatusCode != 401 {
		t.Fatalf("bad key: %d %v %s", res.StatusCode, err, res.Body)
	}

	logs := env.Logs.String()
	for _, secret := range []string{acme.Admin.APIKey, bearer, badKey, strings.Split(bearer, ".")[2]} {
		if strings.Contains(logs, secret) {
			t.Fatalf("a credential is logged: %s", logs)
		}
	}
	lines := map[string]map[string]any{}
	for _, l := range strings.Split(strings.TrimSpace(logs), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not JSON: %q", l)
		}
		if m["msg"] == "request" {
			lines[m["request_id"].(string)] = m
		}
	}
	want := map[string]map[string]any{
		"gw-1": {"level": "INFO", "method": "POST", "route": "POST /api/v1/notifications/company-defaults/{type_code}",
			"path": "/api/v1/notifications/company-defaults/scan_completed", "status": 200.0,
			"company_id": float64(acme.ID), "user_id": float64(acme.Admin.ID), "auth": ledger.ViaAPIKey,
			"cold_start": true, "trace_id": "1-5759e988-bd862e3fe1be46a994272793"},
		"gw-2": {"level": "INFO", "method": "GET", "route": "GET /api/v1/notifications/preferences", "status": 200.0,
			"company_id": float64(acme.ID), "user_id": float64(acme.Admin.ID), "auth": ledger.ViaBearer,
			"cold_start": false, "trace_id": "1-6759e988-000000000000000000000001"},
		"gw-3": {"level": "WARN", "route": "GET /api/v1/notifications/preferences", "status": 401.0, "cold_start": false},
	}
	for id, fields := range want {
		got, ok := lines[id]
		if !ok {
			t.Fatalf("no request line for %s: %s", id, logs)
		}
		for k, v := range fields {
			if got[k] != v {
				t.Errorf("%s: %s = %v, want %v", id, k, got[k], v)
			}
		}
		if d, ok := got["duration_ms"].(float64); !ok || d < 0 {
			t.Errorf("%s: duration_ms %v", id, got["duration_ms"])
		}
	}
	if k, ok := lines["gw-1"]["api_key_id"].(float64); !ok || k < 1 {
		t.Errorf("api key request without its key id: %v", lines["gw-1"])
	}
	for _, k := range []string{"api_key_id"} {
		if _, ok := lines["gw-2"][k]; ok {
			t.Errorf("bearer request has %s: %v", k, lines["gw-2"])
		}
	}
	for _, k := range []string{"company_id", "user_id", "api_key_id"} {
		if _, ok := lines["gw-3"][k]; ok {
			t.Errorf("unauthenticated request has %s: %v", k, lines["gw-3"])
		}
	}
}
