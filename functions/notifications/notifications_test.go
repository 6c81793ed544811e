package notifications_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/acme/codescan-api/functions/notifications"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/notify"
	"github.com/acme/codescan-api/shared/store"
)

func TestMain(m *testing.M) { testenv.Main(m) }

type pref struct {
	TypeCode       string            `json:"type_code"`
	EmailEnabled   bool              `json:"email_enabled"`
	WebhookEnabled bool              `json:"webhook_enabled"`
	Sources        map[string]string `json:"sources"`
}

func prefs(t *testing.T, h http.Handler, u testenv.User) map[string]pref {
	t.Helper()
	res := testenv.Do(t, h, "GET", "/notifications/preferences", "", testenv.Key(u)...)
	if res.Status != 200 {
		t.Fatalf("GET preferences: %d %s", res.Status, res.Body)
	}
	var body struct {
		Preferences []pref `json:"preferences"`
	}
	res.Decode(t, &body)
	out := map[string]pref{}
	for _, p := range body.Preferences {
		out[p.TypeCode] = p
	}
	if len(out) != len(notify.Types) {
		t.Fatalf("got %d types, want %d", len(out), len(notify.Types))
	}
	return out
}

func TestInheritance(t *testing.T) {
	env := testenv.New(t)
	h := notifications.New(env.Deps)
	acme := env.Company(t, "Acme")
	member := env.User(t, acme, testenv.UserSpec{Email: "dev@acme.test"})
	other := env.Company(t, "Other")

	// scan_completed: platform email=false webhook=true.
	p := prefs(t, h, member)["scan_completed"]
	if p.EmailEnabled || !p.WebhookEnabled || p.Sources["email_enabled"] != "platform" {
		t.Fatalf("platform defaults: %+v", p)
	}

	post := func(u testenv.User, path, body string) *testenv.Response {
		t.Helper()
		return testenv.Do(t, h, "POST", path, body, append(testenv.Key(u), "Content-Type", "application/json")...)
	}
	if r := post(acme.Admin, "/notifications/company-defaults/scan_completed", `{"email_enabled": true}`); r.Status != 200 || string(r.Body) != "{\"status\":\"ok\"}\n" {
		t.Fatalf("company default: %d %s", r.Status, r.Body)
	}
	p = prefs(t, h, member)["scan_completed"]
	if !p.EmailEnabled || p.Sources["email_enabled"] != "company" || !p.WebhookEnabled || p.Sources["webhook_enabled"] != "platform" {
		t.Fatalf("company layer: %+v", p)
	}

	if r := post(member, "/notifications/preferences/scan_completed", `{"email_enabled": false, "webhook_enabled": false}`); r.Status != 200 {
		t.Fatalf("user pref: %d %s", r.Status, r.Body)
	}
	p = prefs(t, h, member)["scan_completed"]
	if p.EmailEnabled || p.Sources["email_enabled"] != "user" || p.WebhookEnabled || p.Sources["webhook_enabled"] != "user" {
		t.Fatalf("user layer: %+v", p)
	}

	// Partial update: only webhook back to inherit; email stays the user's.
	if r := post(member, "/notifications/preferences/scan_completed", `{"webhook_enabled": null}`); r.Status != 200 {
		t.Fatalf("user null: %d %s", r.Status, r.Body)
	}
	p = prefs(t, h, member)["scan_completed"]
	if p.EmailEnabled || p.Sources["email_enabled"] != "user" || !p.WebhookEnabled || p.Sources["webhook_enabled"] != "platform" {
		t.Fatalf("after webhook null: %+v", p)
	}
	// null on the user restores the company default.
	post(member, "/notifications/preferences/scan_completed", `{"email_enabled": null}`)
	if p = prefs(t, h, member)["scan_completed"]; !p.EmailEnabled || p.Sources["email_enabled"] != "company" {
		t.Fatalf("after email null: %+v", p)
	}
	// null on the company restores the platform default.
	post(acme.Admin, "/notifications/company-defaults/scan_completed", `{"email_enabled": null}`)
	if p = prefs(t, h, member)["scan_completed"]; p.EmailEnabled || p.Sources["email_enabled"] != "platform" {
		t.Fatalf("after company null: %+v", p)
	}

	// The admin's own preferences are separate from the member's.
	post(member, "/notifications/preferences/weekly_digest", `{"email_enabled": false}`)
	if p = prefs(t, h, acme.Admin)["weekly_digest"]; !p.EmailEnabled || p.Sources["email_enabled"] != "platform" {
		t.Fatalf("admin sees member's preference: %+v", p)
	}

	// Another company sees none of Acme's settings.
	post(acme.Admin, "/notifications/company-defaults/sla_breach", `{"email_enabled": false}`)
	if p = prefs(t, h, other.Admin)["sla_breach"]; !p.EmailEnabled || p.Sources["email_enabled"] != "platform" {
		t.Fatalf("isolation: %+v", p)
	}
}

