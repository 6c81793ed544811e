package tickets_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/internal/trackerhost"
	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/acme/codescan-api/shared/store/schema"
)

// A Jira site is checked before anything is stored: an address inside or
// not Jira Cloud's is 400, a site that refuses the token, has no such
// project or issue type, or cannot be reached is 422 naming the field;
// the token and secret never come back.
func TestJiraIntegrationIsCheckedWhenSaved(t *testing.T) {
	w := newWorld(t)
	site := trackerhost.NewJira(t, jiraEmail, jiraToken, jiraProject)
	body := func(siteURL, token, project, issueType string) string {
		return fmt.Sprintf(`{"site_url":%q,"email":%q,"api_token":%q,"project_key":%q,"issue_type":%q}`, siteURL, jiraEmail, token, project, issueType)
	}
	for _, c := range []struct {
		name, body string
		status     int
		field      string
	}{
		{"not Jira Cloud", body("https://jira.example.com", jiraToken, jiraProject, "Bug"), 400, "site_url"},
		{"a path", body("https://acme.atlassian.net/wiki", jiraToken, jiraProject, "Bug"), 400, "site_url"},
		{"a private address", body("https://10.1.2.3", jiraToken, jiraProject, "Bug"), 400, "site_url"},
		{"a refused token", body(site.URL(), "wrong-token", jiraProject, "Bug"), 422, "api_token"},
		{"no such project", body(site.URL(), jiraToken, "NOPE", "Bug"), 422, "project_key"},
		{"no such issue type", body(site.URL(), jiraToken, jiraProject, "Epic saga"), 422, "issue_type"},
		{"an unreachable site", body("http://127.0.0.1:1", jiraToken, jiraProject, "Bug"), 422, "site_url"},
		{"a bad project key", body(site.URL(), jiraToken, "sec-1", "Bug"), 400, "project_key"},
		{"no token", `{"site_url":"` + site.URL() + `","email":"a@b.test","project_key":"SEC"}`, 400, "api_token"},
		{"a short secret", `{"site_url":"` + site.URL() + `","email":"a@b.test","api_token":"t","project_key":"SEC","webhook_secret":"short"}`, 400, "webhook_secret"},
	} {
		res := testenv.Do(t, w.h, "POST", "/integrations/jira", c.body, w.key...)
		if res.Status != c.status || !strings.Contains(string(res.Body), c.field) {
			t.Errorf("%s: %d %s, want %d naming %s", c.name, res.Status, res.Body, c.status, c.field)
		}
	}
	if res := testenv.Do(t, w.h, "GET", "/integrations/jira", "", w.key...); !strings.Contains(string(res.Body), `"integrations":[]`) {
		t.Fatalf("a refused integration was stored: %s", res.Body)
	}
	in := w.jiraIntegration(t, site)
	res := testenv.Do(t, w.h, "GET", "/integrations/jira/"+in, "", w.key...)
	if res.Status != 200 || strings.Contains(string(res.Body), jiraToken) || strings.Contains(string(res.Body), jiraSecret) ||
		!strings.Contains(string(res.Body), `"account_id":"`+trackerhost.AccountID+`"`) || !strings.Contains(string(res.Body), `"webhook_secret_set":true`) {
		t.Fatalf("integration: %s", res.Body)
	}
	if strings.Contains(w.env.Logs.String(), jiraToken) {
		t.Fatal("the token was logged")
	}
	// A change of token is checked again; a refused one changes nothing.
	if res := testenv.Do(t, w.h, "PATCH", "/integrations/jira/"+in, `{"api_token":"revoked"}`, w.key...); res.Status != 422 || !strings.Contains(string(res.Body), "api_token") {
		t.Fatalf("patch with a refused token: %d %s", res.Status, res.Body)
	}
	// The stored token never goes to another site: moving needs a token,
	// and the other site hears nothing.
	elsewhere := trackerhost.NewJira(t, jiraEmail, jiraToken, jiraProject)
	if res := testenv.Do(t, w.h, "PATCH", "/integrations/jira/"+in, `{"site_url":"`+elsewhere.URL()+`"}`, w.key...); res.Status != 400 ||
		!strings.Contains(string(res.Body), "api_token is required") || elsewhere.Count("getCurrentUser") != 0 {
		t.Fatalf("patch of the site alone: %d %s (the other site heard %d)", res.Status, res.Body, elsewhere.Count("getCurrentUser"))
	}
	if res := testenv.Do(t, w.h, "PATCH", "/integrations/jira/"+in, `{"name":"Security board","done_transition":"Done"}`, w.key...); res.Status != 200 ||
		!strings.Contains(string(res.Body), `"name":"Security board"`) {
		t.Fatalf("patch: %d %s", res.Status, res.Body)
	}
}

