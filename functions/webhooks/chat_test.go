package webhooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/chatmsg/chattest"
	"github.com/acme/codescan-api/shared/store/delivery"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/tenancy"
)

type chatView struct {
	ID     string  `json:"id"`
	Kind   string  `json:"kind"`
	URL    string  `json:"url"`
	Filter *string `json:"filter"`
	Active bool    `json:"active"`
}

func (f *fixture) post(t *testing.T, u testenv.User, method, path string, body any) *testenv.Response {
	t.Helper()
	b, _ := json.Marshal(body)
	return testenv.Do(t, f.h, method, path, string(b), testenv.Key(u)...)
}

// TestChatDestination: a Slack destination is created with a filter, its
// URL sealed and shown masked, no signing secret; its test message is a
// valid Block Kit message; its filter and URL change; it cannot rotate a
// secret or change kind; every write is audited with kind and filter.
func TestChatDestination(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	slackSrv := chattest.NewSlack()
	defer slackSrv.Close()
	raw := slackSrv.URL + "/services/T0001/B0001/SECRETtoken1"
	filter := `event.new_findings.exists(x, x.urgency == "CR")`
	res := f.post(t, f.acme.Admin, "POST", "/webhooks", map[string]any{"url": raw, "kind": "slack", "types": []string{"scan_completed"}, "filter": filter})
	if res.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", res.Status, res.Body)
	}
	var out struct {
		Webhook chatView `json:"webhook"`
		Secret  *string  `json:"secret"`
	}
	res.Decode(t, &out)
	ep := out.Webhook
	if out.Secret != nil || ep.Kind != "slack" || ep.URL != slackSrv.URL+"/services/****" || ep.Filter == nil || *ep.Filter != filter {
		t.Fatalf("created: %+v secret %v", ep, out.Secret)
	}
	stored, err := f.env.Store.Deliveries.GetWebhook(ctx, f.acme.ID, ep.ID)
	if err != nil || strings.Contains(stored.SealedSecret, "SECRET") || strings.Contains(stored.URL, "SECRET") {
		t.Fatalf("stored: %+v %v", stored, err)
	}
	if opened, err := f.sealer.Open(ctx, stored.SealedSecret, delivery.WebhookSecretRecord(f.acme.ID, ep.ID)); err != nil || opened != raw {
		t.Fatalf("sealed URL opens to %q, %v", opened, err)
	}
	for _, path := range []string{"/webhooks/" + ep.ID, "/webhooks"} {
		if body := testenv.Do(t, f.h, "GET", path, "", testenv.Key(f.acme.Admin)...).Body; strings.Contains(string(body), "SECRET") {
			t.Fatalf("GET %s shows the URL: %s", path, body)
		}
	}

	// The test message reaches Slack, valid.
	res = testenv.Do(t, f.h, "POST", "/webhooks/"+ep.ID+"/test", "", testenv.Key(f.acme.Admin)...)
	var test struct {
		Delivered bool   `json:"delivered"`
		Outcome   string `json:"outcome"`
	}
	res.Decode(t, &test)
	if !test.Delivered || test.Outcome != "delivered" || len(slackSrv.Bodies()) != 1 || len(slackSrv.Invalid()) != 0 ||
		!strings.Contains(string(slackSrv.Bodies()[0]), "Test message from codescan") {
		t.Fatalf("test: %+v, bodies %d, invalid %v", test, len(slackSrv.Bodies()), slackSrv.Invalid())
	}

	// A new URL is a new sealed secret; "" removes the filter.
	raw2 := slackSrv.URL + "/services/T0001/B0001/SECRETtoken2"
	res = f.post(t, f.acme.Admin, "PATCH", "/webhooks/"+ep.ID, map[string]any{"url": raw2, "filter": ""})
	if res.Status != 200 {
		t.Fatalf("patch: %d %s", res.Status, res.Body)
	}
	res.Decode(t, &out)
	if out.Webhook.Filter != nil || strings.Contains(string(res.Body), "SECRET") {
		t.Fatalf("patched: %s", res.Body)
	}
	stored, _ = f.env.Store.Deliveries.GetWebhook(ctx, f.acme.ID, ep.ID)
	if opened, _ := f.sealer.Open(ctx, stored.SealedSecret, delivery.WebhookSecretRecord(f.acme.ID, ep.ID)); opened != raw2 {
		t.Fatalf("new URL not sealed: %q", opened)
	}
	for _, c := range []struct {
		method, path string
		body         any
		want         string
	}{
		{"PATCH", "/webhooks/" + ep.ID, map[string]any{"kind": "teams"}, `Unknown field \"kind\"`},
		{"POST", "/webhooks/" + ep.ID + "/rotate-secret", nil, "has no signing secret"},
	} {
		res := f.post(t, f.acme.Admin, c.method, c.path, c.body)
		if res.Status != 400 || !strings.Contains(string(res.Body), c.want) {
			t.Errorf("%s %s: %d %s", c.method, c.path, res.Status, res.Body)
		}
	}
	logPage, err := f.env.Store.Tenancy.ListAudit(ctx, f.acme.ID, tenancy.AuditFilter{}, page.Request{Limit: 10})
	log := logPage.Items
	if err != nil {
		t.Fatal(err)
	}
	var create, update *tenancy.AuditRecord
	for n := range log {
		switch log[n].Action {
		case "webhook.create":
			create = &log[n]
		case "webhook.update":
			update = &log[n]
		}
	}
	if create == nil || create.Changes["kind"].After != "slack" || create.Changes["filter"].After != filter ||
		strings.Contains(fmt.Sprint(create.Changes), "SECRET") {
		t.Fatalf("create audit: %+v", create)
	}
	if update == nil || update.Changes["filter"].Before != filter || update.Changes["filter"].After != nil ||
		update.Changes["secret"].After == nil || strings.Contains(fmt.Sprint(update.Changes), "SECRET") {
		t.Fatalf("update audit: %+v", update)
	}
	// Another company's id answers as a missing one.
	if res := f.post(t, f.other.Admin, "PATCH", "/webhooks/"+ep.ID, map[string]any{"filter": "true"}); res.Status != 404 {
		t.Fatalf("other company: %d", res.Status)
	}
	// The URL is the secret: no log line of any request holds it.
	if f.env.Logs.Len() == 0 || strings.Contains(f.env.Logs.String(), "SECRET") {
		t.Fatalf("logs (%d bytes) hold the chat URL's secret", f.env.Logs.Len())
	}
}

