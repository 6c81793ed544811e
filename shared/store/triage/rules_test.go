package triage_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/triage"
	"github.com/acme/codescan-api/shared/triagemodel"
)

// A rule acts while it is active: enabled, and approved by someone else
// when it requires approval; company-wide rules act on every project, a
// project's on that project alone; an acceptance past its end acts no
// more. Every change is audited, the list counts what exists, and another
// company's rule answers like a missing one.
func TestActiveRules(t *testing.T) {
	t.Parallel()
	tb := ddb.New(testenv.Table(t))
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	tb.Now = func() time.Time { return now }
	x := triage.New(tb, &ledger.Ledger{T: tb, Retention: ledger.DefaultAuditRetention})
	ctx := ledger.WithAuditActor(context.Background(), ledger.AuditActor{Via: ledger.ViaAPIKey, UserID: 5, KeyID: 1})
	fp := triagemodel.Action{Status: "false_positive", Reason: "generated"}
	create := func(r triage.Rule) triage.Rule {
		t.Helper()
		r.CompanyID, r.CreatedBy = 1, 5
		out, err := x.CreateTriageRule(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	active := func(project int64) map[string]bool {
		t.Helper()
		rules, err := x.ActiveTriageRules(ctx, 1, project)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, r := range rules {
			out[r.ID] = true
		}
		return out
	}
	wide := create(triage.Rule{Matcher: triagemodel.Matcher{Tool: "semgrep"}, Action: fp, Enabled: true})
	scoped := create(triage.Rule{ProjectID: 3, Matcher: triagemodel.Matcher{CWE: 79}, Action: fp, Enabled: true})
	gated := create(triage.Rule{Matcher: triagemodel.Matcher{Tool: "gosec"}, Action: fp, Enabled: true, RequiresApproval: true})
	ended := create(triage.Rule{Matcher: triagemodel.Matcher{Tool: "bandit"}, Enabled: true,
		Action: triagemodel.Action{Status: triagemodel.AcceptedRisk, ExpiresAt: now.Add(time.Hour)}})
	if a := active(3); !a[wide.ID] || !a[scoped.ID] || a[gated.ID] || !a[ended.ID] || len(a) != 3 {
		t.Fatalf("project 3: %v", a)
	}
	if a := active(4); !a[wide.ID] || a[scoped.ID] || len(a) != 2 {
		t.Fatalf("project 4: %v", a)
	}
	if _, err := x.ApproveTriageRule(ctx, 1, gated.ID, 5); !errors.Is(err, triage.ErrOwnApproval) {
		t.Fatalf("approved by its author: %v", err)
	}
	if _, err := x.ApproveTriageRule(ctx, 1, wide.ID, 6); !errors.Is(err, triage.ErrNoApproval) {
		t.Fatalf("approval of a rule without one: %v", err)
	}
	if r, err := x.ApproveTriageRule(ctx, 1, gated.ID, 6); err != nil || !r.Active() || r.ApprovedBy != 6 {
		t.Fatalf("approved: %+v %v", r, err)
	}
	if _, err := x.SetTriageRuleEnabled(ctx, 1, wide.ID, false); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Hour) // the acceptance has ended
	if a := active(4); a[wide.ID] || !a[gated.ID] || a[ended.ID] || len(a) != 1 {
		t.Fatalf("after the changes: %v", a)
	}
	if _, err := x.DeleteTriageRule(ctx, 1, scoped.ID); err != nil {
		t.Fatal(err)
	}
	if a := active(3); a[scoped.ID] {
		t.Fatalf("a deleted rule acts: %v", a)
	}
	list, err := x.ListTriageRules(ctx, 1, page.Request{Limit: 10})
	if err != nil || list.Count() != 3 || len(list.Items) != 3 || list.Items[0].ID != wide.ID {
		t.Fatalf("list %+v %v", list, err)
	}
	for _, id := range []string{scoped.ID, "nope"} {
		if _, err := x.GetTriageRule(ctx, 1, id); !errors.Is(err, ddb.ErrNotFound) {
			t.Fatalf("rule %s: %v", id, err)
		}
	}
	if _, err := x.GetTriageRule(ctx, 2, wide.ID); !errors.Is(err, ddb.ErrNotFound) {
		t.Fatalf("another company's rule: %v", err)
	}
	var audit []schema.AuditItem
	if err := tb.QueryAllConsistent(ctx, ddb.PKBeginsWith(schema.AuditPK(1), ""), &audit); err != nil {
		t.Fatal(err)
	}
	actions := map[string]int{}
	for _, a := range audit {
		actions[a.Action]++
	}
	if actions["triage_rule.create"] != 4 || actions["triage_rule.approve"] != 1 || actions["triage_rule.disable"] != 1 || actions["triage_rule.delete"] != 1 || len(audit) != 7 {
		t.Fatalf("audit %v", actions)
	}
}

// ListTriageRules answers page.Page: offset, a next token exactly while a
// rule follows, and the company's count, by token and by number; another
// company's list is empty.
func TestListTriageRulesPages(t *testing.T) {
	t.Parallel()
	tb := ddb.New(testenv.Table(t))
	x := triage.New(tb, &ledger.Ledger{T: tb, Retention: ledger.DefaultAuditRetention})
	ctx := ledger.WithAuditActor(context.Background(), ledger.AuditActor{Via: ledger.ViaAPIKey, UserID: 5, KeyID: 1})
	created := map[string]bool{}
	for range 7 {
		r, err := x.CreateTriageRule(ctx, triage.Rule{CompanyID: 1, CreatedBy: 5, Matcher: triagemodel.Matcher{Tool: "semgrep"},
			Action: triagemodel.Action{Status: "false_positive", Reason: "generated"}, Enabled: true})
		if err != nil {
			t.Fatal(err)
		}
		created[r.ID] = true
	}
	read := func(company int64) func(page.Request) (page.Page[triage.Rule], error) {
		return func(q page.Request) (page.Page[triage.Rule], error) { return x.ListTriageRules(ctx, company, q) }
	}
	listed := testenv.Pages(t, 3, testenv.Total(7), read(1))
	for _, r := range listed {
		if !created[r.ID] || r.CompanyID != 1 {
			t.Fatalf("listed %+v, not a rule created", r)
		}
		delete(created, r.ID)
	}
	if len(created) != 0 {
		t.Fatalf("rules not listed: %v", created)
	}
	testenv.Pages(t, 3, testenv.Total(0), read(2))
}
