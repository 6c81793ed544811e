package registry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/acme/codescan-api/functions/webhooks"
	"github.com/acme/codescan-api/internal/registry"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/internal/trackerhost"
	"github.com/acme/codescan-api/shared/deliveryengine"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/scmhost"
	"github.com/acme/codescan-api/shared/secrets"
	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/acme/codescan-api/shared/store/delivery"
	"github.com/acme/codescan-api/shared/store/ledger"
	storepage "github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/triage"
	"github.com/acme/codescan-api/shared/triagemodel"
	"github.com/acme/codescan-api/shared/webhook"
)

// adminGroups are the groups whose every write is an administrative change
// the audit log records.
var adminGroups = map[string]bool{
	routes.GroupAccounts: true, routes.GroupWebhooks: true, routes.GroupTeams: true, routes.GroupPolicies: true,
	routes.GroupIntegrations: true, routes.GroupNotifications: true, routes.GroupProjects: true,
	routes.GroupTickets: true,
}

// call is one request of an audit case, relative to the API's base path.
type call struct{ path, body string }

// auditCase is what one write route needs: setup makes what the call acts
// on and returns the successful call and the audit target id it must
// record ("": the id of the answer's member created, which the call makes).
// bad (made by the admin) is refused with 400 and forbidden with 403 by a
// member without permissions (nil: any user may make the call); both are
// derived from the successful call and leave no entry.
type auditCase struct {
	setup     func(t *testing.T, a *auditWorld) (ok call, targetID string)
	created   string
	action    string
	target    string
	bad       func(ok call) call
	forbidden func(ok call) call
}

type auditWorld struct {
	env    *testenv.Env
	mux    http.Handler
	acme   *testenv.Company
	member testenv.User
	keyID  int64 // the admin's API key
	rcv    string
	last   string // id of the newest audit entry seen
}

// api calls the API as the company admin and wants want.
func (a *auditWorld) api(t *testing.T, method string, c call, want int) *testenv.Response {
	t.Helper()
	res := testenv.Do(t, a.mux, method, c.path, c.body, testenv.Key(a.acme.Admin)...)
	if res.Status != want {
		t.Fatalf("%s %s: %d %s, want %d", method, c.path, res.Status, res.Body, want)
	}
	return res
}

type auditEntry struct {
	ID    string `json:"id"`
	Actor struct {
		UserID *int64 `json:"user_id"`
		Via    string `json:"via"`
		KeyID  *int64 `json:"key_id"`
	} `json:"actor"`
	Action string `json:"action"`
	Target struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	} `json:"target"`
}

// since returns the entries newer than the last seen, read back through
// GET /audit-log, and marks the newest as seen.
func (a *auditWorld) since(t *testing.T) []auditEntry {
	t.Helper()
	var page struct {
		Entries []auditEntry `json:"entries"`
	}
	a.api(t, "GET", call{path: "/audit-log?page_size=100"}, http.StatusOK).Decode(t, &page)
	var out []auditEntry
	for _, e := range page.Entries {
		if e.ID == a.last {
			break
		}
		out = append(out, e)
	}
	if len(page.Entries) > 0 {
		a.last = page.Entries[0].ID
	}
	return out
}

// created decodes the id of what a POST made: the named member's "id".
func created(t *testing.T, res *testenv.Response, member string) string {
	t.Helper()
	var out map[string]json.RawMessage
	res.Decode(t, &out)
	var obj struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(out[member], &obj); err != nil || len(obj.ID) == 0 {
		t.Fatalf("no %s.id in %s", member, res.Body)
	}
	var s string
	if json.Unmarshal(obj.ID, &s) == nil {
		return s
	}
	return string(obj.ID)
}

// webhookOf registers an endpoint at the loopback receiver.
func webhookOf(t *testing.T, a *auditWorld) string {
	t.Helper()
	body := fmt.Sprintf(`{"url":%q,"types":["scan_failed"]}`, a.rcv)
	return created(t, a.api(t, "POST", call{"/webhooks", body}, http.StatusCreated), "webhook")
}

// body is the successful call's path with another body.
func body(b string) func(call) call { return func(ok call) call { return call{ok.path, b} } }

// same is the successful call itself.
func same(ok call) call { return ok }

// path is another path without a body.
func path(p string) func(call) call { return func(call) call { return call{path: p} } }

