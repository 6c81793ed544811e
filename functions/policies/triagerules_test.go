package policies_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/acme/codescan-api/functions/policies"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/routes"
)

type triageRuleBody struct {
	Rule struct {
		ID      string
		Matcher struct {
			Tool *string
			CWE  *string
			Path *string
		}
		Action struct {
			Status *string
			Reason *string
		}
		ProjectID        *int64 `json:"project_id"`
		Enabled          bool
		RequiresApproval bool   `json:"requires_approval"`
		ApprovedBy       *int64 `json:"approved_by"`
		Active           bool
		CreatedBy        int64 `json:"created_by"`
	}
}

// Triage rules: created (validated, naming the member at fault, nothing
// stored), read, listed by cursor, disabled and enabled, approved by a
// second admin only, deleted; another company's rule is a missing one.
func TestTriageRules(t *testing.T) {
	w := setup(t)
	triager := w.env.User(t, w.acme, testenv.UserSpec{Email: "triager@acme.test", Permissions: []string{routes.PermManagePolicy, routes.PermTriageIssue}})
	key := testenv.Key(triager)
	second := w.acme.Admin
	var r triageRuleBody
	res := testenv.Do(t, w.h, "POST", "/triage-rules", `{"matcher":{"cwe":"cwe-798","path":"test/**"},"action":{"status":"False_Positive","reason":" fixtures "},"requires_approval":true}`, key...)
	res.Decode(t, &r)
	if res.Status != 201 || *r.Rule.Matcher.CWE != "CWE-798" || *r.Rule.Action.Status != "false_positive" || *r.Rule.Action.Reason != "fixtures" ||
		!r.Rule.Enabled || !r.Rule.RequiresApproval || r.Rule.Active || r.Rule.ApprovedBy != nil || r.Rule.ProjectID != nil || r.Rule.CreatedBy != triager.ID {
		t.Fatalf("%d %s", res.Status, res.Body)
	}
	id := r.Rule.ID
	// Bad bodies: 400 naming the member, and no rule stored.
	for body, field := range map[string]string{
		`{"action":{"urgency":"LO"}}`:                                                                                   "matcher is required",
		`{"matcher":{},"action":{"urgency":"LO"}}`:                                                                      "matcher must name at least one condition",
		`{"matcher":{"path":"src/[a-"},"action":{"urgency":"LO"}}`:                                                      "matcher.path",
		`{"matcher":{"cwe":"XSS"},"action":{"urgency":"LO"}}`:                                                           "matcher.cwe",
		`{"matcher":{"tool":"t"},"action":{"status":"open"}}`:                                                           "action.status",
		`{"matcher":{"tool":"t"},"action":{"status":"accepted_risk","reason":"r"}}`:                                     "action.expires_at",
		`{"matcher":{"tool":"t"},"action":{"status":"accepted_risk","reason":"r","expires_at":"2000-01-01T00:00:00Z"}}`: "action.expires_at must be in the future",
		`{"matcher":{"tool":"t"},"action":{"urgency":"LO"},"project_id":999999}`:                                        "project_id",
		`{"matcher":{"tool":"t"},"action":{"urgency":"LO"},"extra":1}`:                                                  "Unknown field",
	} {
		res := testenv.Do(t, w.h, "POST", "/triage-rules", body, key...)
		if res.Status != 400 || !strings.Contains(string(res.Body), field) {
			t.Errorf("%s: %d %s", body, res.Status, res.Body)
		}
	}
	if res := testenv.Do(t, w.h, "POST", "/triage-rules", `{"matcher":{"tool":"t"},"action":{"urgency":"LO"}}`, testenv.Key(w.plain)...); res.Status != 403 {
		t.Fatalf("without permission: %d", res.Status)
	}
	var l struct {
		Rules         []struct{ ID string }
		TotalRules    int    `json:"total_rules"`
		NextPageToken string `json:"next_page_token"`
	}
	testenv.Do(t, w.h, "GET", "/triage-rules", "", key...).Decode(t, &l)
	if len(l.Rules) != 1 || l.TotalRules != 1 || l.Rules[0].ID != id {
		t.Fatalf("bad bodies stored rules: %+v", l)
	}

	// The author (no admin) cannot approve; an admin can, once.
	if res := testenv.Do(t, w.h, "POST", "/triage-rules/"+id+"/approve", "", key...); res.Status != 403 || !strings.Contains(string(res.Body), "author") {
		t.Fatalf("own approval: %d %s", res.Status, res.Body)
	}
	if res := testenv.Do(t, w.h, "POST", "/triage-rules/"+id+"/apply", "", key...); res.Status != 400 || !strings.Contains(string(res.Body), "not active") {
		t.Fatalf("apply before approval: %d %s", res.Status, res.Body)
	}
	res = testenv.Do(t, w.h, "POST", "/triage-rules/"+id+"/approve", "", testenv.Key(second)...)
	res.Decode(t, &r)
	if res.Status != 200 || !r.Rule.Active || r.Rule.ApprovedBy == nil || *r.Rule.ApprovedBy != second.ID {
		t.Fatalf("approve: %d %s", res.Status, res.Body)
	}
	// Disable, enable; the rule is active again.
	res = testenv.Do(t, w.h, "PATCH", "/triage-rules/"+id, `{"enabled":false}`, key...)
	res.Decode(t, &r)
	if res.Status != 200 || r.Rule.Enabled || r.Rule.Active {
		t.Fatalf("disable: %d %s", res.Status, res.Body)
	}
	for _, body := range []string{`{}`, `{"enabled":"no"}`, `{"matcher":{"tool":"x"}}`} {
		if res := testenv.Do(t, w.h, "PATCH", "/triage-rules/"+id, body, key...); res.Status != 400 {
			t.Errorf("PATCH %s: %d %s", body, res.Status, res.Body)
		}
	}
	res = testenv.Do(t, w.h, "PATCH", "/triage-rules/"+id, `{"enabled":true}`, key...)
	res.Decode(t, &r)
	if res.Status != 200 || !r.Rule.Active {
		t.Fatalf("enable: %d %s", res.Status, res.Body)
	}
	// A rule without approval may not be approved.
	other := testenv.Do(t, w.h, "POST", "/triage-rules", `{"matcher":{"tool":"gosec"},"action":{"urgency":"lo"},"enabled":false}`, key...)
	other.Decode(t, &r)
	plain := r.Rule.ID
	if other.Status != 201 || r.Rule.Active {
		t.Fatalf("%d %s", other.Status, other.Body)
	}
	if res := testenv.Do(t, w.h, "POST", "/triage-rules/"+plain+"/approve", "", testenv.Key(second)...); res.Status != 400 {
		t.Fatalf("approve a rule without approval: %d %s", res.Status, res.Body)
	}
	// Paging by cursor, oldest first.
	testenv.Do(t, w.h, "GET", "/triage-rules?page_size=1", "", key...).Decode(t, &l)
	if len(l.Rules) != 1 || l.Rules[0].ID != id || l.TotalRules != 2 || l.NextPageToken == "" {
		t.Fatalf("%+v", l)
	}
	tok := l.NextPageToken
	l.NextPageToken = ""
	testenv.Do(t, w.h, "GET", "/triage-rules?page_size=1&next_page_token="+tok, "", key...).Decode(t, &l)
	if len(l.Rules) != 1 || l.Rules[0].ID != plain || l.NextPageToken != "" {
		t.Fatalf("page 2 %+v", l)
	}

	// Another company: the same 404 as a missing id, on every route.
	otherAdmin := testenv.Key(w.other.Admin)
	missing := testenv.Do(t, w.h, "GET", "/triage-rules/"+uuid.NewString(), "", otherAdmin...)
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/triage-rules/" + id, ""}, {"PATCH", "/triage-rules/" + id, `{"enabled":false}`}, {"DELETE", "/triage-rules/" + id, ""},
		{"POST", "/triage-rules/" + id + "/approve", ""}, {"POST", "/triage-rules/" + id + "/apply?dry_run=true", ""},
	} {
		res := testenv.Do(t, w.h, c.method, c.path, c.body, otherAdmin...)
		if res.Status != 404 || string(res.Body) != string(missing.Body) {
			t.Errorf("%s %s by another company: %d %s", c.method, c.path, res.Status, res.Body)
		}
	}
	var ol struct {
		TotalRules int `json:"total_rules"`
	}
	testenv.Do(t, w.h, "GET", "/triage-rules", "", otherAdmin...).Decode(t, &ol)
	if ol.TotalRules != 0 {
		t.Fatalf("another company lists %d rules", ol.TotalRules)
	}
	if res := testenv.Do(t, w.h, "GET", "/triage-rules/not-a-uuid", "", key...); res.Status != 400 {
		t.Fatalf("bad id: %d", res.Status)
	}

	// Delete: gone, counted out.
	if res := testenv.Do(t, w.h, "DELETE", "/triage-rules/"+id, "", key...); res.Status != 200 {
		t.Fatalf("delete: %d %s", res.Status, res.Body)
	}
	if res := testenv.Do(t, w.h, "GET", "/triage-rules/"+id, "", key...); res.Status != 404 {
		t.Fatalf("deleted rule: %d", res.Status)
	}
	testenv.Do(t, w.h, "GET", "/triage-rules", "", key...).Decode(t, &l)
	if l.TotalRules != 1 {
		t.Fatalf("after delete: %+v", l)
	}
}

