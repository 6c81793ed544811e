package tickets_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/tickets"
	"github.com/acme/codescan-api/shared/triagemodel"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func area(env *testenv.Env) *tickets.Tickets {
	return tickets.New(env.Store.Client(), env.Store.TableName(), nil)
}

// A group's link is held by one attempt at a time; recording the ticket
// gives the lease back, makes it findable by key and lists it on each
// issue; adding findings adds only new ones; a ticket of one company is
// never another's.
func TestLinkLeaseAndRecord(t *testing.T) {
	env := testenv.New(t)
	c := env.Company(t, "Acme")
	a := area(env)
	ctx := context.Background()
	now := time.Now()
	l, err := a.ClaimLink(ctx, c.ID, "rule-1", "p1-cwe-79", 1, "first", now, time.Minute)
	if err != nil || l.TicketKey != "" || l.ID != tickets.LinkID("rule-1", "p1-cwe-79") {
		t.Fatalf("claim: %+v %v", l, err)
	}
	if _, err := a.ClaimLink(ctx, c.ID, "rule-1", "p1-cwe-79", 1, "second", now.Add(30*time.Second), time.Minute); !errors.Is(err, tickets.ErrLinkBusy) {
		t.Fatalf("a second attempt during the lease: %v", err)
	}
	tk := tickets.Ticket{System: "jira", Integration: "in-1", Key: "SEC-1", URL: "https://x.atlassian.net/browse/SEC-1", State: tickets.StateOpen}
	if _, err := a.RecordLink(ctx, c.ID, l.ID, "second", tk, []string{"i1"}); !errors.Is(err, tickets.ErrLinkBusy) {
		t.Fatalf("a record by an owner without the lease: %v", err)
	}
	l, err = a.RecordLink(ctx, c.ID, l.ID, "first", tk, []string{"i1", "i2", "i1"})
	if err != nil || l.LeaseOwner != "" || !slices.Equal(l.IssueIDs, []string{"i1", "i2"}) || l.Synced != tickets.StateOpen {
		t.Fatalf("record: %+v %v", l, err)
	}
	if got, err := a.LinkByKey(ctx, c.ID, "in-1", "SEC-1"); err != nil || got.ID != l.ID {
		t.Fatalf("by key: %+v %v", got, err)
	}
	// A retry of the group sees the ticket and adds only what is new.
	again, err := a.ClaimLink(ctx, c.ID, "rule-1", "p1-cwe-79", 1, "third", now.Add(time.Second), time.Minute)
	if err != nil || again.TicketKey != "SEC-1" {
		t.Fatalf("claim after the record: %+v %v", again, err)
	}
	fresh, err := a.AddIssues(ctx, c.ID, l.ID, []string{"i2", "i3"})
	if err != nil || !slices.Equal(fresh, []string{"i3"}) {
		t.Fatalf("add: %v %v", fresh, err)
	}
	views, err := a.TicketsOfIssues(ctx, c.ID, []string{"i1", "i3", "i9"})
	if err != nil || len(views) != 2 || views["i3"][0] != (tickets.TicketView{System: "jira", Key: "SEC-1", URL: tk.URL, State: "open"}) {
		t.Fatalf("tickets of issues: %+v %v", views, err)
	}
	// Closed as done on the tracker: fix_in_progress until we close it.
	l, _ = a.GetLink(ctx, c.ID, l.ID)
	stale := l
	if l, err = a.SetState(ctx, l, tickets.StateClosed, tickets.ResolutionDone, false); err != nil || tickets.View(l).State != "fix_in_progress" {
		t.Fatalf("closed as done: %+v %v", tickets.View(l), err)
	}
	if _, err := a.SetState(ctx, stale, tickets.StateOpen, "", false); !errors.Is(err, ddb.ErrConflict) {
		t.Fatalf("a state change from an old version: %v", err)
	}
	if l, err = a.SetState(ctx, l, tickets.StateClosed, tickets.ResolutionDone, true); err != nil || tickets.View(l).State != "closed" {
		t.Fatalf("closed by us: %+v %v", tickets.View(l), err)
	}
	closed, err := a.IssuesWithTickets(ctx, c.ID, tickets.StateClosed)
	if err != nil || len(closed) != 3 {
		t.Fatalf("issues with closed tickets: %v %v", closed, err)
	}
	if open, _ := a.IssuesWithTickets(ctx, c.ID, tickets.StateOpen); len(open) != 0 {
		t.Fatalf("issues with open tickets: %v", open)
	}
	other := env.Company(t, "Globex")
	if _, err := a.LinkByKey(ctx, other.ID, "in-1", "SEC-1"); !errors.Is(err, ddb.ErrNotFound) {
		t.Fatalf("another company by key: %v", err)
	}
	if v, _ := a.TicketsOfIssues(ctx, other.ID, []string{"i1"}); len(v) != 0 {
		t.Fatalf("another company's issue tickets: %v", v)
	}
}

