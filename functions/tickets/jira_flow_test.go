package tickets_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/internal/trackerhost"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/schema"
	storetickets "github.com/acme/codescan-api/shared/store/tickets"
	ticketing "github.com/acme/codescan-api/shared/tickets"
)

// 300 matching findings grouped per CWE open exactly one Jira ticket per
// CWE, once: the site answers 502 to two creates after making the issue
// (an attempt that dies between the far side's change and our record of
// it), and the retries adopt those issues by their marker label instead
// of creating more. A second scan of the same findings opens none. Every
// request is validated against Jira's published description.
func TestOneTicketPerCWEOnceUnderRetries(t *testing.T) {
	w := newWorld(t)
	site := trackerhost.NewJira(t, jiraEmail, jiraToken, jiraProject)
	in := w.jiraIntegration(t, site)
	w.rule(t, `{"matcher":{"urgency_at_least":"LO"},"destination":{"kind":"jira","integration_uuid":"`+in+`"},"grouping":"cwe","labels":["security"]}`)

	first := w.scan(t, report(300))
	site.FailAfter("createIssue", 2)
	w.dispatch(t, first)
	if got := len(site.Issues()); got != len(cwes) {
		t.Fatalf("%d issues on the site after the first attempts, want %d", got, len(cwes))
	}
	if got := len(w.links(t)); got != len(cwes)-2 {
		t.Fatalf("%d links recorded before the retries, want %d", got, len(cwes)-2)
	}
	if n := w.retry(t); n != 2 {
		t.Fatalf("%d retries, want 2", n)
	}
	issues, links := site.Issues(), w.links(t)
	if len(issues) != len(cwes) || len(links) != len(cwes) || site.Count("createIssue") != len(cwes) {
		t.Fatalf("%d issues, %d links, %d creates; want %d each", len(issues), len(links), site.Count("createIssue"), len(cwes))
	}
	total := 0
	keys := map[string]bool{}
	for _, l := range links {
		total += len(l.IssueIDs)
		keys[l.TicketKey] = true
		if l.State != storetickets.StateOpen || l.System != "jira" || !strings.HasPrefix(l.URL, site.URL()+"/browse/SEC-") {
			t.Fatalf("link %+v", l)
		}
	}
	if total != 300 || len(keys) != len(cwes) {
		t.Fatalf("links list %d findings under %d keys, want 300 under %d", total, len(keys), len(cwes))
	}
	for _, i := range issues {
		if !contains2(i.Labels, "security") || len(i.Labels) != 2 {
			t.Fatalf("issue %s labels %v", i.Key, i.Labels)
		}
	}

	// The same findings again: no ticket, no comment.
	second := w.scan(t, report(300))
	w.dispatch(t, second)
	w.retry(t)
	if site.Count("createIssue") != len(cwes) || site.Count("addComment") != 0 || len(w.links(t)) != len(cwes) {
		t.Fatalf("second scan: %d creates, %d comments", site.Count("createIssue"), site.Count("addComment"))
	}
	// Six more findings, one per CWE: each joins its group's ticket as a
	// comment listing it; no new ticket.
	w.dispatch(t, w.scan(t, report(306)))
	if site.Count("createIssue") != len(cwes) || site.Count("addComment") != len(cwes) {
		t.Fatalf("third scan: %d creates, %d comments", site.Count("createIssue"), site.Count("addComment"))
	}
	sum := 0
	for _, l := range w.links(t) {
		sum += len(l.IssueIDs)
	}
	if sum != 306 {
		t.Fatalf("links list %d findings, want 306", sum)
	}
	if got := w.total(t, "has_ticket=true"); got != 306 {
		t.Fatalf("has_ticket=true after the third scan: %d", got)
	}
	if got := w.total(t, "has_ticket=false"); got != 0 {
		t.Fatalf("has_ticket=false: %d", got)
	}
	// Every issue answer shows its ticket; the ticket filters are exact.
	one := links[0].IssueIDs[0]
	res := testenv.Do(t, w.mux, "GET", "/issue/"+one, "", w.key...)
	if !strings.Contains(string(res.Body), `"tickets":[{"system":"jira","key":"`+links[0].TicketKey+`"`) {
		t.Fatalf("issue answer: %s", res.Body)
	}
	testenv.Recount(t, w.env.Store, w.acme.ID)
}