// Another company's integrations and rules answer exactly as missing
// ones: reads, changes and deletes 404; a rule naming another company's
// integration as its destination is 400 with the text of an unknown one.
func TestTicketsAreTheCompanysOwn(t *testing.T) {
	w := newWorld(t)
	site := trackerhost.NewJira(t, jiraEmail, jiraToken, jiraProject)
	in := w.jiraIntegration(t, site)
	rule := w.rule(t, `{"matcher":{"cwe":"CWE-89"},"destination":{"kind":"jira","integration_uuid":"`+in+`"}}`)
	other := w.env.Company(t, "Globex")
	key := testenv.Key(other.Admin)
	gh, err := w.env.Store.Catalog.CreateIntegration(context.Background(), schema.Integration{CompanyID: w.acme.ID, UUID: catalog.NewIntegrationUUID(), Name: "gh", SealedToken: "x"})
	if err != nil {
		t.Fatal(err)
	}
	missing := "7d2f4a10-3b5c-4e6d-8f70-1a2b3c4d5e6f"
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/integrations/jira/%s", ""}, {"PATCH", "/integrations/jira/%s", `{"name":"x"}`}, {"DELETE", "/integrations/jira/%s", ""},
	} {
		mine := testenv.Do(t, w.h, c.method, fmt.Sprintf(c.path, missing), c.body, key...)
		theirs := testenv.Do(t, w.h, c.method, fmt.Sprintf(c.path, in), c.body, key...)
		if theirs.Status != 404 || string(theirs.Body) != string(mine.Body) {
			t.Errorf("%s another company's integration: %d %s; a missing one: %s", c.method, theirs.Status, theirs.Body, mine.Body)
		}
	}
	for _, c := range []struct{ method, body string }{{"GET", ""}, {"PATCH", `{"grouping":"cwe"}`}, {"DELETE", ""}} {
		theirs := testenv.Do(t, w.h, c.method, "/ticket-rules/"+rule, c.body, key...)
		mine := testenv.Do(t, w.h, c.method, "/ticket-rules/"+missing, c.body, key...)
		if theirs.Status != 404 || string(theirs.Body) != string(mine.Body) {
			t.Errorf("%s another company's rule: %d %s; a missing one: %s", c.method, theirs.Status, theirs.Body, mine.Body)
		}
	}
	for _, d := range []struct{ kind, id, repo string }{{"jira", in, ""}, {"github", gh.UUID, `,"repository":"acme/payments"`}} {
		theirs := testenv.Do(t, w.h, "POST", "/ticket-rules", `{"matcher":{},"destination":{"kind":"`+d.kind+`","integration_uuid":"`+d.id+`"`+d.repo+`}}`, key...)
		mine := testenv.Do(t, w.h, "POST", "/ticket-rules", `{"matcher":{},"destination":{"kind":"`+d.kind+`","integration_uuid":"`+missing+`"`+d.repo+`}}`, key...)
		if theirs.Status != 400 || string(theirs.Body) != string(mine.Body) || !strings.Contains(string(theirs.Body), "destination.integration_uuid") {
			t.Errorf("a %s destination of another company: %d %s; a missing one: %s", d.kind, theirs.Status, theirs.Body, mine.Body)
		}
	}
	if res := testenv.Do(t, w.h, "GET", "/ticket-rules", "", key...); res.Status != 200 || !strings.Contains(string(res.Body), `"rules":[]`) {
		t.Fatalf("another company lists: %d %s", res.Status, res.Body)
	}
	if res := testenv.Do(t, w.h, "GET", "/integrations/jira", "", key...); res.Status != 200 || !strings.Contains(string(res.Body), `"integrations":[]`) {
		t.Fatalf("another company lists Jira integrations: %d %s", res.Status, res.Body)
	}
	if res := testenv.Do(t, w.h, "GET", "/integrations/jira", "", w.key...); !strings.Contains(string(res.Body), in) {
		t.Fatalf("the owner lists its Jira integration: %s", res.Body)
	}
	// The owner still has both; an integration rules send to is not deleted.
	if res := testenv.Do(t, w.h, "DELETE", "/integrations/jira/"+in, "", w.key...); res.Status != http.StatusConflict {
		t.Fatalf("delete an integration in use: %d %s", res.Status, res.Body)
	}
}