// An inbound event's delivery id is remembered: the second is a replay;
// forgotten (its handling failed), it may come again.
func TestEventMemory(t *testing.T) {
	env := testenv.New(t)
	c := env.Company(t, "Acme")
	a := area(env)
	ctx := context.Background()
	now := time.Now()
	if err := a.RememberEvent(ctx, c.ID, "in-1", "d-1", now, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := a.RememberEvent(ctx, c.ID, "in-1", "d-1", now, time.Hour); !errors.Is(err, tickets.ErrReplay) {
		t.Fatalf("replay: %v", err)
	}
	if err := a.ForgetEvent(ctx, c.ID, "in-1", "d-1"); err != nil {
		t.Fatal(err)
	}
	if err := a.RememberEvent(ctx, c.ID, "in-1", "d-1", now, time.Hour); err != nil {
		t.Fatalf("after forgetting: %v", err)
	}
}

// Jira integrations and rules: created with their look-up, bounded,
// updated on the revision read, deleted with their look-up.
func TestJiraIntegrationsAndRules(t *testing.T) {
	env := testenv.New(t)
	c := env.Company(t, "Acme")
	a := area(env)
	ctx := context.Background()
	in, err := a.CreateJira(ctx, schema.JiraIntegration{UUID: catalog.NewIntegrationUUID(), CompanyID: c.ID, Name: "Jira", SiteURL: "https://acme.atlassian.net",
		ProjectKey: "SEC", IssueType: "Bug", SealedToken: "sealed"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := a.JiraByHook(ctx, in.UUID); err != nil || got.CompanyID != c.ID {
		t.Fatalf("by hook: %+v %v", got, err)
	}
	name := "Security"
	if _, err := a.UpdateJira(ctx, c.ID, in.UUID, in.Revision+1, tickets.JiraChange{Name: &name}); !errors.Is(err, ddb.ErrConflict) {
		t.Fatalf("update on a stale revision: %v", err)
	}
	if got, err := a.UpdateJira(ctx, c.ID, in.UUID, in.Revision, tickets.JiraChange{Name: &name}); err != nil || got.Name != name || got.Revision != 2 {
		t.Fatalf("update: %+v %v", got, err)
	}
	r, err := a.CreateRule(ctx, schema.TicketRule{CompanyID: c.ID, Grouping: "cwe", Destination: schema.TicketDestination{Kind: "jira", Integration: in.UUID}})
	if err != nil {
		t.Fatal(err)
	}
	if used, _ := a.RulesUsing(ctx, c.ID, in.UUID); !used {
		t.Fatal("the rule's integration is not in use")
	}
	r.Grouping = "finding"
	if got, err := a.ReplaceRule(ctx, r); err != nil || got.Grouping != "finding" || got.Revision != 2 {
		t.Fatalf("replace: %+v %v", got, err)
	}
	if _, err := a.ReplaceRule(ctx, r); !errors.Is(err, ddb.ErrConflict) {
		t.Fatalf("replace on a stale revision: %v", err)
	}
	if err := a.DeleteRule(ctx, c.ID, r.ID); err != nil {
		t.Fatal(err)
	}
	if err := a.DeleteJira(ctx, c.ID, in.UUID); err != nil {
		t.Fatal(err)
	}
	if _, err := a.JiraByHook(ctx, in.UUID); !errors.Is(err, ddb.ErrNotFound) {
		t.Fatalf("look-up after delete: %v", err)
	}
	if err := a.DeleteJira(ctx, c.ID, in.UUID); !errors.Is(err, ddb.ErrNotFound) {
		t.Fatalf("delete twice: %v", err)
	}
}

// A rule's matcher is stored flat (the triage matcher's attributes beside
// new_on_default_branch, as before it was embedded) and reads back whole.
func TestRuleMatcherStoredFlat(t *testing.T) {
	env := testenv.New(t)
	c := env.Company(t, "Acme")
	a := area(env)
	ctx := context.Background()
	m := schema.TicketMatcher{Matcher: triagemodel.Matcher{Tool: "semgrep", RuleID: "sqli", CWE: 89, Path: "api/**",
		UrgencyAtLeast: "HI", UrgencyAtMost: "CR"}, NewOnDefaultBranch: true}
	r, err := a.CreateRule(ctx, schema.TicketRule{CompanyID: c.ID, Grouping: "rule", Matcher: m,
		Destination: schema.TicketDestination{Kind: "github", Integration: catalog.NewIntegrationUUID(), Repository: "acme/api"}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.GetRule(ctx, c.ID, r.ID)
	if err != nil || got.Matcher != m {
		t.Fatalf("read back: %+v %v, want %+v", got.Matcher, err, m)
	}
	k := schema.TicketRuleKey(c.ID, r.ID)
	raw, err := env.Store.Client().GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(env.Store.TableName()),
		Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: k.PK}, "SK": &types.AttributeValueMemberS{Value: k.SK}}})
	if err != nil {
		t.Fatal(err)
	}
	stored, ok := raw.Item["matcher"].(*types.AttributeValueMemberM)
	if !ok {
		t.Fatalf("matcher stored as %T", raw.Item["matcher"])
	}
	want := map[string]string{"tool": "semgrep", "rule_id": "sqli", "cwe": "89", "path": "api/**", "urgency_at_least": "HI",
		"urgency_at_most": "CR", "new_on_default_branch": "true"}
	if len(stored.Value) != len(want) {
		t.Fatalf("matcher attributes: %v", stored.Value)
	}
	for name, v := range want {
		var s string
		switch av := stored.Value[name].(type) {
		case *types.AttributeValueMemberS:
			s = av.Value
		case *types.AttributeValueMemberN:
			s = av.Value
		case *types.AttributeValueMemberBOOL:
			s = fmt.Sprint(av.Value)
		}
		if s != v {
			t.Errorf("matcher.%s stored as %#v, want %s", name, stored.Value[name], v)
		}
	}
}
