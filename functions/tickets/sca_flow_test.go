package tickets_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/internal/trackerhost"
	"github.com/acme/codescan-api/shared/reportfinding"
	"github.com/acme/codescan-api/shared/scanlife"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
	storetickets "github.com/acme/codescan-api/shared/store/tickets"
	ticketing "github.com/acme/codescan-api/shared/tickets"
)

// dep is one SCA finding of a report: package, version, fix, advisory
// ids (primary first), severity.
type dep struct {
	name, version, eco, fix, severity string
	ids                               []string
}

// deps are 5 Go findings in 2 packages, and one npm finding.
var deps = []dep{
	{"golang.org/x/net", "v0.7.0", "Go", "0.17.0", "HIGH", []string{"GO-2023-1988", "CVE-2023-3978", "GHSA-2wrh-6pvc-2jm9"}},
	{"golang.org/x/net", "v0.7.0", "Go", "0.17.0", "MEDIUM", []string{"GO-2023-2102", "CVE-2023-39325", "GHSA-4374-p667-p6c8"}},
	{"golang.org/x/net", "v0.7.0", "Go", "0.17.0", "CRITICAL", []string{"GO-2024-2687", "CVE-2023-45288"}},
	{"golang.org/x/crypto", "v0.1.0", "Go", "0.17.0", "MEDIUM", []string{"GO-2023-2402", "CVE-2023-48795", "GHSA-45x7-px36-x8w8"}},
	{"golang.org/x/crypto", "v0.1.0", "Go", "", "LOW", []string{"GHSA-v778-237x-gjrc"}},
	{"lodash", "4.17.20", "npm", "4.17.21", "HIGH", []string{"GHSA-35jh-r3h4-6jhm", "CVE-2021-23337"}},
}

// scaScan writes an osv-scanner scan of project proj's main branch of
// company that reports ds, the way the ingester does (SCA findings, then
// the lifecycle that completes the scan), and returns it.
func (w *world) scaScan(t *testing.T, company int64, proj schema.Project, ds ...dep) scans.Scan {
	t.Helper()
	w.clock.Add(time.Minute)
	ctx := context.Background()
	sc, err := w.env.Store.Scans.CreateScan(ctx, scans.Scan{CompanyID: company, ProjectID: proj.ID, Branch: "main", Engine: "osv-scanner",
		Tool: "osv-scanner", Status: scans.ScanProcessing, CreatedAt: w.clock.Now().Format(time.RFC3339)})
	if err != nil {
		t.Fatal(err)
	}
	var fs []reportfinding.Finding
	for _, d := range ds {
		cve := ""
		for _, id := range d.ids {
			if strings.HasPrefix(id, "CVE-") && cve == "" {
				cve = id
			}
		}
		fs = append(fs, reportfinding.Finding{Kind: reportfinding.SCA, Tool: "osv-scanner", RuleID: d.ids[0], Title: d.ids[0], Urgency: sca.Urgency(d.severity),
			SCA: &reportfinding.Dependency{Name: d.name, Version: d.version, Ecosystem: d.eco, FixVersion: d.fix, IDs: d.ids, CVE: cve,
				Severity: d.severity, Summary: "Vulnerable " + d.name, Manifest: map[string]string{"Go": "go.mod", "npm": "package-lock.json"}[d.eco],
				Reachability: reportfinding.Reachability{Status: reportfinding.NotAnalyzed}}})
	}
	if err := scanlife.Write(ctx, scanlife.WritingOf(w.env.Store), sc, proj, fs); err != nil {
		t.Fatal(err)
	}
	return sc
}

// scaOf are the ids of the SCA findings a link lists.
func scaOf(l schema.TicketLink) []string {
	var out []string
	for _, id := range l.IssueIDs {
		if sid, ok := strings.CutPrefix(id, ticketing.SCAPrefix); ok {
			out = append(out, sid)
		}
	}
	return out
}

