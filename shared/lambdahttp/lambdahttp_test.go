package lambdahttp_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/acme/codescan-api/functions/notifications"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/lambdahttp"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// A REST API (payload 1.0) event reaches the group handler with its path,
// headers and body, and API Gateway's request id becomes ours.
func TestGatewayEventReachesTheHandler(t *testing.T) {
	env := testenv.New(t)
	acme := env.Company(t, "Acme")
	handle := lambdahttp.Handler(notifications.New(env.Deps))

	ev := events.APIGatewayProxyRequest{
		Resource:       "/api/v1/notifications/company-defaults/{type_code}",
		Path:           "/api/v1/notifications/company-defaults/scan_completed",
		HTTPMethod:     http.MethodPost,
		Headers:        map[string]string{auth.APIKeyHeader: acme.Admin.APIKey, "Content-Type": "application/json"},
		PathParameters: map[string]string{"type_code": "scan_completed"},
		Body:           `{"email_enabled":false}`,
		RequestContext: events.APIGatewayProxyRequestContext{RequestID: "gw-req-1", Stage: "prod", Path: "/prod/api/v1/notifications/company-defaults/scan_completed"},
	}
	res, err := handle(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 || strings.TrimSpace(res.Body) != `{"status":"ok"}` || res.MultiValueHeaders["Content-Type"][0] != "application/json" {
		t.Fatalf("%d %v %s", res.StatusCode, res.MultiValueHeaders, res.Body)
	}
	if res.MultiValueHeaders["X-Request-Id"][0] != "gw-req-1" || !strings.Contains(env.Logs.String(), `"request_id":"gw-req-1"`) {
		t.Fatalf("request id not carried: %v / %s", res.MultiValueHeaders, env.Logs.String())
	}

	ev.Headers = nil
	res, err = handle(context.Background(), ev)
	if err != nil || res.StatusCode != 401 {
		t.Fatalf("no credential: %d %v", res.StatusCode, err)
	}
}

// API Gateway sends repeated headers as multi-value headers: two
// credentials (in any spelling of the header name) are refused on Lambda as
// on the dev server, before any look-up.
func TestMultiValueCredentialsAreAmbiguous(t *testing.T) {
	env := testenv.New(t)
	acme := env.Company(t, "Acme")
	globex := env.Company(t, "Globex")
	handle := lambdahttp.Handler(notifications.New(env.Deps))
	for name, headers := range map[string]map[string][]string{
		"two keys":           {auth.APIKeyHeader: {globex.Admin.APIKey, acme.Admin.APIKey}},
		"two spellings":      {"service-token": {globex.Admin.APIKey}, auth.APIKeyHeader: {acme.Admin.APIKey}},
		"key and bearer":     {auth.APIKeyHeader: {acme.Admin.APIKey}, "authorization": {"Bearer x"}},
		"empty and real key": {auth.APIKeyHeader: {"", acme.Admin.APIKey}},
	} {
		ev := events.APIGatewayProxyRequest{
			Resource: "/api/v1/notifications/preferences", Path: "/api/v1/notifications/preferences", HTTPMethod: http.MethodGet,
			MultiValueHeaders: headers,
		}
		res, err := handle(context.Background(), ev)
		if err != nil || res.StatusCode != 400 || strings.TrimSpace(res.Body) != `{"error":"ambiguous credentials"}` {
			t.Errorf("%s: %d %s %v", name, res.StatusCode, res.Body, err)
		}
	}
}