// An acceptance rule whose end has passed acts no more, and shows it: not
// active, though still enabled.
func TestEndedAcceptanceRuleIsInactive(t *testing.T) {
	w := setup(t)
	now := time.Now().UTC().Truncate(time.Second)
	w.env.Deps.Now = func() time.Time { return now }
	h, key := policies.New(w.env.Deps), testenv.Key(w.acme.Admin)
	body := fmt.Sprintf(`{"matcher":{"tool":"t"},"action":{"status":"accepted_risk","reason":"vendor","expires_at":%q}}`, now.Add(time.Hour).Format(time.RFC3339))
	var r triageRuleBody
	res := testenv.Do(t, h, "POST", "/triage-rules", body, key...)
	res.Decode(t, &r)
	if res.Status != 201 || !r.Rule.Active {
		t.Fatalf("%d %s", res.Status, res.Body)
	}
	now = now.Add(2 * time.Hour)
	testenv.Do(t, h, "GET", "/triage-rules/"+r.Rule.ID, "", key...).Decode(t, &r)
	if r.Rule.Active || !r.Rule.Enabled {
		t.Fatalf("ended rule: active %v enabled %v", r.Rule.Active, r.Rule.Enabled)
	}
}

// Approval means it: only a company admin other than the author approves;
// a rule that dismisses is created, enabled and applied only by a caller
// who may triage issues; the company can require approval of every rule
// that dismisses. A reason may span lines, as PATCH /issue's does.
func TestTriageRuleDecisions(t *testing.T) {
	w := setup(t)
	ctx := context.Background()
	admin := testenv.Key(w.acme.Admin)
	manager := testenv.Key(w.manager) // manages policies, may not triage
	triager := testenv.Key(w.env.User(t, w.acme, testenv.UserSpec{Email: "triager@acme.test", Permissions: []string{routes.PermManagePolicy, routes.PermTriageIssue}}))
	dismissing := `{"matcher":{"tool":"gosec"},"action":{"status":"false_positive","reason":"line one\nline two"},"requires_approval":true}`

	// The manager may not dismiss through a rule; the triager may.
	if res := testenv.Do(t, w.h, "POST", "/triage-rules", dismissing, manager...); res.Status != 403 || !strings.Contains(string(res.Body), routes.PermTriageIssue) {
		t.Fatalf("dismissing rule by a manager who may not triage: %d %s", res.Status, res.Body)
	}
	var r triageRuleBody
	res := testenv.Do(t, w.h, "POST", "/triage-rules", dismissing, triager...)
	res.Decode(t, &r)
	if res.Status != 201 || *r.Rule.Action.Reason != "line one\nline two" {
		t.Fatalf("dismissing rule by a triager: %d %s", res.Status, res.Body)
	}
	id := r.Rule.ID
	// A policy manager who is no admin approves nothing, even another's rule.
	if res := testenv.Do(t, w.h, "POST", "/triage-rules/"+id+"/approve", "", manager...); res.Status != 403 {
		t.Fatalf("approval by a non-admin: %d %s", res.Status, res.Body)
	}
	if res := testenv.Do(t, w.h, "POST", "/triage-rules/"+id+"/approve", "", admin...); res.Status != 200 {
		t.Fatalf("approval by an admin: %d %s", res.Status, res.Body)
	}
	// An admin's own rule waits for another admin.
	res = testenv.Do(t, w.h, "POST", "/triage-rules", dismissing, admin...)
	res.Decode(t, &r)
	if res := testenv.Do(t, w.h, "POST", "/triage-rules/"+r.Rule.ID+"/approve", "", admin...); res.Status != 400 || !strings.Contains(string(res.Body), "author") {
		t.Fatalf("own approval by an admin: %d %s", res.Status, res.Body)
	}
	other := w.env.User(t, w.acme, testenv.UserSpec{Email: "admin2@acme.test", IsAdmin: true})
	if res := testenv.Do(t, w.h, "POST", "/triage-rules/"+r.Rule.ID+"/approve", "", testenv.Key(other)...); res.Status != 200 {
		t.Fatalf("approval by a second admin: %d %s", res.Status, res.Body)
	}
	// The manager may count what it would change, not apply or enable it.
	if res := testenv.Do(t, w.h, "POST", "/triage-rules/"+id+"/apply?dry_run=true", "", manager...); res.Status != 200 {
		t.Fatalf("dry run by a manager: %d %s", res.Status, res.Body)
	}
	if res := testenv.Do(t, w.h, "POST", "/triage-rules/"+id+"/apply", "", manager...); res.Status != 403 {
		t.Fatalf("apply by a manager who may not triage: %d %s", res.Status, res.Body)
	}
	testenv.Do(t, w.h, "PATCH", "/triage-rules/"+id, `{"enabled":false}`, manager...)
	if res := testenv.Do(t, w.h, "PATCH", "/triage-rules/"+id, `{"enabled":true}`, manager...); res.Status != 403 {
		t.Fatalf("enable by a manager who may not triage: %d %s", res.Status, res.Body)
	}
	// A rule that only sets urgency is the manager's to make and apply.
	res = testenv.Do(t, w.h, "POST", "/triage-rules", `{"matcher":{"tool":"gosec"},"action":{"urgency":"LO"}}`, manager...)
	res.Decode(t, &r)
	if res.Status != 201 || r.Rule.RequiresApproval {
		t.Fatalf("urgency rule: %d %s", res.Status, res.Body)
	}
	if res := testenv.Do(t, w.h, "POST", "/triage-rules/"+r.Rule.ID+"/apply", "", manager...); res.Status != 200 {
		t.Fatalf("urgency rule applied by a manager: %d %s", res.Status, res.Body)
	}

	// The company requires approval of rules that dismiss.
	settings, _, err := w.env.Store.Catalog.SLASettings(ctx, w.acme.ID)
	if err != nil {
		t.Fatal(err)
	}
	settings.DismissalRulesNeedApproval = true
	if err := w.env.Store.Catalog.PutSLASettings(ctx, w.acme.ID, settings); err != nil {
		t.Fatal(err)
	}
	res = testenv.Do(t, w.h, "POST", "/triage-rules", `{"matcher":{"tool":"semgrep"},"action":{"status":"false_positive","reason":"r"}}`, triager...)
	res.Decode(t, &r)
	if res.Status != 201 || !r.Rule.RequiresApproval || r.Rule.Active {
		t.Fatalf("dismissing rule under the setting: %d %s", res.Status, res.Body)
	}
	if res := testenv.Do(t, w.h, "POST", "/triage-rules", `{"matcher":{"tool":"x"},"action":{"status":"false_positive","reason":"r"},"requires_approval":false}`, triager...); res.Status != 400 || !strings.Contains(string(res.Body), "dismissal_rules_require_approval") {
		t.Fatalf("asking for no approval under the setting: %d %s", res.Status, res.Body)
	}
	res = testenv.Do(t, w.h, "POST", "/triage-rules", `{"matcher":{"tool":"x"},"action":{"urgency":"HI"}}`, triager...)
	res.Decode(t, &r)
	if res.Status != 201 || r.Rule.RequiresApproval {
		t.Fatalf("urgency rule under the setting: %d %s", res.Status, res.Body)
	}
}
