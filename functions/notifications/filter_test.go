package notifications_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/acme/codescan-api/functions/notifications"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/tenancy"
)

// TestPreferenceFilter: a user's filter of a type's emails is saved,
// shown, changed and removed, and is the user's alone.
func TestPreferenceFilter(t *testing.T) {
	env := testenv.New(t)
	h := notifications.New(env.Deps)
	acme := env.Company(t, "Acme")
	dev := env.User(t, acme, testenv.UserSpec{Email: "dev@acme.test"})
	filters := func(u testenv.User) map[string]*string {
		res := testenv.Do(t, h, "GET", "/notifications/preferences", "", testenv.Key(u)...)
		var body struct {
			Preferences []struct {
				TypeCode string  `json:"type_code"`
				Filter   *string `json:"filter"`
			} `json:"preferences"`
		}
		res.Decode(t, &body)
		out := map[string]*string{}
		for _, p := range body.Preferences {
			out[p.TypeCode] = p.Filter
		}
		return out
	}
	post := func(u testenv.User, body string) {
		t.Helper()
		if res := testenv.Do(t, h, "POST", "/notifications/preferences/new_critical_issue", body, testenv.Key(u)...); res.Status != 200 {
			t.Fatalf("POST %s: %d %s", body, res.Status, res.Body)
		}
	}
	expr := `event.project.name.startsWith("payments-") &&
	event.new_findings.exists(f, f.cwe == 89)`
	b, _ := json.Marshal(map[string]any{"filter": expr, "email_enabled": true})
	post(dev, string(b))
	if got := filters(dev)["new_critical_issue"]; got == nil || *got != expr {
		t.Fatalf("filter after save: %v", got)
	}
	if got := filters(acme.Admin)["new_critical_issue"]; got != nil {
		t.Fatalf("another user's filter shows: %v", *got)
	}
	// Channels alone keep the filter; null removes it.
	post(dev, `{"email_enabled":false}`)
	if got := filters(dev)["new_critical_issue"]; got == nil || *got != expr {
		t.Fatalf("filter after a channel change: %v", got)
	}
	post(dev, `{"filter":null}`)
	if got := filters(dev)["new_critical_issue"]; got != nil {
		t.Fatalf("filter after null: %v", *got)
	}
	// Each change is audited with the expression before and after.
	logPage, err := env.Store.Tenancy.ListAudit(context.Background(), acme.ID, tenancy.AuditFilter{Action: "notification_preference.update"}, page.Request{Limit: 10})
	log := logPage.Items
	if err != nil || len(log) != 3 {
		t.Fatalf("audit: %d %v", len(log), err)
	}
	if c := log[0].Changes["filter"]; c.Before != expr || c.After != nil {
		t.Fatalf("audit of the removal: %+v", c)
	}
	if c := log[2].Changes["filter"]; c.Before != nil || c.After != expr {
		t.Fatalf("audit of the save: %+v", c)
	}
	if _, ok := log[1].Changes["filter"]; ok {
		t.Fatalf("a channel change audits no filter change: %+v", log[1].Changes)
	}
}
