package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/deployspec"
	"github.com/acme/codescan-api/shared/dynamolocal"
	"github.com/acme/codescan-api/shared/routes"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func eventsDir(t *testing.T) string {
	t.Helper()
	root, err := dynamolocal.Root()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "events")
}

// TestOneEventPerRoute: events/ holds exactly one up-to-date event per
// route of the table.
func TestOneEventPerRoute(t *testing.T) {
	want, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	dir := eventsDir(t)
	have, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, f := range have {
		if _, ok := want[filepath.Base(f)]; !ok {
			t.Errorf("events/%s is no route's event", filepath.Base(f))
		}
	}
	for name, b := range want {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(got, b) {
			t.Errorf("events/%s is missing or stale: run make generate", name)
		}
	}
}

// TestReplayEveryEvent runs every events/*.json through its group's Lambda
// entry against the demo data on DynamoDB Local: the answer has the
// expected status, is a JSON object with the expected members that matches
// the OpenAPI document, and the DynamoDB calls it made are all granted to
// the group (shared/deployspec).
func TestReplayEveryEvent(t *testing.T) {
	st := testenv.NewStore(t)
	t.Setenv("DYNAMODB_ENDPOINT", *st.Client().Options().BaseEndpoint)
	t.Setenv("TABLE_NAME", st.TableName())
	t.Setenv("JWKS_URL", "")
	t.Setenv(deployspec.KMSKeyEnv, "")
	ctx := context.Background()
	w, err := newWorld(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dir := eventsDir(t)
	for _, g := range routes.Groups() {
		for _, r := range routes.Of(g) {
			s, ok := sampleOf(r)
			if !ok {
				t.Errorf("%s has no sample", r.Pattern())
				continue
			}
			t.Run(s.File, func(t *testing.T) {
				raw, err := os.ReadFile(filepath.Join(dir, s.File+".json"))
				if err != nil {
					t.Fatal(err)
				}
				got, payload, err := w.prepare(raw)
				if err != nil {
					t.Fatal(err)
				}
				if got.Pattern() != r.Pattern() {
					t.Fatalf("event is %s, want %s", got.Pattern(), r.Pattern())
				}
				resp, actions, err := w.invoke(ctx, g, payload)
				if err != nil {
					t.Fatal(err)
				}
				checkResponse(t, r, payload, s, resp)
				if missing := ungranted(g, actions); len(missing) > 0 {
					t.Errorf("%s called DynamoDB with %v, which deployspec does not grant it", g, missing)
				}
			})
		}
	}
}

func checkResponse(t *testing.T, r routes.Route, payload []byte, s sample, resp events.APIGatewayProxyResponse) {
	t.Helper()
	if resp.StatusCode != s.Status {
		t.Fatalf("status %d, want %d: %s", resp.StatusCode, s.Status, resp.Body)
	}
	header := http.Header{}
	for k, vs := range resp.MultiValueHeaders {
		for _, v := range vs {
			header.Add(k, v)
		}
	}
	for k, v := range resp.Headers {
		header.Set(k, v)
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(resp.Body), &body); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, resp.Body)
	}
	for _, k := range s.Keys {
		if _, ok := body[k]; !ok {
			t.Errorf("body lacks %q: %s", k, resp.Body)
		}
	}
	if st, ok := body["status"]; ok && slices.Contains(s.Keys, "status") && st != "ok" {
		t.Errorf("status member %v, want ok", st)
	}
	var ev events.APIGatewayProxyRequest
	if err := json.Unmarshal(payload, &ev); err != nil {
		t.Fatal(err)
	}
	target := testenv.Host + ev.Path
	if q := queryOf(ev); q != "" {
		target += "?" + q
	}
	testenv.CheckOpenAPI(t, r.Method, target, &testenv.Response{Status: resp.StatusCode, Header: header, Body: []byte(resp.Body)})
}

func queryOf(ev events.APIGatewayProxyRequest) string {
	q := url.Values{}
	for k, vs := range ev.MultiValueQueryStringParameters {
		q[k] = vs
	}
	return q.Encode()
}