// TestFilterAndKindRefused: bad filters and chat URLs answer 400 naming the
// problem and store nothing; a filter that would run long is refused when
// saved.
func TestFilterAndKindRefused(t *testing.T) {
	f := newFixture(t)
	good := "https://hooks.example.com/x"
	cases := []struct {
		name string
		body map[string]any
		want string
	}{
		{"misspelled field", map[string]any{"filter": `event.projet.name == "x"`}, `filter: line 1, column 6: undefined field 'projet'`},
		{"not bool", map[string]any{"filter": `event.counts.new`}, "must return a bool, not int"},
		{"runs long", map[string]any{"filter": `event.new_findings.exists(a, event.new_findings.exists(b, a.title.contains(b.title)))`}, "more than the limit of 200000"},
		{"syntax", map[string]any{"filter": `event.type ==`}, "filter: line 1, column 14"},
		{"control character", map[string]any{"filter": "event.type == \"a\x01\""}, "filter"},
		{"bidi", map[string]any{"filter": "event.type == \"a\u202e\""}, "filter"},
		{"too long", map[string]any{"filter": strings.Repeat(`event.type == "x" || `, 100) + "true"}, "at most 2000 bytes"},
		{"not a string", map[string]any{"filter": 7}, "filter must be a string"},
		{"kind unknown", map[string]any{"kind": "discord"}, `kind must be one of [\"webhook\",\"slack\",\"teams\"]`},
		{"kind not a string", map[string]any{"kind": 1}, "kind must be one of"},
		{"slack url of a webhook", map[string]any{"kind": "slack", "url": good}, "Slack incoming webhook URL"},
		{"teams url of a webhook", map[string]any{"kind": "teams", "url": good}, "Teams Workflows webhook URL"},
	}
	for _, c := range cases {
		body := map[string]any{"url": good, "types": []string{"scan_completed"}}
		for k, v := range c.body {
			body[k] = v
		}
		res := f.post(t, f.acme.Admin, "POST", "/webhooks", body)
		if res.Status != 400 || !strings.Contains(string(res.Body), c.want) {
			t.Errorf("%s: %d %s, want 400 with %q", c.name, res.Status, res.Body, c.want)
		}
	}
	if n, err := f.env.Store.Deliveries.WebhookCount(context.Background(), f.acme.ID); err != nil || n != 0 {
		t.Fatalf("stored: %d %v", n, err)
	}
}

