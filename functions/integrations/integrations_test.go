package integrations_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/codescan-api/functions/integrations"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/scmhost"
	"github.com/acme/codescan-api/shared/scmhost/scmhosttest"
	"github.com/acme/codescan-api/shared/secrets"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/acme/codescan-api/shared/store/schema"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// Tokens in GitHub's formats. None of them may appear in a response or log.
const (
	oldToken   = "ghp_OldT0kenOfTheCiBotAccount0000000001"
	newToken   = "github_pat_11ABCDEFG0NewT0kenForTheCiBot_xyz"
	otherToken = "ghp_T0kenOfSomeoneElse00000000000000002"
	badToken   = "ghp_RevokedOrTypo000000000000000000003"
	ciBotID    = 583231
)

var allTokens = []string{oldToken, newToken, otherToken, badToken}

type world struct {
	env      *testenv.Env
	h        http.Handler
	sealer   secrets.Sealer
	host     *scmhosttest.Server
	acme     *testenv.Company
	viewer   testenv.User // view only
	manager  testenv.User // view and manage
	writer   testenv.User // manage only
	plain    testenv.User // neither
	other    *testenv.Company
	ghes     schema.Integration // acme's, on the fake host under /api/v3, expired
	bodies   []string           // every response body, for the secret check
	strict   http.Handler       // same store, loopback not allowed
	otherInt schema.Integration
}

func setup(t *testing.T) *world {
	t.Helper()
	env := testenv.New(t)
	w := &world{env: env, sealer: testenv.Sealer(t)}
	w.h = integrations.NewWithOptions(env.Deps, integrations.Options{
		Sealer: w.sealer, Host: scmhost.New(scmhost.Options{AllowLoopback: true, Timeout: 2 * time.Second}),
	})
	w.strict = integrations.NewWithOptions(env.Deps, integrations.Options{
		Sealer: w.sealer, Host: scmhost.New(scmhost.Options{Timeout: 2 * time.Second}),
	})
	w.host = scmhosttest.New(t, "/api/v3")
	w.host.AddToken(oldToken, ciBotID, "acme-ci-bot")
	w.host.AddToken(newToken, ciBotID, "acme-ci-bot-renamed")
	w.host.AddToken(otherToken, 999, "mallory")

	w.acme = env.Company(t, "Acme")
	w.viewer = env.User(t, w.acme, testenv.UserSpec{Email: "view@acme.test", Permissions: []string{routes.PermViewIntegration}})
	w.manager = env.User(t, w.acme, testenv.UserSpec{Email: "ops@acme.test", Permissions: []string{routes.PermViewIntegration, routes.PermManageIntegration}})
	w.writer = env.User(t, w.acme, testenv.UserSpec{Email: "write@acme.test", Permissions: []string{routes.PermManageIntegration}})
	w.plain = env.User(t, w.acme, testenv.UserSpec{Email: "dev@acme.test", Permissions: []string{routes.PermChangeContentAccess}})
	w.other = env.Company(t, "Other")

	w.ghes = w.integration(t, w.acme.ID, schema.Integration{
		Name: "Acme GHES", AccountID: fmt.Sprint(ciBotID), AccountName: "acme-ci-bot",
		OrgAllowlist: []string{"acme", "acme-labs"}, BaseURL: w.host.URL, GatewayPrefix: "/api/v3", Expired: true,
	}, oldToken)
	w.otherInt = w.integration(t, w.other.ID, schema.Integration{
		Name: "Other GitHub", AccountID: "42", AccountName: "other-bot", BaseURL: "https://api.github.com",
	}, otherToken)
	return w
}