// SCA findings become tickets: a rule on the Go ecosystem grouped per
// package opens one "upgrade" ticket per package (the npm finding is not
// the rule's), once across a retry and a second scan; a package matcher
// takes exactly its package's findings; another company's findings of
// the same packages never appear; won't do on an SCA ticket accepts its
// findings' risk through the SCA status write path (and reopening undoes
// it); findings no source reports any more close their tickets.
func TestSCAFindingsBecomeTickets(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	site := trackerhost.NewJira(t, jiraEmail, jiraToken, jiraProject)
	in := w.jiraIntegration(t, site)
	proj, err := w.env.Store.Catalog.CreateProject(ctx, schema.Project{CompanyID: w.acme.ID, Name: "deps", DefaultBranch: "main"})
	if err != nil {
		t.Fatal(err)
	}
	// Another company with the same packages, in a project of its own.
	beta := w.env.Company(t, "Beta")
	betaProj, err := w.env.Store.Catalog.CreateProject(ctx, schema.Project{CompanyID: beta.ID, Name: "deps", DefaultBranch: "main"})
	if err != nil {
		t.Fatal(err)
	}
	betaScan := w.scaScan(t, beta.ID, betaProj, deps...)
	betaListPage, err := w.env.Store.SCA.ListScanSCAIssues(ctx, beta.ID, betaScan.ID, page.Request{Limit: 100})
	betaList := betaListPage.Items
	if err != nil || len(betaList) != len(deps) {
		t.Fatalf("beta's findings: %d %v", len(betaList), err)
	}

	w.rule(t, `{"matcher":{"ecosystem":"go"},"destination":{"kind":"jira","integration_uuid":"`+in+`"},"grouping":"package"}`)
	first := w.scaScan(t, w.acme.ID, proj, deps...)
	site.FailAfter("createIssue", 1)
	w.dispatch(t, first.ID)
	w.retry(t)
	w.retry(t)
	if got := site.Count("createIssue"); got != 2 || len(site.Issues()) != 2 || len(w.links(t)) != 2 {
		t.Fatalf("%d creates, %d issues, %d links; want 2 each", got, len(site.Issues()), len(w.links(t)))
	}
	byPkg := map[string]schema.TicketLink{}
	for _, l := range w.links(t) {
		ids := scaOf(l)
		if len(ids) != len(l.IssueIDs) {
			t.Fatalf("link %s lists code findings: %v", l.TicketKey, l.IssueIDs)
		}
		i, err := w.env.Store.SCA.GetSCAIssue(ctx, w.acme.ID, ids[0])
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			if j, err := w.env.Store.SCA.GetSCAIssue(ctx, w.acme.ID, id); err != nil || j.Package.Name != i.Package.Name {
				t.Fatalf("ticket %s mixes packages: %+v %v", l.TicketKey, j.Package, err)
			}
		}
		byPkg[i.Package.Name] = l
	}
	net, crypto := byPkg["golang.org/x/net"], byPkg["golang.org/x/crypto"]
	if len(scaOf(net)) != 3 || len(scaOf(crypto)) != 2 {
		t.Fatalf("per package: x/net %d, x/crypto %d", len(scaOf(net)), len(scaOf(crypto)))
	}
	// The finding's answer shows its ticket (validated against the
	// OpenAPI description).
	var one struct {
		Issue struct {
			Tickets []struct{ System, Key, State string } `json:"tickets"`
		} `json:"issue"`
	}
	testenv.Do(t, w.mux, "GET", "/issues/sca/"+scaOf(net)[0], "", w.key...).Decode(t, &one)
	if len(one.Issue.Tickets) != 1 || one.Issue.Tickets[0].Key != net.TicketKey || one.Issue.Tickets[0].System != "jira" {
		t.Fatalf("tickets of an SCA finding: %+v, want %s", one.Issue.Tickets, net.TicketKey)
	}
	for _, i := range site.Issues() {
		text := adfText(t, i.Description)
		if i.Key == net.TicketKey {
			if !strings.HasPrefix(i.Summary, "Upgrade golang.org/x/net (Go) to 0.17.0") {
				t.Fatalf("summary %q", i.Summary)
			}
			for _, want := range []string{"golang.org/x/net@v0.7.0", "GO-2023-1988, CVE-2023-3978, GHSA-2wrh-6pvc-2jm9", "severity CRITICAL", "fix version 0.17.0", "go.mod"} {
				if !strings.Contains(text, want) {
					t.Fatalf("x/net's ticket lacks %q: %s", want, text)
				}
			}
		}
		for _, b := range betaList {
			if strings.Contains(text, b.ID) {
				t.Fatalf("another company's finding %s in %s", b.ID, i.Key)
			}
		}
		if strings.Contains(text, "lodash") {
			t.Fatalf("the npm finding in %s", i.Key)
		}
	}

	// The same findings again: no ticket, no comment. Beta's scan under
	// Acme's name: nothing (its scan is not Acme's).
	w.dispatch(t, w.scaScan(t, w.acme.ID, proj, deps...).ID)
	w.dispatch(t, betaScan.ID)
	w.retry(t)
	if site.Count("createIssue") != 2 || site.Count("addComment") != 0 || len(w.links(t)) != 2 {
		t.Fatalf("second scan: %d creates, %d comments, %d links", site.Count("createIssue"), site.Count("addComment"), len(w.links(t)))
	}

	// A package matcher, per finding: exactly x/crypto's two findings.
	w.rule(t, `{"matcher":{"package":"golang.org/x/crypto"},"destination":{"kind":"jira","integration_uuid":"`+in+`"},"grouping":"finding"}`)
	w.dispatch(t, w.scaScan(t, w.acme.ID, proj, deps...).ID)
	if site.Count("createIssue") != 4 || len(w.links(t)) != 4 {
		t.Fatalf("package matcher: %d creates, %d links", site.Count("createIssue"), len(w.links(t)))
	}
	var perFinding []string
	for _, l := range w.links(t) {
		if l.TicketKey != net.TicketKey && l.TicketKey != crypto.TicketKey {
			perFinding = append(perFinding, scaOf(l)...)
		}
	}
	want := scaOf(crypto)
	slices.Sort(perFinding)
	slices.Sort(want)
	if !slices.Equal(perFinding, want) {
		t.Fatalf("the package rule's tickets list %v, want %v", perFinding, want)
	}

	// Won't do on x/net's ticket: its 3 findings accepted, with the ticket
	// as reason, through the SCA status write path; nothing else moves.
	events := "/integrations/jira/" + in + "/events"
	site.Transition(net.TicketKey, "Won't Do")
	res := w.postSigned(t, events, "X-Hub-Signature", jiraSecret, "X-Atlassian-Webhook-Identifier", "sca-1", site.IssueUpdated(net.TicketKey, "557058:a-person"))
	if res.Status != http.StatusOK || !strings.Contains(string(res.Body), `"result":"applied"`) {
		t.Fatalf("won't do: %d %s", res.Status, res.Body)
	}
	statuses := func() map[string]int {
		out := map[string]int{}
		listPage, err := w.env.Store.SCA.ListSCAIssues(ctx, w.acme.ID, proj.ID, page.Request{Limit: 100})
		list := listPage.Items
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range list {
			out[i.Status]++
			if slices.Contains(scaOf(net), i.ID) && i.Status == "accepted_risk" && i.Reason != "Won't fix: the ticket was closed as won't do (from Jira "+net.TicketKey+")" {
				t.Fatalf("reason %q", i.Reason)
			}
			if i.Status == "accepted_risk" && !slices.Contains(scaOf(net), i.ID) {
				t.Fatalf("finding %s (%s) accepted", i.ID, i.Package.Name)
			}
		}
		return out
	}
	if got := statuses(); got["accepted_risk"] != 3 || got["open"] != 3 {
		t.Fatalf("after won't do: %v", got)
	}
	for _, b := range betaList {
		if i, err := w.env.Store.SCA.GetSCAIssue(ctx, beta.ID, b.ID); err != nil || i.Status != "open" {
			t.Fatalf("beta's finding: %s %v", i.Status, err)
		}
	}
	// Reopened: the findings it accepted open again.
	site.Transition(net.TicketKey, "To Do")
	if res := w.postSigned(t, events, "X-Hub-Signature", jiraSecret, "X-Atlassian-Webhook-Identifier", "sca-2", site.IssueUpdated(net.TicketKey, "557058:a-person")); !strings.Contains(string(res.Body), `"applied"`) {
		t.Fatalf("reopen: %s", res.Body)
	}
	if got := statuses(); got["open"] != 6 {
		t.Fatalf("after reopening: %v", got)
	}

	// A scan that no longer reports x/crypto: no source reports its
	// findings, so its tickets (the package's and the two per finding)
	// are closed as fixed; x/net's stays open.
	w.dispatch(t, w.scaScan(t, w.acme.ID, proj, deps[0], deps[1], deps[2], deps[5]).ID)
	closed := 0
	for _, l := range w.links(t) {
		if l.State == storetickets.StateClosed {
			closed++
			if l.TicketKey == net.TicketKey {
				t.Fatal("x/net's ticket closed")
			}
		}
	}
	if closed != 3 {
		t.Fatalf("%d tickets closed, want 3", closed)
	}
	// x/crypto reported again: its tickets reopen.
	w.dispatch(t, w.scaScan(t, w.acme.ID, proj, deps...).ID)
	for _, l := range w.links(t) {
		if l.State != storetickets.StateOpen {
			t.Fatalf("ticket %s after x/crypto came back: %s", l.TicketKey, l.State)
		}
	}
	testenv.Recount(t, w.env.Store, w.acme.ID)
}

