// Package conventiontest checks the HTTP conventions of the edge (rate-limit
// headers, ETag and 304, Idempotency-Key) through real endpoint groups
// against DynamoDB Local.
package conventiontest

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/functions/accounts"
	"github.com/acme/codescan-api/functions/projects"
	"github.com/acme/codescan-api/functions/teams"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/lambdahttp"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/tenancy"
	"github.com/acme/codescan-api/shared/tabledef"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// clock is a settable rate-limit clock.
type clock struct {
	mu sync.Mutex
	at time.Time
}

func (c *clock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.at }
func (c *clock) set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.at = t }

// limited turns the rate limit on with perMinute, on a clock 15 s into a
// minute.
func limited(env *testenv.Env, perMinute int) *clock {
	c := &clock{at: time.Date(2026, 11, 25, 10, 0, 15, 0, time.UTC)}
	env.Deps.Server.RateLimit = &httpapi.RateLimiter{Store: env.Store.Tenancy, Limit: tenancy.RateLimit{PerMinute: perMinute, PerHour: 1000}, Now: c.now}
	return c
}

func wantRate(t *testing.T, r *testenv.Response, limit, remaining, reset int) {
	t.Helper()
	got := fmt.Sprintf("%s/%s/%s", r.Header.Get(httpapi.HeaderRateLimit), r.Header.Get(httpapi.HeaderRateRemaining), r.Header.Get(httpapi.HeaderRateReset))
	if want := fmt.Sprintf("%d/%d/%d", limit, remaining, reset); got != want {
		t.Fatalf("%d answer: RateLimit limit/remaining/reset %s, want %s", r.Status, got, want)
	}
}

// Every authenticated answer (200, 4xx, 429) carries the rate-limit
// headers; the budget is per credential: each API key has its own, and the
// user's bearer tokens one more.
func TestRateLimitHeadersPerCredential(t *testing.T) {
	env := testenv.New(t)
	acme := env.Company(t, "Acme")
	dev := env.User(t, acme, testenv.UserSpec{Email: "dev@acme.test"})
	acc := accounts.New(env.Deps)
	second := testenv.Do(t, acc, "POST", "/api-keys", `{"name":"ci"}`, testenv.Key(dev)...)
	if second.Status != 201 {
		t.Fatalf("second key: %d %s", second.Status, second.Body)
	}
	secondKey := []string{"SERVICE-TOKEN", second.JSON(t)["key"].(string)}

	limited(env, 3)
	h := projects.New(env.Deps)
	wantRate(t, testenv.Do(t, h, "GET", "/scans", "", testenv.Key(dev)...), 3, 2, 45)
	missing := testenv.Do(t, h, "GET", "/scan/"+"00000000-0000-4000-8000-000000000000", "", testenv.Key(dev)...)
	if missing.Status != 404 {
		t.Fatalf("missing scan: %d", missing.Status)
	}
	wantRate(t, missing, 3, 1, 45)
	bad := testenv.Do(t, h, "GET", "/scans?page=0", "", testenv.Key(dev)...)
	if bad.Status != 400 {
		t.Fatalf("page=0: %d", bad.Status)
	}
	wantRate(t, bad, 3, 0, 45)
	refused := testenv.Do(t, h, "GET", "/scans", "", testenv.Key(dev)...)
	if refused.Status != 429 || refused.Header.Get("Retry-After") != "45" {
		t.Fatalf("over the limit: %d Retry-After %q", refused.Status, refused.Header.Get("Retry-After"))
	}
	wantRate(t, refused, 3, 0, 45)

	wantRate(t, testenv.Do(t, h, "GET", "/scans", "", secondKey...), 3, 2, 45)
	wantRate(t, testenv.Do(t, h, "GET", "/scans", "", testenv.Bearer(env.Token(t, dev))...), 3, 2, 45)

	anon := testenv.Do(t, h, "GET", "/scans", "", "SERVICE-TOKEN", "csk_unknown")
	if anon.Status != 401 || anon.Header.Get(httpapi.HeaderRateLimit) != "" {
		t.Fatalf("unauthenticated: %d with RateLimit-Limit %q", anon.Status, anon.Header.Get(httpapi.HeaderRateLimit))
	}
}