// Rules are checked member by member: the triage rules' matcher checks,
// a known grouping, a repository for GitHub, bounded labels.
func TestTicketRuleInput(t *testing.T) {
	w := newWorld(t)
	in := w.jiraIntegration(t, trackerhost.NewJira(t, jiraEmail, jiraToken, jiraProject))
	dest := `"destination":{"kind":"jira","integration_uuid":"` + in + `"}`
	for _, c := range []struct{ body, field string }{
		{`{"matcher":{"cwe":"CWE-99999999"},` + dest + `}`, "matcher.cwe"},
		{`{"matcher":{"path":"[a-"},` + dest + `}`, "matcher.path"},
		{`{"matcher":{"urgency_at_least":"CR","urgency_at_most":"LO"},` + dest + `}`, "matcher.urgency_at_most"},
		{`{"matcher":{},` + dest + `,"grouping":"team"}`, "grouping"},
		{`{"matcher":{},` + dest + `,"labels":["a b"]}`, "labels"},
		{`{"matcher":{},` + dest + `,"project_id":424242}`, "project_id"},
		{`{"matcher":{},"destination":{"kind":"github","integration_uuid":"` + in + `"}}`, "destination.repository"},
		{`{"matcher":{},"destination":{"kind":"fax","integration_uuid":"` + in + `"}}`, "destination.kind"},
		{`{"destination":{"kind":"jira","integration_uuid":"` + in + `"}}`, "matcher"},
	} {
		res := testenv.Do(t, w.h, "POST", "/ticket-rules", c.body, w.key...)
		if res.Status != 400 || !strings.Contains(string(res.Body), c.field) {
			t.Errorf("%s: %d %s, want 400 naming %s", c.body, res.Status, res.Body, c.field)
		}
	}
	id := w.rule(t, `{"matcher":{"tool":"semgrep","new_on_default_branch":true},`+dest+`,"grouping":"rule","labels":["security","security"]}`)
	res := testenv.Do(t, w.h, "GET", "/ticket-rules/"+id, "", w.key...)
	if !strings.Contains(string(res.Body), `"labels":["security"]`) || !strings.Contains(string(res.Body), `"new_on_default_branch":true`) ||
		!strings.Contains(string(res.Body), `"grouping":"rule"`) {
		t.Fatalf("rule: %s", res.Body)
	}
}

// An inbound delivery is verified before anything of its body is read:
// unsigned, badly signed or signed for an unknown integration, it
// is the same 401 whatever the body (so uuids cannot be probed); only a
// verified one that is no JSON is 400.
func TestEventsAreVerifiedBeforeParsing(t *testing.T) {
	w := newWorld(t)
	site := trackerhost.NewJira(t, jiraEmail, jiraToken, jiraProject)
	in := w.jiraIntegration(t, site)
	events := "/integrations/jira/" + in + "/events"
	unknown := "/integrations/jira/7d2f4a10-3b5c-4e6d-8f70-1a2b3c4d5e6f/events"
	junk := []byte("{not json")
	refused := testenv.DoBytes(t, w.h, "POST", events, junk, "Content-Type", "application/json")
	if refused.Status != http.StatusUnauthorized {
		t.Fatalf("unsigned: %d %s", refused.Status, refused.Body)
	}
	sig := trackerhost.Sign(jiraSecret, junk)
	for name, res := range map[string]*testenv.Response{
		"another secret":        w.postSigned(t, events, "X-Hub-Signature", "not-the-secret-000000", "X-Atlassian-Webhook-Identifier", "d-1", junk),
		"an unknown uuid":       w.postSigned(t, unknown, "X-Hub-Signature", jiraSecret, "X-Atlassian-Webhook-Identifier", "d-1", junk),
		"sha1":                  testenv.DoBytes(t, w.h, "POST", events, junk, "X-Hub-Signature", strings.Replace(sig, "sha256=", "sha1=", 1)),
		"a truncated signature": testenv.DoBytes(t, w.h, "POST", events, junk, "X-Hub-Signature", sig[:len(sig)-2]),
	} {
		if res.Status != refused.Status || string(res.Body) != string(refused.Body) {
			t.Errorf("%s: %d %s, want the unsigned answer %s", name, res.Status, res.Body, refused.Body)
		}
	}
	if res := w.postSigned(t, events, "X-Hub-Signature", jiraSecret, "X-Atlassian-Webhook-Identifier", "d-1", junk); res.Status != http.StatusBadRequest ||
		!strings.Contains(string(res.Body), "not JSON") {
		t.Fatalf("signed junk: %d %s", res.Status, res.Body)
	}
}
