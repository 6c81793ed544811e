package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/acme/codescan-api/functions/scheduler"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/internal/trackerhost"
	"github.com/acme/codescan-api/shared/deliveryengine"
	"github.com/acme/codescan-api/shared/outbound"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/schema"
	storetickets "github.com/acme/codescan-api/shared/store/tickets"
	ticketing "github.com/acme/codescan-api/shared/tickets"
)

// The daily job reads each company's tickets back from the tracker on a
// controlled clock: a ticket closed as won't do whose event was lost
// accepts its finding's risk; a ticket checked less than a day ago is not
// read again.
func TestReconcileTicketsRepairsALostEvent(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	co := env.Company(t, "Acme")
	ctx := context.Background()
	now := time.Now().UTC()
	clock := func() time.Time { return now }
	sealer := testenv.Sealer(t)
	site := trackerhost.NewJira(t, "bot@acme.test", "tok", "SEC")
	area := storetickets.New(env.Store.Client(), env.Store.TableName(), clock)
	in := schema.JiraIntegration{UUID: catalog.NewIntegrationUUID(), CompanyID: co.ID, SiteURL: site.URL(), Email: "bot@acme.test", ProjectKey: "SEC", IssueType: "Bug"}
	var err error
	if in.SealedToken, err = sealer.Seal(ctx, "tok", storetickets.JiraTokenRecord(co.ID, in.UUID)); err != nil {
		t.Fatal(err)
	}
	if in, err = area.CreateJira(ctx, in); err != nil {
		t.Fatal(err)
	}
	issue := findings.Issue{ID: "6f1c2d3e-4a5b-4c6d-8e7f-0a1b2c3d4e5f", ProjectID: 1, ProjectName: "payments", Branch: "main", Tool: "semgrep",
		Fingerprint: "fp-1", CWE: 89, FilePath: "a.py", Urgency: "HI", Status: "open", Title: "SQL"}
	if _, err := bulkload.CreateIssues(ctx, env.Store, co.ID, []findings.Issue{issue}); err != nil {
		t.Fatal(err)
	}
	client := &ticketing.JiraClient{HTTP: ticketing.NewJiraHTTP(5*time.Second, true), Site: site.URL(), Email: "bot@acme.test", Token: "tok"}
	var created ticketing.JiraNewIssue
	created.Fields.Summary = "SQL"
	created.Fields.Description = ticketing.Document("one finding")
	created.Fields.Project.Key, created.Fields.IssueType.Name = "SEC", "Bug"
	made, err := client.CreateIssue(ctx, created)
	if err != nil {
		t.Fatal(err)
	}
	l, err := area.ClaimLink(ctx, co.ID, "rule", "f-"+issue.ID, 1, "o", now, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := area.RecordLink(ctx, co.ID, l.ID, "o", storetickets.Ticket{System: "jira", Integration: in.UUID, Key: made.Key, State: "open"}, []string{issue.ID}); err != nil {
		t.Fatal(err)
	}
	tk := &ticketing.Ticketer{Store: ticketing.StoreOf(env.Store), Tickets: area, Sealer: sealer, Jira: ticketing.NewJiraHTTP(5*time.Second, true), Now: clock}
	site.Transition(made.Key, "Won't Do") // its event never arrives

	engine := &deliveryengine.Engine{Outbound: []outbound.Channel{tk}}
	if scheduler.TicketerOf(engine) != tk || scheduler.TicketerOf(&deliveryengine.Engine{}) != nil {
		t.Fatal("the engine's tickets channel")
	}
	if _, err := scheduler.ReconcileTickets(ctx, env.Store.Tenancy, nil); err == nil {
		t.Fatal("an engine without the channel reconciles")
	}
	if n, err := scheduler.ReconcileTickets(ctx, env.Store.Tenancy, tk); err != nil || n != 0 {
		t.Fatalf("the same day: %d %v", n, err) // recorded just now: not due
	}
	now = now.Add(25 * time.Hour)
	if n, err := scheduler.ReconcileTickets(ctx, env.Store.Tenancy, tk); err != nil || n != 1 {
		t.Fatalf("a day later: %d %v", n, err)
	}
	got, err := env.Store.Lists.GetIssue(ctx, co.ID, issue.ID)
	if err != nil || got.Status != "accepted_risk" || got.Reason == "" {
		t.Fatalf("the finding: %s %q %v", got.Status, got.Reason, err)
	}
	if n, _ := scheduler.ReconcileTickets(ctx, env.Store.Tenancy, tk); n != 0 {
		t.Fatalf("repaired again: %d", n)
	}
	testenv.Recount(t, env.Store, co.ID)
}