var auditCases = map[string]auditCase{
	// Webhooks.
	"POST /webhooks": {
		setup: func(t *testing.T, a *auditWorld) (call, string) {
			return call{"/webhooks", fmt.Sprintf(`{"url":%q,"types":["scan_failed"]}`, a.rcv)}, ""
		},
		created: "webhook", action: "webhook.create", target: "webhook",
		bad: body(`{"url":"https://hooks.example.com:99999/","types":["scan_failed"]}`), forbidden: same,
	},
	"PATCH /webhooks/{webhook_id}": {
		setup: func(t *testing.T, a *auditWorld) (call, string) {
			id := webhookOf(t, a)
			return call{"/webhooks/" + id, `{"description":"intake","types":["scan_failed","scan_completed"]}`}, id
		},
		action: "webhook.update", target: "webhook",
		bad: body(`{"active":"yes"}`), forbidden: same,
	},
	"DELETE /webhooks/{webhook_id}": {
		setup: func(t *testing.T, a *auditWorld) (call, string) {
			id := webhookOf(t, a)
			return call{path: "/webhooks/" + id}, id
		},
		action: "webhook.delete", target: "webhook",
		bad: path("/webhooks/not-a-uuid"), forbidden: same,
	},
	"POST /webhooks/{webhook_id}/rotate-secret": {
		setup: func(t *testing.T, a *auditWorld) (call, string) {
			id := webhookOf(t, a)
			return call{path: "/webhooks/" + id + "/rotate-secret"}, id
		},
		action: "webhook.rotate_secret", target: "webhook",
		bad: path("/webhooks/not-a-uuid/rotate-secret"), forbidden: same,
	},
	"POST /webhooks/{webhook_id}/test": {
		setup: func(t *testing.T, a *auditWorld) (call, string) {
			id := webhookOf(t, a)
			return call{path: "/webhooks/" + id + "/test"}, id
		},
		action: "webhook.test", target: "webhook",
		bad: path("/webhooks/not-a-uuid/test"), forbidden: same,
	},
	"POST /webhooks/filter-dry-run": {
		setup: func(t *testing.T, a *auditWorld) (call, string) {
			return call{"/webhooks/filter-dry-run", `{"filter":"event.type == \"scan_failed\""}`}, "dry-run"
		},
		action: "webhook.filter_dry_run", target: "webhook_filter",
		bad: body(`{"filter":"event.typo"}`), forbidden: same,
	},
	"POST /webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver": {
		setup: func(t *testing.T, a *auditWorld) (call, string) {
			id := webhookOf(t, a)
			return call{path: "/webhooks/" + id + "/deliveries/" + delivered(t, a, id) + "/redeliver"}, id
		},
		action: "webhook.redeliver", target: "webhook",
		bad: path("/webhooks/not-a-uuid/deliveries/0123456789abcdef0123456789abcdef/redeliver"), forbidden: same,
	},
	// Notification settings and SLA settings (sla_breach: scan_failed is
	// the webhook cases' type).
	"POST /notifications/preferences/{type_code}": {
		setup: func(*testing.T, *auditWorld) (call, string) {
			return call{"/notifications/preferences/sla_breach", `{"email_enabled":false}`}, "sla_breach"
		},
		action: "notification_preference.update", target: "notification_type",
		bad: body(`{"email_enabled":"no"}`),
	},
	"POST /notifications/company-defaults/{type_code}": {
		setup: func(*testing.T, *auditWorld) (call, string) {
			return call{"/notifications/company-defaults/sla_breach", `{"webhook_enabled":false}`}, "sla_breach"
		},
		action: "notification_default.update", target: "notification_type",
		bad: body(`{"webhook_enabled":1}`), forbidden: same,
	},
	"PUT /sla-settings": {
		setup: func(t *testing.T, a *auditWorld) (call, string) {
			return call{"/sla-settings", `{"due_soon_days":5}`}, strconv.FormatInt(a.acme.ID, 10)
		},
		action: "sla_settings.update", target: "sla_settings",
		bad: body(`{"due_soon_days":-1}`), forbidden: same,
	},
	// Teams, policies, blocking rules.
	"POST /teams": {
		setup:   func(*testing.T, *auditWorld) (call, string) { return call{"/teams", `{"name":"AppSec"}`}, "" },
		created: "team", action: "team.create", target: "team",
		bad: body(`{"name":""}`), forbidden: same,
	},
	"POST /policies": {
		setup: func(*testing.T, *auditWorld) (call, string) {
			return call{"/policies", `{"name":"No SQL from strings","cwes":["CWE-89"]}`}, ""
		},
		created: "policy", action: "policy.create", target: "policy",
		bad: body(`{"name":""}`), forbidden: same,
	},
	"DELETE /policies/{policy_id}": {
		setup: func(t *testing.T, a *auditWorld) (call, string) {
			id := created(t, a.api(t, "POST", call{"/policies", `{"name":"Temporary"}`}, http.StatusCreated), "policy")
			return call{path: "/policies/" + id}, id
		},
		action: "policy.deactivate", target: "policy",
		bad: path("/policies/x1"), forbidden: same,
	},
	"POST /blocking-rules": {
		setup: func(*testing.T, *auditWorld) (call, string) {
			return call{"/blocking-rules", `{"slug":"critical","name":"Critical","conditions":{"min_urgency":"CR"}}`}, ""
		},
		created: "rule", action: "blocking_rule.create", target: "blocking_rule",
		bad: body(`{"slug":"","name":"x"}`), forbidden: same,
	},
	"PATCH /blocking-rules/{rule_id}": {
		setup: func(t *testing.T, a *auditWorld) (call, string) {
			id := created(t, a.api(t, "POST", call{"/blocking-rules", `{"slug":"gate-a","name":"Gate"}`}, http.StatusCreated), "rule")
			return call{"/blocking-rules/" + id, `{"name":"Gate A","active":false}`}, id
		},
		action: "blocking_rule.update", target: "blocking_rule",
		bad: body(`{"active":"no"}`), forbidden: same,
	},
	"DELETE /blocking-rules/{rule_id}": {
		setup: func(t *testing.T, a *auditWorld) (call, string) {
			id := created(t, a.api(t, "POST", call{"/blocking-rules", `{"slug":"gate-b","name":"Gate"}`}, http.StatusCreated), "rule")
			return call{path: "/blocking-rules/" + id}, id
		},
		action: "blocking_rule.delete", target: "blocking_rule",
		bad: path("/blocking-rules/0"), forbidden: same,
	},
	"POST /triage-rules": {
		setup: func(*testing.T, *auditWorld) (call, string) {
			return call{"/triage-rules", `{"matcher":{"path":"test/**"},"action":{"status":"false_positive","reason":"tests"}}`}, ""
		},
		created: "rule", action: "triage_rule.create", target: "triage_rule",
		bad: body(`{"matcher":{},"action":{"urgency":"LO"}}`), forbidden: same,
	},
	"PATCH /triage-rules/{rule_id}": {
		setup: func(t *testing.T, a *auditWorld) (call, string) {
			id := created(t, a.api(t, "POST", call{"/triage-rules", `{"matcher":{"tool":"gosec"},"action":{"urgency":"LO"}}`}, http.StatusCreated), "rule")
			return call{"/triage-rules/" + id, `{"enabled":false}`}, id
		},
		action: "triage_rule.disable", target: "triage_rule",
		bad: body(`{"enabled":"no"}`), forbidden: same,
	},
	"DELETE /triage-rules/{rule_id}": {
		setup: func(t *testing.T, a *auditWorld) (call, string) {
			id := created(t, a.api(t, "POST", call{"/triage-rules", `{"matcher":{"tool":"gosec"},"action":{"urgency":"LO"}}`}, http.StatusCreated), "rule")
			return call{path: "/triage-rules/" + id}, id
		},
		action: "triage_rule.delete", target: "triage_rule",
		bad: path("/triage-rules/x1"), forbidden: same,
	},
	"POST /triage-rules/{rule_id}/approve": {
		setup: func(t *testing.T, a *auditWorld) (call, string) {
			low := "LO"
			m, ac, err := triagemodel.Parse(triagemodel.Body{Matcher: &triagemodel.MatcherBody{CWE: []byte("79")}, Action: &triagemodel.ActionBody{Urgency: &low}}, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			r, err := a.env.Store.Triage.CreateTriageRule(context.Background(), triage.Rule{CompanyID: a.acme.ID, CreatedBy: a.member.ID,
				Enabled: true, RequiresApproval: true, Matcher: m, Action: ac})
			if err != nil {
				t.Fatal(err)
			}
			return call{path: "/triage-rules/" + r.ID + "/approve"}, r.ID
		},
		action: "triage_rule.approve", target: "triage_rule",
		bad: path("/triage-rules/x1/approve"), forbidden: same,
	},
	"POST /triage-rules/{rule_id}/apply": {
		setup: func(t *testing.T, a *auditWorld) (call, string) {
			id := created(t, a.api(t, "POST", call{"/triage-rules", `{"matcher":{"tool":"gosec"},"action":{"urgency":"LO"}}`}, http.StatusCreated), "rule")
			return call{path: "/triage-rules/" + id + "/apply"}, id
		},
		action: "triage_rule.apply", target: "triage_rule",
		bad: path("/triage-rules/x1/apply"), forbidden: same,
	},
	// Integrations.
	"PATCH /integrations/scm-provider/{integration_uuid}": {
		setup: func(t *testing.T, a *auditWorld) (call, string) {
			in, err := a.env.Store.Catalog.CreateIntegration(context.Background(), schema.Integration{CompanyID: a.acme.ID, UUID: catalog.NewIntegrationUUID(), Name: "gh", SealedToken: "sealed"})
			if err != nil {
				t.Fatal(err)
			}
			return call{"/integrations/scm-provider/" + in.UUID, `{"name":"GitHub"}`}, in.UUID
		},
		action: "integration.update", target: "integration",
		bad: body(`{"name":7}`), forbidden: same,
	},
	// Tickets: Jira integrations (checked against a loopback site) and rules.
	"POST /integrations/jira": {
		setup:   func(t *testing.T, a *auditWorld) (call, string) { return call{"/integrations/jira", jiraBody(t)}, "" },
		created: "integration", action: "jira_integration.create", target: "jira_integration",
		bad: body(`{"site_url":"ftp://x"}`), forbidden: same,
	},
	"PATCH /integrations/jira/{integration_uuid}": {
		setup: func(t *testing.T, a *auditWorld) (call, string) {
			id := jiraOf(t, a)
			return call{"/integrations/jira/" + id, `{"name":"Security"}`}, id
		},
		action: "jira_integration.update", target: "jira_integration",
		bad: body(`{"name":7}`), forbidden: same,
	},
	"DELETE /integrations/jira/{integration_uuid}": {
		setup: func(t *testing.T, a *auditWorld) (call, string) {
			id := jiraOf(t, a)
			return call{path: "/integrations/jira/" + id}, id
		},
		action: "jira_integration.delete", target: "jira_integration",
		bad: path("/integrations/jira/not-a-uuid"), forbidden: same,
	},
	"POST /ticket-rules": {
		setup: func(t *testing.T, a *auditWorld) (call, string) {
			return call{"/ticket-rules", `{"matcher":{"cwe":"CWE-89"},"destination":{"kind":"jira","integration_uuid":"` + jiraOf(t, a) + `"}}`}, ""
		},
		created: "rule", action: "ticket_rule.create", target: "ticket_rule",
		bad: body(`{"matcher":{},"destination":{"kind":"fax"}}`), forbidden: same,
	},
	"PATCH /ticket-rules/{rule_id}": {
		setup: func(t *testing.T, a *auditWorld) (call, string) {
			id := ticketRuleOf(t, a)
			return call{"/ticket-rules/" + id, `{"grouping":"cwe"}`}, id
		},
		action: "ticket_rule.update", target: "ticket_rule",
		bad: body(`{"grouping":"team"}`), forbidden: same,
	},
	"DELETE /ticket-rules/{rule_id}": {
		setup: func(t *testing.T, a *auditWorld) (call, string) {
			id := ticketRuleOf(t, a)
			return call{path: "/ticket-rules/" + id}, id
		},
		action: "ticket_rule.delete", target: "ticket_rule",
		bad: path("/ticket-rules/not-a-uuid"), forbidden: same,
	},
	// Projects.
	"PATCH /projects/{project_id}": {
		setup: func(t *testing.T, a *auditWorld) (call, string) {
			p, err := a.env.Store.Catalog.CreateProject(context.Background(), schema.Project{CompanyID: a.acme.ID, Name: "shop"})
			if err != nil {
				t.Fatal(err)
			}
			id := strconv.FormatInt(p.ID, 10)
			return call{"/projects/" + id, `{"default_branch":"develop"}`}, id
		},
		action: "project.update", target: "project",
		bad: body(`{"default_branch":""}`), forbidden: same,
	},
	// Accounts: API keys and users.
	"POST /api-keys": {
		setup:   func(*testing.T, *auditWorld) (call, string) { return call{"/api-keys", `{"name":"CI"}`}, "" },
		created: "api_key", action: "api_key.create", target: "api_key",
		bad: body(`{"name":""}`),
		// A member may create keys for themselves, not for the admin (the
		// company's first user).
		forbidden: func(ok call) call { return call{"/api-keys", `{"name":"theirs","user_id":1}`} },
	},
	"DELETE /api-keys/{key_id}": {
		setup: func(t *testing.T, a *auditWorld) (call, string) {
			id := created(t, a.api(t, "POST", call{"/api-keys", `{"name":"old"}`}, http.StatusCreated), "api_key")
			return call{path: "/api-keys/" + id}, id
		},
		action: "api_key.revoke", target: "api_key",
		bad: path("/api-keys/0x1"),
	},
	"POST /users": {
		setup: func(*testing.T, *auditWorld) (call, string) {
			return call{"/users", `{"email":"dev@acme.test","first_name":"Dev","last_name":"One","subject":"idp|dev"}`}, ""
		},
		created: "user", action: "user.create", target: "user",
		bad: body(`{"email":"not an email","first_name":"a","last_name":"b"}`), forbidden: same,
	},
	"PATCH /users/{user_id}": {
		setup: func(t *testing.T, a *auditWorld) (call, string) {
			u := a.env.User(t, a.acme, testenv.UserSpec{Email: "patched@acme.test"})
			id := strconv.FormatInt(u.ID, 10)
			return call{"/users/" + id, `{"permissions":["scans.upload_scan"]}`}, id
		},
		action: "user.update", target: "user",
		bad: body(`{"active":"no"}`), forbidden: same,
	},
}

// delivered returns the id of a delivery to the endpoint (its receiver
// answers 204): the dispatcher sends it a scan_failed event.
func delivered(t *testing.T, a *auditWorld, endpointID string) string {
	t.Helper()
	ctx := context.Background()
	off := false // no email: the event is for the webhook only
	if err := a.env.Store.Deliveries.UpdateNotificationSetting(ctx, a.acme.ID, 0, "scan_failed", []delivery.ChannelChange{{Channel: delivery.ChannelEmail, Value: &off}}); err != nil {
		t.Fatal(err)
	}
	sealer, err := secrets.FromEnv(ctx) // the webhooks group's
	if err != nil {
		t.Fatal(err)
	}
	d := &deliveryengine.Engine{Store: deliveryengine.StoreOf(a.env.Store), Sealer: sealer, Webhooks: webhook.New(webhook.Options{AllowLoopback: true}),
		Backoff: deliveryengine.DefaultBackoff, Log: a.env.Deps.Server.Log}
	d.Dispatch(ctx, []schema.Event{{ID: "scan_failed-" + endpointID, CompanyID: a.acme.ID, Type: "scan_failed", CreatedAt: time.Now(),
		Data: json.RawMessage(`{"scan_id":"s1","project_id":1,"project_name":"p","branch":"main","tool":"t","failed_reason":"r"}`)}})
	var log struct {
		Deliveries []struct {
			DeliveryID string `json:"delivery_id"`
		} `json:"deliveries"`
	}
	a.api(t, "GET", call{path: "/webhooks/" + endpointID + "/deliveries"}, http.StatusOK).Decode(t, &log)
	if len(log.Deliveries) == 0 {
		t.Fatal("no delivery to redeliver")
	}
	return log.Deliveries[0].DeliveryID
}

// TestEveryAdminWriteIsAudited walks every write route of the admin groups
// in the route table (a new one without a case fails): a successful call
// leaves exactly one audit entry naming the admin, the action and the
// target; a 400 and a member's 403 leave none.
func TestEveryAdminWriteIsAudited(t *testing.T) {
	t.Setenv(webhooks.EnvAllowLoopback, "true") // the receiver is on loopback
	t.Setenv(scmhost.EnvAllowLoopback, "true")  // so is the Jira site (tickets)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer rcv.Close()
	env := testenv.New(t)
	a := &auditWorld{env: env, mux: registry.Mux(env.Deps), acme: env.Company(t, "Acme"), rcv: rcv.URL + "/hook"}
	a.member = env.User(t, a.acme, testenv.UserSpec{Email: "member@acme.test"})
	keysPage, err := env.Store.Tenancy.ListAPIKeys(context.Background(), a.acme.ID, a.acme.Admin.ID, storepage.Request{Limit: 1})
	keys := keysPage.Items
	if err != nil || len(keys) != 1 {
		t.Fatalf("admin key: %v %v", keys, err)
	}
	a.keyID = keys[0].ID
	a.since(t)

	seen := map[string]bool{}
	for _, rt := range routes.Table {
		route := rt.Method + " " + rt.Path
		// A public route has no admin to record: the host's deliveries
		// are audited as the linked user's triage (functions/integrations).
		if rt.Method == "GET" || !adminGroups[rt.Group] || rt.Access == routes.Public {
			continue
		}
		seen[route] = true
		c, ok := auditCases[route]
		if !ok {
			t.Errorf("%s: a write route of an admin group without an audit case", route)
			continue
		}
		t.Run(route, func(t *testing.T) {
			if c.forbidden == nil && rt.Access != routes.Authenticated {
				t.Fatalf("only routes open to every user may go without a 403 case")
			}
			ok, targetID := c.setup(t, a)
			a.since(t) // what the setup recorded
			refusals := []struct {
				c      call
				as     testenv.User
				status int
			}{{c.bad(ok), a.acme.Admin, http.StatusBadRequest}}
			if c.forbidden != nil {
				refusals = append(refusals, struct {
					c      call
					as     testenv.User
					status int
				}{c.forbidden(ok), a.member, http.StatusForbidden})
			}
			for _, r := range refusals {
				res := testenv.Do(t, a.mux, rt.Method, r.c.path, r.c.body, testenv.Key(r.as)...)
				if res.Status != r.status {
					t.Fatalf("refused call %s: %d %s, want %d", r.c.path, res.Status, res.Body, r.status)
				}
				if got := a.since(t); len(got) != 0 {
					t.Errorf("a refused call (%d) recorded %+v", r.status, got)
				}
			}
			res := testenv.Do(t, a.mux, rt.Method, ok.path, ok.body, testenv.Key(a.acme.Admin)...)
			if res.Status/100 != 2 {
				t.Fatalf("%s: %d %s", ok.path, res.Status, res.Body)
			}
			if targetID == "" { // the call creates its target
				targetID = created(t, res, c.created)
			}
			got := a.since(t)
			if len(got) != 1 {
				t.Fatalf("%d entries for one change: %+v", len(got), got)
			}
			e := got[0]
			if e.Action != c.action || e.Target.Type != c.target || e.Target.ID != targetID {
				t.Errorf("entry %s %s/%s, want %s %s/%s", e.Action, e.Target.Type, e.Target.ID, c.action, c.target, targetID)
			}
			if e.Actor.UserID == nil || *e.Actor.UserID != a.acme.Admin.ID || e.Actor.Via != ledger.ViaAPIKey || e.Actor.KeyID == nil || *e.Actor.KeyID != a.keyID {
				t.Errorf("actor %+v, want the admin's key %d", e.Actor, a.keyID)
			}
		})
	}
	for route := range auditCases {
		if !seen[route] {
			t.Errorf("audit case %s names no write route of an admin group", route)
		}
	}
}

// jiraBody creates an integration with a loopback Jira site of the test.
func jiraBody(t *testing.T) string {
	site := trackerhost.NewJira(t, "bot@acme.test", "jira-token", "SEC")
	return fmt.Sprintf(`{"site_url":%q,"email":"bot@acme.test","api_token":"jira-token","project_key":"SEC"}`, site.URL())
}

// jiraOf creates a Jira integration and returns its uuid.
func jiraOf(t *testing.T, a *auditWorld) string {
	t.Helper()
	return created(t, a.api(t, "POST", call{"/integrations/jira", jiraBody(t)}, http.StatusCreated), "integration")
}

// ticketRuleOf creates a ticket rule and returns its id.
func ticketRuleOf(t *testing.T, a *auditWorld) string {
	t.Helper()
	body := `{"matcher":{},"destination":{"kind":"jira","integration_uuid":"` + jiraOf(t, a) + `"}}`
	return created(t, a.api(t, "POST", call{"/ticket-rules", body}, http.StatusCreated), "rule")
}