// get sends a GET with If-None-Match through DoText (a 304 has no JSON
// body), checked against the OpenAPI document.
func get(t *testing.T, h http.Handler, path string, u testenv.User, ifNoneMatch string) *testenv.Response {
	t.Helper()
	hdr := testenv.Key(u)
	if ifNoneMatch != "" {
		hdr = append(hdr, "If-None-Match", ifNoneMatch)
	}
	return testenv.DoText(t, h, "GET", path, hdr...)
}

func strongTag(body []byte) string {
	sum := sha256.Sum256(body)
	return `"` + base64.RawURLEncoding.EncodeToString(sum[:]) + `"`
}

// GET /scan/{id}: a strong ETag of the body; If-None-Match naming it is 304
// with no body and costs no rate limit; a changed scan is 200 again;
// another company's caller sending the tag gets 404, not 304.
func TestScanETag(t *testing.T) {
	env := testenv.New(t)
	acme, other := env.Company(t, "Acme"), env.Company(t, "Other")
	ctx := context.Background()
	proj, err := env.Store.Catalog.CreateProject(ctx, schema.Project{CompanyID: acme.ID, Name: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := env.Store.Scans.CreateScan(ctx, scans.Scan{CompanyID: acme.ID, ProjectID: proj.ID, Branch: "main", Engine: "sarif", Tool: "gosec",
		Status: scans.ScanProcessing})
	if err != nil {
		t.Fatal(err)
	}
	clk := limited(env, 2)
	h := projects.New(env.Deps)
	path := "/scan/" + sc.ID

	first := get(t, h, path, acme.Admin, "")
	tag := first.Header.Get("ETag")
	if first.Status != 200 || tag != strongTag(first.Body) || first.Header.Get("Cache-Control") != "private, no-cache" {
		t.Fatalf("first read: %d ETag %q Cache-Control %q", first.Status, tag, first.Header.Get("Cache-Control"))
	}
	wantRate(t, first, 2, 1, 45)
	// Polling with the tag, more often than the limit allows: every poll
	// is a free 304.
	for i, inm := range []string{tag, "W/" + tag, `"other", ` + tag, "*", tag} {
		r := get(t, h, path, acme.Admin, inm)
		if r.Status != 304 || len(r.Body) != 0 || r.Header.Get("ETag") != tag {
			t.Fatalf("poll %d (If-None-Match %s): %d ETag %q body %q", i, inm, r.Status, r.Header.Get("ETag"), r.Body)
		}
		wantRate(t, r, 2, 1, 45)
	}
	if r := get(t, h, path, acme.Admin, `"stale"`); r.Status != 200 || r.Header.Get("ETag") != tag {
		t.Fatalf("another tag: %d", r.Status)
	}
	// The budget is spent: a poll is refused like any request (a 304 is
	// refunded, not free of the limit).
	if r := get(t, h, path, acme.Admin, tag); r.Status != 429 {
		t.Fatalf("poll over the limit: %d", r.Status)
	}
	if r := get(t, h, path, other.Admin, tag); r.Status != 404 {
		t.Fatalf("another company's caller with the tag: %d", r.Status)
	}

	clk.set(clk.now().Add(time.Minute))
	if _, err := env.Store.Findings.ApplyScan(ctx, acme.ID, sc, nil); err != nil {
		t.Fatal(err)
	}
	changed := get(t, h, path, acme.Admin, tag)
	if changed.Status != 200 || changed.Header.Get("ETag") == tag || changed.Header.Get("ETag") != strongTag(changed.Body) {
		t.Fatalf("changed scan: %d ETag %q (was %q)", changed.Status, changed.Header.Get("ETag"), tag)
	}
}

// A list route: 304 while it is unchanged, 200 with a new tag once a team
// is added.
func TestListETag(t *testing.T) {
	env := testenv.New(t)
	acme := env.Company(t, "Acme")
	h := teams.New(env.Deps)
	first := get(t, h, "/teams", acme.Admin, "")
	tag := first.Header.Get("ETag")
	if first.Status != 200 || tag != strongTag(first.Body) {
		t.Fatalf("list: %d ETag %q", first.Status, tag)
	}
	if r := get(t, h, "/teams", acme.Admin, tag); r.Status != 304 || len(r.Body) != 0 {
		t.Fatalf("unchanged list: %d %q", r.Status, r.Body)
	}
	if r := testenv.Do(t, h, "POST", "/teams", `{"name":"Red"}`, testenv.Key(acme.Admin)...); r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	if r := get(t, h, "/teams", acme.Admin, tag); r.Status != 200 || r.Header.Get("ETag") == tag {
		t.Fatalf("changed list: %d ETag %q", r.Status, r.Header.Get("ETag"))
	}
}

// Through API Gateway's adapter (as deployed), a 304 has no body and
// keeps its validator and rate-limit headers.
func TestETagThroughLambdaAdapter(t *testing.T) {
	env := testenv.New(t)
	limited(env, 10)
	acme := env.Company(t, "Acme")
	handle := lambdahttp.Handler(teams.New(env.Deps))
	call := func(hdr map[string]string) events.APIGatewayProxyResponse {
		t.Helper()
		res, err := handle(context.Background(), events.APIGatewayProxyRequest{HTTPMethod: "GET", Path: routes.BasePath + "/teams",
			Headers: hdr, RequestContext: events.APIGatewayProxyRequestContext{RequestID: "gw-1"}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := call(map[string]string{"SERVICE-TOKEN": acme.Admin.APIKey})
	tag := first.MultiValueHeaders["Etag"]
	if first.StatusCode != 200 || len(tag) != 1 {
		t.Fatalf("first: %d %v", first.StatusCode, first.MultiValueHeaders)
	}
	again := call(map[string]string{"SERVICE-TOKEN": acme.Admin.APIKey, "If-None-Match": tag[0]})
	if again.StatusCode != 304 || again.Body != "" || again.MultiValueHeaders["Etag"][0] != tag[0] ||
		again.MultiValueHeaders["Ratelimit-Remaining"][0] != "9" {
		t.Fatalf("revalidation: %d %q %v", again.StatusCode, again.Body, again.MultiValueHeaders)
	}
}

func idem(u testenv.User, key string) []string {
	return append(testenv.Key(u), httpapi.IdempotencyKeyHeader, key)
}

func teamCount(t *testing.T, h http.Handler, u testenv.User) float64 {
	t.Helper()
	return testenv.Do(t, h, "GET", "/teams", "", testenv.Key(u)...).JSON(t)["total_teams"].(float64)
}

// The same key and body replays the first answer; another body is 422;
// another credential's key of the same name is its own; a failed request
// frees its key.
func TestIdempotentReplay(t *testing.T) {
	env := testenv.New(t)
	acme := env.Company(t, "Acme")
	lead := env.User(t, acme, testenv.UserSpec{Email: "lead@acme.test", Permissions: []string{routes.PermChangeContentAccess}})
	h := teams.New(env.Deps)

	first := testenv.Do(t, h, "POST", "/teams", `{"name":"Red"}`, idem(acme.Admin, "create-red")...)
	if first.Status != 201 || first.Header.Get(httpapi.ReplayedHeader) != "" {
		t.Fatalf("first: %d %s", first.Status, first.Body)
	}
	again := testenv.Do(t, h, "POST", "/teams", `{"name":"Red"}`, idem(acme.Admin, "create-red")...)
	if again.Status != 201 || string(again.Body) != string(first.Body) || again.Header.Get(httpapi.ReplayedHeader) != "true" ||
		again.Header.Get("Content-Type") != first.Header.Get("Content-Type") {
		t.Fatalf("replay: %d %q %s, want the first answer %s", again.Status, again.Header.Get(httpapi.ReplayedHeader), again.Body, first.Body)
	}
	if n := teamCount(t, h, acme.Admin); n != 1 {
		t.Fatalf("%v teams after a replay", n)
	}
	other := testenv.Do(t, h, "POST", "/teams", `{"name":"Blue"}`, idem(acme.Admin, "create-red")...)
	if other.Status != 422 || !strings.Contains(string(other.Body), "Idempotency-Key was already used with another request") {
		t.Fatalf("another body: %d %s", other.Status, other.Body)
	}
	// The lead's key of the same name is not the admin's: the request
	// runs (and meets the taken name).
	if r := testenv.Do(t, h, "POST", "/teams", `{"name":"Red"}`, idem(lead, "create-red")...); r.Status != 409 || r.Header.Get(httpapi.ReplayedHeader) != "" {
		t.Fatalf("another credential: %d %s", r.Status, r.Body)
	}
	if r := testenv.Do(t, h, "POST", "/teams", `{"name":""}`, idem(acme.Admin, "create-green")...); r.Status != 400 {
		t.Fatalf("invalid: %d", r.Status)
	}
	if r := testenv.Do(t, h, "POST", "/teams", `{"name":"Green"}`, idem(acme.Admin, "create-green")...); r.Status != 201 || r.Header.Get(httpapi.ReplayedHeader) != "" {
		t.Fatalf("after a failed request the key is free: %d %s", r.Status, r.Body)
	}
	if n := teamCount(t, h, acme.Admin); n != 2 {
		t.Fatalf("%v teams, want 2", n)
	}
}

// Key syntax: 1 to 255 printable ASCII characters without spaces, sent
// once.
func TestIdempotencyKeyBounds(t *testing.T) {
	env := testenv.New(t)
	acme := env.Company(t, "Acme")
	h := teams.New(env.Deps)
	for _, key := range []string{"", strings.Repeat("k", 256), "two words", "caf\u00e9", "tab\tkey"} {
		r := testenv.Do(t, h, "POST", "/teams", `{"name":"Red"}`, idem(acme.Admin, key)...)
		if r.Status != 400 || !strings.Contains(string(r.Body), "Idempotency-Key must be") {
			t.Fatalf("key %q: %d %s", key, r.Status, r.Body)
		}
	}
	req := httptest.NewRequest("POST", testenv.Host+routes.BasePath+"/teams", strings.NewReader(`{"name":"Red"}`))
	req.Header.Set("SERVICE-TOKEN", acme.Admin.APIKey)
	req.Header.Add(httpapi.IdempotencyKeyHeader, "a")
	req.Header.Add(httpapi.IdempotencyKeyHeader, "b")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 400 {
		t.Fatalf("two keys: %d %s", rec.Code, rec.Body)
	}
	if n := teamCount(t, h, acme.Admin); n != 0 {
		t.Fatalf("%v teams after refused keys", n)
	}
	if r := testenv.Do(t, h, "POST", "/teams", `{"name":"Red"}`, idem(acme.Admin, strings.Repeat("~", 255))...); r.Status != 201 {
		t.Fatalf("a 255-character key: %d %s", r.Status, r.Body)
	}
}

// idemItems reads the company's Idempotency-Key items as stored.
func idemItems(t *testing.T, env *testenv.Env, companyID int64) []map[string]types.AttributeValue {
	t.Helper()
	out, err := env.Store.Client().Query(context.Background(), &dynamodb.QueryInput{
		TableName:              aws.String(env.Store.TableName()),
		KeyConditionExpression: aws.String("PK = :pk AND begins_with(SK, :idem)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: schema.CompanyPK(companyID)}, ":idem": &types.AttributeValueMemberS{Value: "IDEM#"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.Items
}

// A new API key's answer is never stored: the retry is 409 saying the key
// exists; the record expires 24 hours after the request (TTL attribute),
// and from then on the key is free again.
func TestIdempotentSecretNotKept(t *testing.T) {
	env := testenv.New(t)
	at := time.Now().UTC().Truncate(time.Second)
	env.Deps.Server.Now = func() time.Time { return at }
	acme := env.Company(t, "Acme")
	h := accounts.New(env.Deps)
	first := testenv.Do(t, h, "POST", "/api-keys", `{"name":"ci"}`, idem(acme.Admin, "mint-ci")...)
	if first.Status != 201 {
		t.Fatalf("mint: %d %s", first.Status, first.Body)
	}
	secret := first.JSON(t)["key"].(string)
	retry := testenv.Do(t, h, "POST", "/api-keys", `{"name":"ci"}`, idem(acme.Admin, "mint-ci")...)
	if retry.Status != 409 || !strings.Contains(string(retry.Body), "already created") || strings.Contains(string(retry.Body), secret) {
		t.Fatalf("retry: %d %s", retry.Status, retry.Body)
	}
	items := idemItems(t, env, acme.ID)
	if len(items) != 1 {
		t.Fatalf("%d idempotency items", len(items))
	}
	item := items[0]
	if _, ok := item["body"]; ok || strings.Contains(fmt.Sprint(item), secret) {
		t.Fatalf("the answer with the key was stored: %v", item)
	}
	ttl, ok := item[tabledef.TTLAttribute].(*types.AttributeValueMemberN)
	if !ok {
		t.Fatalf("no TTL attribute: %v", item)
	}
	exp, _ := strconv.ParseInt(ttl.Value, 10, 64)
	if want := at.Add(24 * time.Hour).Unix(); exp != want {
		t.Fatalf("expires_at %d, want 24 hours from the request (%d)", exp, want)
	}
	at = at.Add(24 * time.Hour)
	if r := testenv.Do(t, h, "POST", "/api-keys", `{"name":"ci"}`, idem(acme.Admin, "mint-ci")...); r.Status != 409 {
		t.Fatalf("retry in the record's last second: %d %s", r.Status, r.Body)
	}
	at = at.Add(time.Second)
	if r := testenv.Do(t, h, "POST", "/api-keys", `{"name":"ci"}`, idem(acme.Admin, "mint-ci")...); r.Status != 201 || strings.Contains(string(r.Body), secret) {
		t.Fatalf("the key after the record expired: %d %s", r.Status, r.Body)
	}
}

// Concurrent submits with one key create exactly one key: one 201, the
// others 409 (in progress, or done with a secret not repeated).
func TestIdempotentConcurrentSubmit(t *testing.T) {
	env := testenv.New(t)
	acme := env.Company(t, "Acme")
	h := accounts.New(env.Deps)
	const n = 8
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := httptest.NewRequest("POST", testenv.Host+routes.BasePath+"/api-keys", strings.NewReader(`{"name":"deploy"}`))
			req.Header.Set("SERVICE-TOKEN", acme.Admin.APIKey)
			req.Header.Set(httpapi.IdempotencyKeyHeader, "deploy-key-1")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			codes[i] = rec.Code
		}()
	}
	wg.Wait()
	created := 0
	for _, c := range codes {
		switch c {
		case 201:
			created++
		case 409:
		default:
			t.Fatalf("answers %v", codes)
		}
	}
	if created != 1 {
		t.Fatalf("answers %v: want exactly one 201", codes)
	}
	list := testenv.Do(t, h, "GET", "/api-keys", "", testenv.Key(acme.Admin)...).JSON(t)
	if total := list["total_api_keys"].(float64); total != 2 { // the admin's own and the new one
		t.Fatalf("%v keys, want 2", total)
	}
}