// adfText is the text of an ADF document as sent.
func adfText(t *testing.T, doc any) string {
	t.Helper()
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var n struct {
		Text    string            `json:"text"`
		Content []json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(b, &n)
	out := n.Text
	for _, c := range n.Content {
		var v any
		_ = json.Unmarshal(c, &v)
		out += adfText(t, v) + "\n"
	}
	return out
}

// Rules on SCA findings: grouping cwe is refused (SCA findings seldom name
// a CWE), naming the field; package and ecosystem are taken.
func TestSCARuleValidation(t *testing.T) {
	w := newWorld(t)
	site := trackerhost.NewJira(t, jiraEmail, jiraToken, jiraProject)
	in := w.jiraIntegration(t, site)
	dest := `"destination":{"kind":"jira","integration_uuid":"` + in + `"}`
	res := testenv.Do(t, w.h, "POST", "/ticket-rules", `{"matcher":{"ecosystem":"Go"},`+dest+`,"grouping":"cwe"}`, w.key...)
	if res.Status != http.StatusBadRequest || !strings.Contains(string(res.Body), "grouping") {
		t.Fatalf("cwe grouping of an SCA rule: %d %s", res.Status, res.Body)
	}
	res = testenv.Do(t, w.h, "POST", "/ticket-rules", `{"matcher":{"ecosystem":"Klingon"},`+dest+`}`, w.key...)
	if res.Status != http.StatusBadRequest || !strings.Contains(string(res.Body), "matcher.ecosystem") {
		t.Fatalf("unknown ecosystem: %d %s", res.Status, res.Body)
	}
	id := w.rule(t, `{"matcher":{"package":"lodash","ecosystem":"npm","rule_id":"CVE-2021-23337"},`+dest+`,"grouping":"rule"}`)
	res = testenv.Do(t, w.h, "PATCH", "/ticket-rules/"+id, `{"grouping":"cwe"}`, w.key...)
	if res.Status != http.StatusBadRequest || !strings.Contains(string(res.Body), "grouping") {
		t.Fatalf("patch to cwe: %d %s", res.Status, res.Body)
	}
	w.rule(t, `{"matcher":{"urgency_at_least":"HI"},`+dest+`,"grouping":"package"}`)
}