// TestFilterDryRun answers exactly which of the company's recent events
// a filter selects: newest first, within 7 days, of the types asked, the
// scan's new findings read from the store, another company's events never.
func TestFilterDryRun(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	st := f.env.Store
	now := time.Now().UTC().Truncate(time.Second)
	f.at = now
	proj, err := st.Catalog.CreateProject(ctx, schema.Project{CompanyID: f.acme.ID, Name: "payments-api"})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := st.Scans.CreateScan(ctx, scans.Scan{CompanyID: f.acme.ID, ProjectID: proj.ID, Branch: "main", Engine: "sarif", Tool: "semgrep",
		Status: scans.ScanProcessing, CreatedAt: now.Format(time.RFC3339)})
	if err != nil {
		t.Fatal(err)
	}
	issue := func(fp, urgency string) findings.Issue {
		return findings.Issue{ID: findings.IssueID(f.acme.ID, proj.ID, "main", "semgrep", fp), ProjectID: proj.ID, ProjectName: proj.Name,
			Branch: "main", Tool: "semgrep", Fingerprint: fp, CWE: 89, FilePath: "a.go", Urgency: urgency, CreatedAt: sc.CreatedAt}
	}
	if _, err := st.Findings.ApplyScan(ctx, f.acme.ID, sc, []findings.Issue{issue("a", "CR"), issue("b", "LO")}); err != nil {
		t.Fatal(err)
	}
	scanData, _ := testenv.OutboxEvent(t, st, f.acme.ID, "scan_completed-"+sc.ID)
	ev := func(c *testenv.Company, id, typ string, age time.Duration, data map[string]any) schema.Event {
		b, _ := json.Marshal(data)
		e := schema.Event{ID: id, CompanyID: c.ID, Type: typ, CreatedAt: now.Add(-age), Data: b}
		if err := st.Deliveries.RecordRecentEvent(ctx, e); err != nil {
			t.Fatal(err)
		}
		return e
	}
	ev(f.acme, "scan_completed-"+sc.ID, "scan_completed", 5*time.Minute, scanData)
	ev(f.acme, "scan_completed-s2", "scan_completed", 4*time.Minute, map[string]any{"scan_id": "s2", "project_name": "billing", "findings": 0})
	ev(f.acme, "issue_status_changed-i1-v2", "issue_status_changed", 3*time.Minute, map[string]any{"issue_id": "i1", "project_name": "payments-api", "status": "fixed"})
	ev(f.acme, "sla_breach-i2", "sla_breach", 2*time.Minute, map[string]any{"issue_id": "i2", "project_name": "billing", "urgency": "HI"})
	ev(f.acme, "weekly_digest-1", "weekly_digest", time.Minute, map[string]any{"open_issues": 3})
	ev(f.acme, "scan_completed-old", "scan_completed", 8*24*time.Hour, map[string]any{"project_name": "payments-api"})
	ev(f.other, "scan_completed-theirs", "scan_completed", time.Minute, map[string]any{"project_name": "payments-api"})

	type answer struct {
		Events []struct {
			EventID  string  `json:"event_id"`
			Selected bool    `json:"selected"`
			Error    *string `json:"error"`
		} `json:"events"`
		Totals map[string]int `json:"totals"`
	}
	run := func(body map[string]any) (answer, string) {
		t.Helper()
		res := f.post(t, f.acme.Admin, "POST", "/webhooks/filter-dry-run", body)
		if res.Status != 200 {
			t.Fatalf("dry run %v: %d %s", body, res.Status, res.Body)
		}
		var a answer
		res.Decode(t, &a)
		var got []string
		for _, e := range a.Events {
			mark := "-"
			switch {
			case e.Error != nil:
				mark = "!" + *e.Error
			case e.Selected:
				mark = "+"
			}
			got = append(got, strings.SplitN(e.EventID, "-", 2)[0]+mark)
		}
		return a, strings.Join(got, " ")
	}
	a, got := run(map[string]any{"filter": `event.project.name.startsWith("payments-") || event.new_findings.exists(x, x.urgency == "CR")`})
	if got != "weekly_digest- sla_breach- issue_status_changed+ scan_completed- scan_completed+" ||
		!maps(a.Totals, map[string]int{"events": 5, "selected": 2, "not_selected": 3, "errors": 0}) {
		t.Fatalf("dry run: %s %v", got, a.Totals)
	}
	if a.Events[4].EventID != "scan_completed-"+sc.ID {
		t.Fatalf("the scan's event: %+v", a.Events[4])
	}
	// The scan's counts come from the store: 2 new issues.
	a, got = run(map[string]any{"filter": `event.counts.new == 2`, "types": []string{"scan_completed"}})
	if got != "scan_completed- scan_completed+" || a.Totals["selected"] != 1 {
		t.Fatalf("types: %s", got)
	}
	// A missing key of event.data fails evaluation: not selected, counted.
	a, got = run(map[string]any{"filter": `event.data.urgency == "HI"`, "limit": 3})
	if got != "weekly_digest!evaluation_error sla_breach+ issue_status_changed!evaluation_error" ||
		!maps(a.Totals, map[string]int{"events": 3, "selected": 1, "not_selected": 2, "errors": 2}) {
		t.Fatalf("errors: %s %v", got, a.Totals)
	}
	// Another company sees only its own.
	res := f.post(t, f.other.Admin, "POST", "/webhooks/filter-dry-run", map[string]any{"filter": "true"})
	if !strings.Contains(string(res.Body), `"events":1,`) || !strings.Contains(string(res.Body), "scan_completed-theirs") {
		t.Fatalf("other company: %s", res.Body)
	}
	for _, c := range []struct {
		body map[string]any
		want string
	}{
		{map[string]any{}, "filter is required"},
		{map[string]any{"filter": `event.nope`}, "undefined field 'nope'"},
		{map[string]any{"filter": "true", "limit": 0}, "limit must be an integer from 1 to 200"},
		{map[string]any{"filter": "true", "limit": 201}, "limit must be"},
		{map[string]any{"filter": "true", "types": []string{"nope"}}, "Unknown notification type"},
		{map[string]any{"filter": "true", "x": 1}, `Unknown field \"x\"`},
	} {
		res := f.post(t, f.acme.Admin, "POST", "/webhooks/filter-dry-run", c.body)
		if res.Status != 400 || !strings.Contains(string(res.Body), c.want) {
			t.Errorf("%v: %d %s", c.body, res.Status, res.Body)
		}
	}
	if res := f.post(t, f.member, "POST", "/webhooks/filter-dry-run", map[string]any{"filter": "true"}); res.Status != 403 {
		t.Fatalf("member: %d", res.Status)
	}
}

func maps(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