func (w *world) integration(t *testing.T, companyID int64, in schema.Integration, token string) schema.Integration {
	t.Helper()
	ctx := context.Background()
	in.CompanyID = companyID
	in.UUID = catalog.NewIntegrationUUID()
	sealed, err := w.sealer.Seal(ctx, token, catalog.IntegrationTokenRecord(companyID, in.UUID))
	if err != nil {
		t.Fatal(err)
	}
	in.SealedToken = sealed
	in, err = w.env.Store.Catalog.CreateIntegration(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func (w *world) stored(t *testing.T, in schema.Integration) schema.Integration {
	t.Helper()
	got, err := w.env.Store.Catalog.GetIntegration(context.Background(), in.CompanyID, in.UUID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func (w *world) storedToken(t *testing.T, in schema.Integration) string {
	t.Helper()
	s := w.stored(t, in)
	tok, err := w.sealer.Open(context.Background(), s.SealedToken, catalog.IntegrationTokenRecord(s.CompanyID, s.UUID))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func (w *world) do(t *testing.T, h http.Handler, method, path, body string, header ...string) *testenv.Response {
	t.Helper()
	r := testenv.Do(t, h, method, path, body, header...)
	w.bodies = append(w.bodies, string(r.Body))
	return r
}

func (w *world) patch(t *testing.T, u testenv.User, id, body string) *testenv.Response {
	t.Helper()
	return w.do(t, w.h, "PATCH", "/integrations/scm-provider/"+id, body, append(testenv.Key(u), "Content-Type", "application/json")...)
}

// noSecrets fails when a token appears in a response, a log line or the
// stored items, in plain text.
func (w *world) noSecrets(t *testing.T, items ...schema.Integration) {
	t.Helper()
	logs := w.env.Logs.String()
	if logs == "" {
		t.Fatal("no request was logged")
	}
	stored, _ := json.Marshal(items)
	for _, tok := range allTokens {
		for _, b := range w.bodies {
			if strings.Contains(b, tok) {
				t.Fatalf("a response holds a token: %s", b)
			}
		}
		if strings.Contains(logs, tok) {
			t.Fatalf("the log holds a token: %s", logs)
		}
		if strings.Contains(string(stored), tok) {
			t.Fatalf("a token is stored in plain text: %s", stored)
		}
	}
	for _, b := range w.bodies {
		if strings.Contains(b, "secure_token\":") || strings.Contains(b, "sealed") {
			t.Fatalf("a response names the token field: %s", b)
		}
	}
}

type integrationJSON struct {
	ID            int64    `json:"id"`
	UUID          string   `json:"uuid"`
	Type          string   `json:"type"`
	Name          string   `json:"name"`
	AccountID     string   `json:"account_id"`
	AccountName   string   `json:"account_name"`
	OrgAllowlist  []string `json:"org_allowlist"`
	BaseURL       string   `json:"base_url"`
	GatewayPrefix string   `json:"gateway_prefix"`
	Expired       bool     `json:"expired"`
	CreatedAt     string   `json:"created_at"`
	UpdatedAt     string   `json:"updated_at"`
}

func expect(in schema.Integration) integrationJSON {
	orgs := in.OrgAllowlist
	if orgs == nil {
		orgs = []string{}
	}
	return integrationJSON{ID: in.ID, UUID: in.UUID, Type: "scm-provider", Name: in.Name, AccountID: in.AccountID,
		AccountName: in.AccountName, OrgAllowlist: orgs, BaseURL: in.BaseURL, GatewayPrefix: in.GatewayPrefix,
		Expired: in.Expired, CreatedAt: in.CreatedAt, UpdatedAt: in.UpdatedAt}
}

type oneBody struct {
	Status      string          `json:"status"`
	Integration integrationJSON `json:"integration"`
	Verified    *bool           `json:"credentials_verified"`
}

func TestListAndGet(t *testing.T) {
	t.Parallel()
	w := setup(t)
	gh := w.integration(t, w.acme.ID, schema.Integration{Name: "GitHub.com", AccountID: "77", AccountName: "acme-org-bot", BaseURL: "https://api.github.com"}, newToken)
	third := w.integration(t, w.acme.ID, schema.Integration{Name: "Mirror", AccountID: "78", AccountName: "mirror", BaseURL: "https://git.acme.example", GatewayPrefix: "/api/v3"}, newToken)
	want := []integrationJSON{expect(w.ghes), expect(gh), expect(third)}

	var got []integrationJSON
	for page := 1; page <= 3; page++ {
		r := w.do(t, w.h, "GET", fmt.Sprintf("/integrations/scm-provider?page=%d&page_size=2&extra=ignored", page), "", testenv.Key(w.viewer)...)
		var body struct {
			Status            string            `json:"status"`
			Integrations      []integrationJSON `json:"integrations"`
			Page              int               `json:"page"`
			TotalPages        int               `json:"total_pages"`
			TotalIntegrations int               `json:"total_integrations"`
		}
		r.Decode(t, &body)
		if r.Status != 200 || body.Status != "ok" || body.Page != page || body.TotalPages != 2 || body.TotalIntegrations != 3 {
			t.Fatalf("page %d: %d %s", page, r.Status, r.Body)
		}
		if page == 3 && len(body.Integrations) != 0 {
			t.Fatalf("page past the end: %s", r.Body)
		}
		got = append(got, body.Integrations...)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("list\n got %+v\nwant %+v", got, want)
	}
	r := w.do(t, w.h, "GET", "/integrations/scm-provider", "", testenv.Bearer(w.env.Token(t, w.manager))...)
	if b := r.JSON(t); r.Status != 200 || b["page"].(float64) != 1 || len(b["integrations"].([]any)) != 3 {
		t.Fatalf("defaults: %s", r.Body)
	}
	for _, q := range []string{"page=0", "page=-2", "page=one", "page_size=0", "page_size=51", "page_size=x"} {
		if r := w.do(t, w.h, "GET", "/integrations/scm-provider?"+q, "", testenv.Key(w.viewer)...); r.Status != 400 {
			t.Fatalf("%s: %d %s", q, r.Status, r.Body)
		}
	}
	if r := w.do(t, w.h, "GET", "/integrations/scm-provider?page_size=50", "", testenv.Key(w.viewer)...); r.Status != 200 {
		t.Fatalf("page_size=50: %d", r.Status)
	}

	for _, id := range []string{gh.UUID, strings.ToUpper(gh.UUID)} {
		r := w.do(t, w.h, "GET", "/integrations/scm-provider/"+id, "", testenv.Key(w.viewer)...)
		var body oneBody
		r.Decode(t, &body)
		if r.Status != 200 || body.Status != "ok" || !reflect.DeepEqual(body.Integration, expect(gh)) || body.Verified != nil {
			t.Fatalf("get %s: %d %s", id, r.Status, r.Body)
		}
	}
	for _, c := range []struct {
		id     string
		status int
		want   string
	}{
		{w.otherInt.UUID, 404, `{"error":"Integration not found"}`},
		{"6f1c2b9e-0000-4000-8000-000000000000", 404, `{"error":"Integration not found"}`},
		{"not-a-uuid", 400, `{"error":"integration_uuid must be a UUID"}`},
		{"12345", 400, `{"error":"integration_uuid must be a UUID"}`},
	} {
		r := w.do(t, w.h, "GET", "/integrations/scm-provider/"+c.id, "", testenv.Key(w.viewer)...)
		if r.Status != c.status || strings.TrimSpace(string(r.Body)) != c.want {
			t.Fatalf("get %s: %d %s", c.id, r.Status, r.Body)
		}
	}

	// The other company sees only its own.
	r = w.do(t, w.h, "GET", "/integrations/scm-provider", "", testenv.Key(w.other.Admin)...)
	var ob struct {
		Integrations      []integrationJSON `json:"integrations"`
		TotalIntegrations int               `json:"total_integrations"`
	}
	r.Decode(t, &ob)
	if ob.TotalIntegrations != 1 || len(ob.Integrations) != 1 || ob.Integrations[0].UUID != w.otherInt.UUID {
		t.Fatalf("other company list: %s", r.Body)
	}
	if r := w.do(t, w.h, "GET", "/integrations/scm-provider/"+w.ghes.UUID, "", testenv.Key(w.other.Admin)...); r.Status != 404 {
		t.Fatalf("other company get: %d %s", r.Status, r.Body)
	}

	// View permission is needed to read; managing alone is not enough.
	for _, u := range []testenv.User{w.plain, w.writer} {
		for _, p := range []string{"/integrations/scm-provider", "/integrations/scm-provider/" + w.ghes.UUID} {
			if r := w.do(t, w.h, "GET", p, "", testenv.Key(u)...); r.Status != 403 || strings.TrimSpace(string(r.Body)) != `{"error":"Permission denied"}` {
				t.Fatalf("%s as %s: %d %s", p, u.Email, r.Status, r.Body)
			}
			if r := w.do(t, w.h, "GET", p, ""); r.Status != 401 {
				t.Fatalf("%s without credential: %d", p, r.Status)
			}
		}
	}
	w.noSecrets(t, w.stored(t, w.ghes), w.stored(t, gh))
}

func TestPatchWithoutVerification(t *testing.T) {
	t.Parallel()
	w := setup(t)
	before := w.stored(t, w.ghes)
	// updated_at has second precision: the PATCH is served by a store
	// whose clock stands an hour later, not after a second's sleep.
	later := time.Now().Add(time.Hour)
	deps := w.env.Deps
	deps.Store = store.New(w.env.Store.Client(), w.env.Store.TableName(), store.WithClock(func() time.Time { return later }))
	w.h = integrations.NewWithOptions(deps, integrations.Options{
		Sealer: w.sealer, Host: scmhost.New(scmhost.Options{AllowLoopback: true, Timeout: 2 * time.Second}),
	})
	r := w.patch(t, w.manager, w.ghes.UUID, `{"name":"  Acme Enterprise  ","org_allowlist":[" acme ","ACME","platform"]}`)
	var body oneBody
	r.Decode(t, &body)
	if r.Status != 200 || body.Verified == nil || *body.Verified {
		t.Fatalf("patch: %d %s", r.Status, r.Body)
	}
	after := w.stored(t, w.ghes)
	want := before
	want.Name, want.OrgAllowlist = "Acme Enterprise", []string{"acme", "platform"}
	want.Revision, want.UpdatedAt = before.Revision+1, after.UpdatedAt
	if !reflect.DeepEqual(after, want) || after.UpdatedAt == before.UpdatedAt {
		t.Fatalf("stored\n got %+v\nwant %+v", after, want)
	}
	if stamp := later.UTC().Format(time.RFC3339); after.UpdatedAt != stamp {
		t.Fatalf("updated_at %s, want the store's clock %s", after.UpdatedAt, stamp)
	}
	if !reflect.DeepEqual(body.Integration, expect(after)) || !body.Integration.Expired {
		t.Fatalf("answer %+v, stored %+v", body.Integration, after)
	}
	if w.host.Requests() != 0 {
		t.Fatal("the host was called without a credential change")
	}
	// An empty array clears the allowlist; an empty body changes nothing.
	r = w.patch(t, w.writer, w.ghes.UUID, `{"org_allowlist":[]}`)
	if r.Status != 200 || w.stored(t, w.ghes).OrgAllowlist != nil || !strings.Contains(string(r.Body), `"org_allowlist":[]`) {
		t.Fatalf("clear allowlist: %d %s", r.Status, r.Body)
	}
	cleared := w.stored(t, w.ghes)
	r = w.patch(t, w.manager, w.ghes.UUID, `{}`)
	r.Decode(t, &body)
	if r.Status != 200 || *body.Verified || !reflect.DeepEqual(w.stored(t, cleared), cleared) {
		t.Fatalf("empty patch: %d %s", r.Status, r.Body)
	}
	w.noSecrets(t, w.stored(t, w.ghes))
}

func TestPatchVerifiesNewToken(t *testing.T) {
	t.Parallel()
	w := setup(t)
	before := w.stored(t, w.ghes)
	r := w.patch(t, w.manager, w.ghes.UUID, `{"secure_token":"`+newToken+`","name":"Acme GHES (rotated)"}`)
	var body oneBody
	r.Decode(t, &body)
	if r.Status != 200 || !*body.Verified || body.Integration.Expired || body.Integration.AccountName != "acme-ci-bot-renamed" || body.Integration.Name != "Acme GHES (rotated)" {
		t.Fatalf("token change: %d %s", r.Status, r.Body)
	}
	after := w.stored(t, w.ghes)
	if after.Expired || after.SealedToken == before.SealedToken || after.Revision != before.Revision+1 || after.AccountID != before.AccountID {
		t.Fatalf("stored: %+v", after)
	}
	if tok := w.storedToken(t, w.ghes); tok != newToken {
		t.Fatal("the stored token is not the new one")
	}
	// The sealed token is bound to this integration: it does not open for another.
	if _, err := w.sealer.Open(context.Background(), after.SealedToken, catalog.IntegrationTokenRecord(w.acme.ID, w.otherInt.UUID)); !errors.Is(err, secrets.ErrMalformed) {
		t.Fatalf("sealed token opened for another record: %v", err)
	}
	if w.host.Requests() != 1 {
		t.Fatalf("host requests: %d", w.host.Requests())
	}
	w.noSecrets(t, after)
}

// Moving the integration to another address re-verifies with the stored
// token there.
func TestPatchAddressUsesStoredToken(t *testing.T) {
	t.Parallel()
	w := setup(t)
	moved := scmhosttest.New(t, "")
	moved.AddToken(oldToken, ciBotID, "acme-ci-bot")
	r := w.patch(t, w.manager, w.ghes.UUID, fmt.Sprintf(`{"base_url":"%s/","gateway_prefix":"/"}`, moved.URL))
	var body oneBody
	r.Decode(t, &body)
	if r.Status != 200 || !*body.Verified || body.Integration.BaseURL != moved.URL || body.Integration.GatewayPrefix != "" || body.Integration.Expired {
		t.Fatalf("move: %d %s", r.Status, r.Body)
	}
	if moved.Requests() != 1 || w.host.Requests() != 0 || w.storedToken(t, w.ghes) != oldToken {
		t.Fatalf("requests: moved %d, old %d", moved.Requests(), w.host.Requests())
	}
	w.noSecrets(t, w.stored(t, w.ghes))
}

// answering is a host that answers every request with status and body.
func answering(t *testing.T, status int, body string, header ...string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			rw.Header().Set(header[i], header[i+1])
		}
		rw.WriteHeader(status)
		_, _ = rw.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

func TestPatchFailuresChangeNothing(t *testing.T) {
	t.Parallel()
	w := setup(t)
	before := w.stored(t, w.ghes)
	str := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	orgs := make([]string, integrations.MaxOrgs+1)
	for i := range orgs {
		orgs[i] = fmt.Sprintf("org%d", i)
	}
	manyOrgs, _ := json.Marshal(orgs)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(w.host.URL, "http://"))

	cases := []struct {
		name   string
		h      http.Handler
		body   string
		status int
		want   string // the whole body, or a part of it after "~"
	}{
		// Verification failures.
		{"bad token", w.h, `{"name":"x","secure_token":"` + badToken + `"}`, 422, `{"error":"Credential verification failed: the host rejected the token (401)"}`},
		{"another account's token", w.h, `{"secure_token":"` + otherToken + `"}`, 422,
			`{"error":"Credential verification failed: the token belongs to account 999 (mallory), not to this integration's account 583231"}`},
		{"no user endpoint", w.h, `{"gateway_prefix":"/api/v4"}`, 422, `~no authenticated-user endpoint`},
		{"redirect", w.h, `{"base_url":` + str(answering(t, 302, "", "Location", w.host.URL+"/api/v3/user")) + `}`, 422, `~redirect (302)`},
		{"host rate limit", w.h, `{"base_url":` + str(answering(t, 403, `{"message":"API rate limit exceeded"}`, "X-RateLimit-Remaining", "0")) + `}`, 422, `~rate limit`},
		{"host down", w.h, `{"base_url":` + str(closedPort(t)) + `}`, 502, `{"error":"Credential verification failed: the host could not be reached"}`},
		{"host error", w.h, `{"base_url":` + str(answering(t, 503, "unavailable")) + `}`, 502, `{"error":"Credential verification failed: the host failed to answer (503)"}`},
		{"not a user", w.h, `{"base_url":` + str(answering(t, 200, `<html></html>`)) + `}`, 502, `~not a user account`},
		// Addresses that are not allowed.
		{"private address", w.h, `{"base_url":"https://10.0.0.5"}`, 400, `~must not point at a private`},
		{"metadata address", w.h, `{"base_url":"http://169.254.169.254/latest/meta-data"}`, 400, `~must not point at a private`},
		{"ipv6 unique local", w.h, `{"base_url":"https://[fd00:ec2::254]"}`, 400, `~must not point at a private`},
		{"http without loopback permission", w.strict, `{"base_url":"http://api.github.com"}`, 400, `{"error":"base_url must use https"}`},
		{"name resolving to loopback", w.strict, `{"base_url":"https://localhost:` + port + `"}`, 400,
			`{"error":"Credential verification failed: base_url must not point at a private, loopback, link-local or cloud-metadata address"}`},
		{"stored http address without loopback permission", w.strict, `{"secure_token":"` + newToken + `"}`, 400, `{"error":"base_url must use https"}`},
		// Bad values.
		{"base_url not absolute", w.h, `{"base_url":"api.github.com"}`, 400, `~absolute https URL`},
		{"base_url with credentials", w.h, `{"base_url":"https://u:p@github.example.com"}`, 400, `~credentials`},
		{"base_url with query", w.h, `{"base_url":"https://github.example.com/?a=1"}`, 400, `~query`},
		{"bad prefix", w.h, `{"gateway_prefix":"/api/../v3"}`, 400, `~gateway_prefix must be empty or a path`},
		{"empty token", w.h, `{"secure_token":""}`, 400, `{"error":"secure_token must be 1 to 1024 printable characters without white space"}`},
		{"token with space", w.h, `{"secure_token":"ghp_abc def"}`, 400, `~secure_token must be`},
		{"token too long", w.h, `{"secure_token":"` + strings.Repeat("a", integrations.MaxTokenLength+1) + `"}`, 400, `~secure_token must be`},
		{"token number", w.h, `{"secure_token":12345}`, 400, `{"error":"secure_token must be a string"}`},
		{"token null", w.h, `{"secure_token":null}`, 400, `{"error":"secure_token must be a string"}`},
		{"blank name", w.h, `{"name":"   "}`, 400, `{"error":"name must hold 1 to 100 characters"}`},
		{"long name", w.h, `{"name":"` + strings.Repeat("n", integrations.MaxNameLength+1) + `"}`, 400, `{"error":"name must hold 1 to 100 characters"}`},
		{"name null", w.h, `{"name":null}`, 400, `{"error":"name must be a string"}`},
		{"name array", w.h, `{"name":["a"]}`, 400, `{"error":"name must be a string"}`},
		{"orgs string", w.h, `{"org_allowlist":"acme"}`, 400, `{"error":"org_allowlist must be an array of strings"}`},
		{"orgs numbers", w.h, `{"org_allowlist":[1]}`, 400, `{"error":"org_allowlist must be an array of strings"}`},
		{"orgs null entry", w.h, `{"org_allowlist":["a",null]}`, 400, `{"error":"org_allowlist must be an array of strings"}`},
		{"orgs null", w.h, `{"org_allowlist":null}`, 400, `{"error":"org_allowlist must be an array of strings"}`},
		{"orgs empty entry", w.h, `{"org_allowlist":["a"," "]}`, 400, `{"error":"org_allowlist entries must hold 1 to 100 characters"}`},
		{"orgs too many", w.h, `{"org_allowlist":` + string(manyOrgs) + `}`, 400, `{"error":"org_allowlist may hold at most 100 entries"}`},
		{"unknown field", w.h, `{"name":"x","account_id":"1"}`, 400, `{"error":"Unknown field \"account_id\" (allowed: secure_token, name, org_allowlist, base_url, gateway_prefix, provider, webhook_secret, inline_comments)"}`},
		{"inline not an object", w.h, `{"inline_comments":true}`, 400, `{"error":"inline_comments must be an object {enabled, max_per_scan}"}`},
		{"inline null", w.h, `{"inline_comments":null}`, 400, `~inline_comments must be an object`},
		{"inline without enabled", w.h, `{"inline_comments":{"max_per_scan":5}}`, 400, `{"error":"inline_comments.enabled is required"}`},
		{"inline enabled string", w.h, `{"inline_comments":{"enabled":"yes"}}`, 400, `{"error":"inline_comments.enabled must be a boolean"}`},
		{"inline max zero", w.h, `{"inline_comments":{"enabled":true,"max_per_scan":0}}`, 400, `~max_per_scan must be an integer from 1 to 50`},
		{"inline max too big", w.h, `{"inline_comments":{"enabled":true,"max_per_scan":51}}`, 400, `~max_per_scan must be an integer from 1 to 50`},
		{"inline max fraction", w.h, `{"inline_comments":{"enabled":true,"max_per_scan":2.5}}`, 400, `~max_per_scan must be an integer`},
		{"inline unknown member", w.h, `{"inline_comments":{"enabled":true,"per_file":1}}`, 400, `{"error":"Unknown field \"per_file\" in inline_comments (allowed: enabled, max_per_scan)"}`},
		{"read-only field", w.h, `{"expired":false}`, 400, `~Unknown field \"expired\"`},
		{"invalid json", w.h, `{"name":`, 400, `{"error":"Invalid JSON body"}`},
		{"array body", w.h, `[]`, 400, `{"error":"Invalid JSON body"}`},
		{"empty body", w.h, ``, 400, `{"error":"Invalid JSON body"}`},
		{"oversized", w.h, `{"name":"` + strings.Repeat("a", 6<<20) + `"}`, 413, ``},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := w.do(t, c.h, "PATCH", "/integrations/scm-provider/"+w.ghes.UUID, c.body, testenv.Key(w.manager)...)
			got := strings.TrimSpace(string(r.Body))
			ok := got == c.want
			if part, isPart := strings.CutPrefix(c.want, "~"); isPart {
				ok = strings.Contains(got, part)
			}
			if r.Status != c.status || (c.want != "" && !ok) {
				t.Fatalf("%d %s, want %d %s", r.Status, got, c.status, c.want)
			}
			if after := w.stored(t, w.ghes); !reflect.DeepEqual(after, before) {
				t.Fatalf("stored record changed:\n%+v\n%+v", after, before)
			}
		})
	}
	w.noSecrets(t, w.stored(t, w.ghes))
}

func TestPatchAccess(t *testing.T) {
	t.Parallel()
	w := setup(t)
	before, otherBefore := w.stored(t, w.ghes), w.stored(t, w.otherInt)
	body := `{"name":"Taken over","secure_token":"` + otherToken + `"}`
	for _, c := range []struct {
		name   string
		header []string
		id     string
		status int
		want   string
	}{
		{"no credential", nil, w.ghes.UUID, 401, `{"error":"Missing or invalid authorization header"}`},
		{"viewer", testenv.Key(w.viewer), w.ghes.UUID, 403, `{"error":"Permission denied"}`},
		{"no permission", testenv.Key(w.plain), w.ghes.UUID, 403, `{"error":"Permission denied"}`},
		{"other company's admin", testenv.Key(w.other.Admin), w.ghes.UUID, 404, `{"error":"Integration not found"}`},
		{"acme on the other company's integration", testenv.Key(w.manager), w.otherInt.UUID, 404, `{"error":"Integration not found"}`},
		{"unknown uuid", testenv.Key(w.manager), "0b3e8a52-7c1d-4e7a-9d3f-5c8f2b1a6e90", 404, `{"error":"Integration not found"}`},
		{"malformed uuid", testenv.Key(w.manager), "0b3e8a52", 400, `{"error":"integration_uuid must be a UUID"}`},
	} {
		r := w.do(t, w.h, "PATCH", "/integrations/scm-provider/"+c.id, body, c.header...)
		if r.Status != c.status || strings.TrimSpace(string(r.Body)) != c.want {
			t.Fatalf("%s: %d %s", c.name, r.Status, r.Body)
		}
	}
	if !reflect.DeepEqual(w.stored(t, w.ghes), before) || !reflect.DeepEqual(w.stored(t, w.otherInt), otherBefore) || w.host.Requests() != 0 {
		t.Fatal("a rejected request changed something or called the host")
	}
	// Managing without viewing may still update.
	if r := w.patch(t, w.writer, w.ghes.UUID, `{"name":"Writer"}`); r.Status != 200 {
		t.Fatalf("writer: %d %s", r.Status, r.Body)
	}
	w.noSecrets(t)
}

// Two updates of one integration cannot interleave: a token change held up
// by the host loses to a rename that lands meanwhile, and changes nothing.
func TestConcurrentPatch(t *testing.T) {
	t.Parallel()
	w := setup(t)
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	let := func() { once.Do(func() { close(release) }) }
	t.Cleanup(let) // a failed assertion must not leave the host waiting
	w.host.Before = func(*http.Request) {
		close(entered)
		<-release
	}
	url := testenv.Host + routes.BasePath + "/integrations/scm-provider/" + w.ghes.UUID
	done := make(chan *testenv.Response, 1)
	go func() {
		req := httptest.NewRequest("PATCH", url, strings.NewReader(`{"secure_token":"`+newToken+`"}`))
		req.Header.Set("SERVICE-TOKEN", w.manager.APIKey)
		rec := httptest.NewRecorder()
		w.h.ServeHTTP(rec, req)
		done <- &testenv.Response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
	}()
	<-entered
	if r := w.patch(t, w.manager, w.ghes.UUID, `{"name":"Renamed meanwhile"}`); r.Status != 200 {
		t.Fatalf("rename: %d %s", r.Status, r.Body)
	}
	let()
	r := <-done
	testenv.CheckOpenAPI(t, "PATCH", url, r)
	w.bodies = append(w.bodies, string(r.Body))
	if r.Status != http.StatusConflict {
		t.Fatalf("token change after a concurrent rename: %d %s", r.Status, r.Body)
	}
	after := w.stored(t, w.ghes)
	if after.Name != "Renamed meanwhile" || !after.Expired || w.storedToken(t, w.ghes) != oldToken {
		t.Fatalf("stored after the lost update: %+v", after)
	}
	w.noSecrets(t, after)
}

// failingSealer opens stored tokens but cannot seal new ones (a KMS outage).
type failingSealer struct{ secrets.Sealer }

func (failingSealer) Seal(context.Context, string, string) (string, error) {
	return "", errors.New("kms encrypt: service unavailable")
}

// An internal failure after a successful check is a 500 that changes
// nothing and logs no secret.
func TestSealFailure(t *testing.T) {
	t.Parallel()
	w := setup(t)
	h := integrations.NewWithOptions(w.env.Deps, integrations.Options{
		Sealer: failingSealer{w.sealer}, Host: scmhost.New(scmhost.Options{AllowLoopback: true}),
	})
	before := w.stored(t, w.ghes)
	r := w.do(t, h, "PATCH", "/integrations/scm-provider/"+w.ghes.UUID, `{"secure_token":"`+newToken+`"}`, testenv.Key(w.manager)...)
	if r.Status != 500 || strings.TrimSpace(string(r.Body)) != `{"error":"Internal server error"}` {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	if !reflect.DeepEqual(w.stored(t, w.ghes), before) {
		t.Fatal("stored record changed")
	}
	if !strings.Contains(w.env.Logs.String(), "service unavailable") {
		t.Fatalf("the failure was not logged: %s", w.env.Logs)
	}
	// A stored token that no longer opens (another key) asks for a new one.
	h = integrations.NewWithOptions(w.env.Deps, integrations.Options{
		Sealer: testenv.Sealer(t), Host: scmhost.New(scmhost.Options{AllowLoopback: true}),
	})
	r = w.do(t, h, "PATCH", "/integrations/scm-provider/"+w.ghes.UUID, `{"gateway_prefix":"/api/v3"}`, testenv.Key(w.manager)...)
	if r.Status != 422 || !strings.Contains(string(r.Body), "send secure_token") || !reflect.DeepEqual(w.stored(t, w.ghes), before) {
		t.Fatalf("unreadable stored token: %d %s", r.Status, r.Body)
	}
	w.noSecrets(t, before)
}

func TestCursorPagingMatchesPageNumbers(t *testing.T) {
	t.Parallel()
	w := setup(t)
	want := []int64{w.ghes.ID}
	for i := range 6 {
		in := w.integration(t, w.acme.ID, schema.Integration{Name: fmt.Sprintf("GH %d", i), AccountID: "1", BaseURL: "https://api.github.com"}, oldToken)
		want = append(want, in.ID)
	}
	type page struct {
		Integrations      []integrationJSON `json:"integrations"`
		Page              int               `json:"page"`
		TotalPages        int               `json:"total_pages"`
		TotalIntegrations int               `json:"total_integrations"`
		NextPageToken     string            `json:"next_page_token"`
	}
	list := func(u testenv.User, query string) (page, *testenv.Response) {
		r := w.do(t, w.h, "GET", "/integrations/scm-provider?"+query, "", testenv.Key(u)...)
		var p page
		if r.Status == 200 {
			r.Decode(t, &p)
		}
		return p, r
	}
	var byNumber, byCursor []int64
	for n := 1; n <= 3; n++ {
		p, r := list(w.viewer, fmt.Sprintf("page=%d&page_size=3", n))
		if r.Status != 200 || p.Page != n || p.TotalIntegrations != 7 || p.TotalPages != 3 {
			t.Fatalf("page %d: %d %s", n, r.Status, r.Body)
		}
		for _, in := range p.Integrations {
			byNumber = append(byNumber, in.ID)
		}
	}
	query, first := "page_size=3", ""
	for n := 1; ; n++ {
		p, r := list(w.viewer, query)
		if r.Status != 200 || p.Page != n || p.TotalIntegrations != 7 {
			t.Fatalf("cursor page %d: %d %s", n, r.Status, r.Body)
		}
		for _, in := range p.Integrations {
			byCursor = append(byCursor, in.ID)
		}
		if p.NextPageToken == "" {
			break
		}
		if first == "" {
			first = p.NextPageToken
		}
		query = "page_size=3&next_page_token=" + p.NextPageToken
	}
	if !slices.Equal(byNumber, want) || !slices.Equal(byCursor, want) {
		t.Fatalf("by number %v, by cursor %v, want %v", byNumber, byCursor, want)
	}
	data, sum, _ := strings.Cut(first, ".")
	for name, c := range map[string]struct {
		u     testenv.User
		token string
	}{
		"foreign company": {w.other.Admin, first},
		"edited":          {w.viewer, "A" + data[1:] + "." + sum},
		"unsigned":        {w.viewer, data},
	} {
		if _, r := list(c.u, "next_page_token="+c.token); r.Status != 400 || strings.TrimSpace(string(r.Body)) != `{"error":"Invalid page token"}` {
			t.Errorf("%s token: %d %s", name, r.Status, r.Body)
		}
	}
	if p, r := list(w.other.Admin, ""); r.Status != 200 || p.TotalIntegrations != 1 || len(p.Integrations) != 1 {
		t.Fatalf("other company: %d %s", r.Status, r.Body)
	}
}

// The inline review comments setting: off with the default bound until
// set, replaced whole by a PATCH (max_per_scan defaulting to 10), never a
// reason to call the host, and another company's integration answers as
// a missing one.
func TestPatchInlineComments(t *testing.T) {
	t.Parallel()
	w := setup(t)
	r := w.do(t, w.h, "GET", "/integrations/scm-provider/"+w.ghes.UUID, "", testenv.Key(w.viewer)...)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"inline_comments":{"enabled":false,"max_per_scan":10}`) {
		t.Fatalf("get: %d %s", r.Status, r.Body)
	}
	r = w.patch(t, w.manager, w.ghes.UUID, `{"inline_comments":{"enabled":true,"max_per_scan":3}}`)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"inline_comments":{"enabled":true,"max_per_scan":3}`) {
		t.Fatalf("patch: %d %s", r.Status, r.Body)
	}
	if got := w.stored(t, w.ghes).InlineComments; got == nil || *got != (schema.InlineComments{Enabled: true, MaxPerScan: 3}) {
		t.Fatalf("stored %+v", got)
	}
	r = w.patch(t, w.manager, w.ghes.UUID, `{"inline_comments":{"enabled":false}}`)
	if got := w.stored(t, w.ghes).InlineComments; r.Status != 200 || got == nil || *got != (schema.InlineComments{MaxPerScan: 10}) {
		t.Fatalf("replaced: %d %s %+v", r.Status, r.Body, got)
	}
	if w.host.Requests() != 0 {
		t.Fatal("the host was called for a setting")
	}
	other := w.env.Company(t, "Globex")
	theirs := w.integration(t, other.ID, schema.Integration{Name: "Theirs", AccountID: "5", AccountName: "globex", BaseURL: "https://api.github.com"}, newToken)
	if r := w.patch(t, w.manager, theirs.UUID, `{"inline_comments":{"enabled":true}}`); r.Status != 404 || w.stored(t, theirs).InlineComments != nil {
		t.Fatalf("another company's integration: %d %s", r.Status, r.Body)
	}
}