func TestErrors(t *testing.T) {
	env := testenv.New(t)
	h := notifications.New(env.Deps)
	acme := env.Company(t, "Acme")
	member := env.User(t, acme, testenv.UserSpec{Email: "dev@acme.test", Permissions: []string{"integrations.view_integration"}})

	cases := []struct {
		name, path, body string
		user             testenv.User
		status           int
		want             string
	}{
		{"not admin", "/notifications/company-defaults/scan_completed", `{"email_enabled":true}`, member, 403, `{"error":"Admin permission required"}`},
		{"unknown type company", "/notifications/company-defaults/nope", `{"email_enabled":true}`, acme.Admin, 404, `{"error":"Unknown notification type"}`},
		{"unknown type user", "/notifications/preferences/nope", `{"email_enabled":true}`, member, 404, `{"error":"Unknown notification type"}`},
		{"invalid json", "/notifications/preferences/scan_completed", `{"email_enabled":`, member, 400, `{"error":"Invalid JSON body"}`},
		{"array body", "/notifications/company-defaults/scan_completed", `[true]`, acme.Admin, 400, `{"error":"Invalid JSON body"}`},
		{"empty body", "/notifications/preferences/scan_completed", ``, member, 400, `{"error":"Invalid JSON body"}`},
		{"trailing data", "/notifications/preferences/scan_completed", `{} {}`, member, 400, `{"error":"Invalid JSON body"}`},
		{"wrong type", "/notifications/preferences/scan_completed", `{"email_enabled":"yes"}`, member, 400, `{"error":"email_enabled must be a boolean or null"}`},
		{"unknown field", "/notifications/preferences/scan_completed", `{"sms_enabled":true}`, member, 400, `{"error":"Unknown field \"sms_enabled\" (allowed: email_enabled, webhook_enabled, filter)"}`},
		{"filter on a company default", "/notifications/company-defaults/scan_completed", `{"filter":"true"}`, acme.Admin, 400, `{"error":"Unknown field \"filter\" (allowed: email_enabled, webhook_enabled)"}`},
		{"filter misspelled", "/notifications/preferences/scan_completed", `{"filter":"event.projet.name == \"x\""}`, member, 400, `{"error":"filter: line 1, column 6: undefined field 'projet'"}`},
		{"filter not bool", "/notifications/preferences/scan_completed", `{"filter":"event.type"}`, member, 400, `{"error":"filter: the expression must return a bool, not string"}`},
		{"filter not a string", "/notifications/preferences/scan_completed", `{"filter":42}`, member, 400, `{"error":"filter must be a string (a CEL expression over event) or null"}`},
		{"oversized", "/notifications/preferences/scan_completed", `{"email_enabled":true,"x":"` + strings.Repeat("a", 6<<20) + `"}`, member, 413, ``},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := testenv.Do(t, h, "POST", c.path, c.body, testenv.Key(c.user)...)
			if r.Status != c.status {
				t.Fatalf("status %d, want %d: %s", r.Status, c.status, r.Body)
			}
			if c.want != "" && strings.TrimSpace(string(r.Body)) != c.want {
				t.Fatalf("body %s, want %s", r.Body, c.want)
			}
		})
	}
	// None of the rejected writes changed anything.
	for code, p := range prefs(t, h, member) {
		if p.Sources["email_enabled"] != "platform" || p.Sources["webhook_enabled"] != "platform" {
			t.Fatalf("%s changed by a rejected request: %+v", code, p)
		}
	}
	// A mixed body with one bad member stores nothing.
	r := testenv.Do(t, h, "POST", "/notifications/preferences/scan_completed", `{"webhook_enabled":false,"email_enabled":3}`, testenv.Key(member)...)
	if r.Status != 400 || prefs(t, h, member)["scan_completed"].Sources["webhook_enabled"] != "platform" {
		t.Fatalf("partial bad body: %d, stored anyway", r.Status)
	}
}