func contains2(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// linkOf is the link of ticket key.
func (w *world) linkOf(t *testing.T, key string) schema.TicketLink {
	t.Helper()
	for _, l := range w.links(t) {
		if l.TicketKey == key {
			return l
		}
	}
	t.Fatalf("no link of %s", key)
	return schema.TicketLink{}
}

// statuses counts the statuses of the ticket's findings and checks their reason.
func (w *world) statuses(t *testing.T, l schema.TicketLink, reason string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, id := range l.IssueIDs {
		i, err := w.env.Store.Lists.GetIssue(context.Background(), w.acme.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		out[i.Status]++
		if reason != "" && i.Status == "accepted_risk" && !strings.Contains(i.Reason, reason) {
			t.Fatalf("finding %s reason %q, want it to name %q", id, i.Reason, reason)
		}
	}
	return out
}

// The ticket → our side, through Jira's signed webhook: closed as won't do
// accepts the risk of exactly its findings (the company's default end, the
// ticket as reason), counted exactly; a replay and a forged delivery
// change nothing; a change by our own account is not applied back; a lost
// event is repaired by the daily reconciliation (controlled clock); a
// scan that fixes a ticket's findings closes it on the site.
func TestTicketsComeBack(t *testing.T) {
	w := newWorld(t)
	site := trackerhost.NewJira(t, jiraEmail, jiraToken, jiraProject)
	in := w.jiraIntegration(t, site)
	w.rule(t, `{"matcher":{},"destination":{"kind":"jira","integration_uuid":"`+in+`"},"grouping":"cwe"}`)
	w.dispatch(t, w.scan(t, report(60)))
	if len(site.Issues()) != len(cwes) {
		t.Fatalf("%d tickets", len(site.Issues()))
	}
	events := "/integrations/jira/" + in + "/events"

	// Won't do, signed: its 10 findings accepted, nothing else.
	site.Transition("SEC-1", "Won't Do")
	body := site.IssueUpdated("SEC-1", "557058:a-person")
	res := w.postSigned(t, events, "X-Hub-Signature", jiraSecret, "X-Atlassian-Webhook-Identifier", "d-1", body)
	if res.Status != http.StatusOK || !strings.Contains(string(res.Body), `"result":"applied"`) {
		t.Fatalf("won't do: %d %s", res.Status, res.Body)
	}
	l1 := w.linkOf(t, "SEC-1")
	if got := w.statuses(t, l1, "from Jira SEC-1"); got["accepted_risk"] != 10 || len(got) != 1 {
		t.Fatalf("SEC-1's findings: %v", got)
	}
	if got := w.total(t, "status=accepted_risk"); got != 10 {
		t.Fatalf("accepted_risk total %d, want 10", got)
	}
	if got := w.total(t, "ticket_state=closed"); got != 10 {
		t.Fatalf("ticket_state=closed: %d", got)
	}
	if got := w.total(t, "has_ticket=true&ticket_state=open"); got != 50 {
		t.Fatalf("ticket_state=open: %d", got)
	}
	i, _ := w.env.Store.Lists.GetIssue(context.Background(), w.acme.ID, l1.IssueIDs[0])
	if end, err := time.Parse(time.RFC3339, i.ExpiresAt); err != nil || end.Sub(w.clock.Now()) < 24*time.Hour {
		t.Fatalf("accepted until %q", i.ExpiresAt)
	}
	testenv.Recount(t, w.env.Store, w.acme.ID)

	// The same delivery again; a forged one (another secret).
	if res := w.postSigned(t, events, "X-Hub-Signature", jiraSecret, "X-Atlassian-Webhook-Identifier", "d-1", body); !strings.Contains(string(res.Body), `"duplicate"`) {
		t.Fatalf("replay: %s", res.Body)
	}
	site.Transition("SEC-2", "Won't Do")
	forged := site.IssueUpdated("SEC-2", "557058:a-person")
	if res := w.postSigned(t, events, "X-Hub-Signature", "not-the-secret-000000", "X-Atlassian-Webhook-Identifier", "d-2", forged); res.Status != http.StatusUnauthorized {
		t.Fatalf("forged: %d %s", res.Status, res.Body)
	}
	if got := w.statuses(t, w.linkOf(t, "SEC-2"), ""); got["open"] != 10 {
		t.Fatalf("SEC-2's findings after a forged event: %v", got)
	}
	if l := w.linkOf(t, "SEC-2"); l.State != storetickets.StateOpen {
		t.Fatalf("SEC-2 after a forged event: %+v", l)
	}

	// The forged event's change was real but its delivery lost: the
	// reconciliation finds it a day later.
	w.clock.Add(25 * time.Hour)
	rec, err := w.ticketer.Reconcile(context.Background(), w.acme.ID)
	if err != nil || rec.Checked != len(cwes) || rec.Repaired != 1 {
		t.Fatalf("reconcile: %+v %v", rec, err)
	}
	if got := w.statuses(t, w.linkOf(t, "SEC-2"), "reconciliation of Jira SEC-2"); got["accepted_risk"] != 10 {
		t.Fatalf("SEC-2's findings after the reconciliation: %v", got)
	}
	if rec, _ := w.ticketer.Reconcile(context.Background(), w.acme.ID); rec.Checked != 0 {
		t.Fatalf("a second run the same day checked %d", rec.Checked)
	}
	testenv.Recount(t, w.env.Store, w.acme.ID)

	// A change our own account made comes back as an echo.
	site.Transition("SEC-3", "Won't Do")
	echo := site.IssueUpdated("SEC-3", trackerhost.AccountID)
	if res := w.postSigned(t, events, "X-Hub-Signature", jiraSecret, "X-Atlassian-Webhook-Identifier", "d-3", echo); !strings.Contains(string(res.Body), `"echo"`) {
		t.Fatalf("echo: %s", res.Body)
	}
	if got := w.statuses(t, w.linkOf(t, "SEC-3"), ""); got["open"] != 10 {
		t.Fatalf("SEC-3's findings after our echo: %v", got)
	}
	site.Transition("SEC-3", "To Do")

	// Reopened on the site: its accepted findings open again.
	site.Transition("SEC-1", "To Do")
	if res := w.postSigned(t, events, "X-Hub-Signature", jiraSecret, "X-Atlassian-Webhook-Identifier", "d-4", site.IssueUpdated("SEC-1", "557058:a-person")); !strings.Contains(string(res.Body), `"applied"`) {
		t.Fatalf("reopen: %s", res.Body)
	}
	if got := w.statuses(t, w.linkOf(t, "SEC-1"), ""); got["open"] != 10 {
		t.Fatalf("SEC-1's findings reopened: %v", got)
	}

	// A scan without CWE-918's findings fixes them: its ticket is
	// commented and moved to Done; shown closed, not fix_in_progress.
	w.dispatch(t, w.scan(t, report(60, 918)))
	l := w.ticketOfCWE(t, 918)
	var fixed *trackerhost.JiraIssue
	for _, i := range site.Issues() {
		if i.Key == l.TicketKey {
			fixed = &i
		}
	}
	if fixed == nil || fixed.Status != "Done" || len(fixed.Comments) != 1 || l.State != storetickets.StateClosed || storetickets.View(l).State != "closed" {
		t.Fatalf("CWE-918's ticket after the fix: %+v link %+v", fixed, l)
	}
	// The findings come back: the ticket we closed is reopened.
	w.dispatch(t, w.scan(t, report(60)))
	l = w.ticketOfCWE(t, 918)
	for _, i := range site.Issues() {
		if i.Key == l.TicketKey && (i.Status != "To Do" || len(i.Comments) != 2) {
			t.Fatalf("CWE-918's ticket after the findings came back: %+v", i)
		}
	}
	if l.State != storetickets.StateOpen || w.statuses(t, l, "")["open"] != 10 {
		t.Fatalf("CWE-918's link after the findings came back: %+v", l)
	}
	testenv.Recount(t, w.env.Store, w.acme.ID)
}

// ticketOfCWE is the link whose findings are of cwe.
func (w *world) ticketOfCWE(t *testing.T, cwe int) schema.TicketLink {
	t.Helper()
	for _, l := range w.links(t) {
		i, err := w.env.Store.Lists.GetIssue(context.Background(), w.acme.ID, l.IssueIDs[0])
		if err != nil {
			t.Fatal(err)
		}
		if i.CWE == cwe {
			return l
		}
	}
	t.Fatalf("no ticket of CWE-%d", cwe)
	return schema.TicketLink{}
}

// A worker killed after it created a group's ticket and before it
// recorded it leaves its lease held and no record: the next attempt waits
// the lease out, finds the ticket by its marker label and adopts it.
func TestAWorkerKilledMidwayIsAdopted(t *testing.T) {
	w := newWorld(t)
	site := trackerhost.NewJira(t, jiraEmail, jiraToken, jiraProject)
	in := w.jiraIntegration(t, site)
	rule := w.rule(t, `{"matcher":{"cwe":"CWE-89"},"destination":{"kind":"jira","integration_uuid":"`+in+`"},"grouping":"cwe"}`)
	scan := w.scan(t, report(12))
	sc, err := w.env.Store.Scans.GetScan(context.Background(), w.acme.ID, scan)
	if err != nil {
		t.Fatal(err)
	}
	group := ticketing.GroupKey(ticketing.GroupCWE, findings.Issue{ProjectID: sc.ProjectID, CWE: 89})
	// The dead worker: its lease, and the issue it made on the site.
	if _, err := w.area.ClaimLink(context.Background(), w.acme.ID, rule, group, sc.ProjectID, "dead-worker", w.clock.Now(), time.Minute); err != nil {
		t.Fatal(err)
	}
	client := &ticketing.JiraClient{HTTP: ticketing.NewJiraHTTP(5*time.Second, true), Site: site.URL(), Email: jiraEmail, Token: jiraToken}
	var made ticketing.JiraNewIssue
	made.Fields.Project.Key, made.Fields.IssueType.Name, made.Fields.Summary = jiraProject, "Bug", "CWE-89"
	made.Fields.Description = ticketing.Document("made by the worker that died")
	made.Fields.Labels = []string{ticketing.MarkerLabel(rule, group)}
	if _, err := client.CreateIssue(context.Background(), made); err != nil {
		t.Fatal(err)
	}
	w.dispatch(t, scan)
	if links := w.links(t); len(links) != 0 {
		t.Fatalf("recorded while the dead worker's lease runs: %+v", links)
	}
	if n := w.retry(t); n != 1 {
		t.Fatalf("%d retries", n)
	}
	links := w.links(t)
	if len(site.Issues()) != 1 || site.Count("createIssue") != 1 || len(links) != 1 || links[0].TicketKey != "SEC-1" || len(links[0].IssueIDs) != 2 {
		t.Fatalf("%d issues, %d creates, links %+v", len(site.Issues()), site.Count("createIssue"), links)
	}
}