func TestRoutingErrorsAreJSON(t *testing.T) {
	env := testenv.New(t)
	h := notifications.New(env.Deps)
	acme := env.Company(t, "Acme")
	if r := testenv.Do(t, h, "DELETE", "/notifications/preferences", "", testenv.Key(acme.Admin)...); r.Status != 405 || r.Header.Get("Allow") == "" {
		t.Fatalf("wrong method: %d %v %s", r.Status, r.Header, r.Body)
	}
	if r := testenv.Do(t, h, "GET", "/notifications/nowhere", "", testenv.Key(acme.Admin)...); r.Status != 404 {
		t.Fatalf("unknown route: %d %s", r.Status, r.Body)
	}
}

func TestAuthentication(t *testing.T) {
	env := testenv.New(t)
	h := notifications.New(env.Deps)
	acme := env.Company(t, "Acme")
	gone := env.User(t, acme, testenv.UserSpec{Email: "gone@acme.test", Inactive: true})
	const unauth = `{"error":"Missing or invalid authorization header"}`
	for _, rt := range []struct{ method, path string }{
		{"GET", "/notifications/preferences"},
		{"POST", "/notifications/preferences/scan_completed"},
		{"POST", "/notifications/company-defaults/scan_completed"},
	} {
		for name, hdr := range map[string][]string{
			"none":     nil,
			"garbage":  {"SERVICE-TOKEN", "csk_garbage"},
			"inactive": testenv.Key(gone),
			"bad jwt":  testenv.Bearer("a.b.c"),
		} {
			r := testenv.Do(t, h, rt.method, rt.path, `{"email_enabled":true}`, hdr...)
			if r.Status != 401 || strings.TrimSpace(string(r.Body)) != unauth {
				t.Errorf("%s %s (%s): %d %s", rt.method, rt.path, name, r.Status, r.Body)
			}
		}
	}
	// A bearer token works like the API key, and admin rights come with it.
	r := testenv.Do(t, h, "POST", "/notifications/company-defaults/scan_completed", `{"webhook_enabled":false}`, testenv.Bearer(env.Token(t, acme.Admin))...)
	if r.Status != 200 {
		t.Fatalf("bearer admin: %d %s", r.Status, r.Body)
	}
	if strings.Contains(env.Logs.String(), acme.Admin.APIKey) || strings.Contains(env.Logs.String(), "csk_garbage") {
		t.Fatal("credentials must never be logged")
	}
}

func TestStoreFailureIsAGeneric500(t *testing.T) {
	env := testenv.New(t)
	acme := env.Company(t, "Acme")
	deps := env.Deps
	deps.Store = store.New(env.Store.Client(), "no-such-table") // the handler's store calls fail inside DynamoDB
	h := notifications.New(deps)
	r := testenv.Do(t, h, "GET", "/notifications/preferences", "", testenv.Key(acme.Admin)...)
	if r.Status != 500 || strings.TrimSpace(string(r.Body)) != `{"error":"Internal server error"}` {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	if !strings.Contains(env.Logs.String(), "non-existent table") {
		t.Fatalf("the cause must be logged: %s", env.Logs.String())
	}
}
