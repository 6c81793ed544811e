package triage_test

import (
	"context"
	"errors"
	"testing"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/issuelists"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/triage"
)

// A person's triage of one issue goes through the issue write path: the
// status, reason and counters move in one write with the history entry
// (naming the person) and one audit entry; the same change again writes
// nothing; a status a person cannot set is refused, another company's
// issue is not found.
func TestUpdateIssue(t *testing.T) {
	t.Parallel()
	a := compose(t)
	ctx := ledger.WithAuditActor(context.Background(), ledger.AuditActor{Via: ledger.ViaAPIKey, UserID: 5, KeyID: 1})
	p := a.seed(t, 1, "Web", 6)
	id := schema.IssueID(1, p.ID, "main", "semgrep", "Web1") // open
	fp, why := "false_positive", "test fixture"
	u := triage.IssueUpdate{Status: &fp, Reason: &why}
	got, err := a.triage.UpdateIssue(ctx, 1, id, u, findings.Actor{UserID: 5})
	if err != nil || got.Status != fp || got.Reason != why {
		t.Fatalf("update: %+v %v", got, err)
	}
	if s := a.statuses(t, 1); s["open"] != 3 || s["false_positive"] != 3 {
		t.Fatalf("statuses %v", s)
	}
	if again, err := a.triage.UpdateIssue(ctx, 1, id, u, findings.Actor{UserID: 5}); err != nil || again != got {
		t.Fatalf("the same change again: %+v %v", again, err)
	}
	hist, err := a.lists.IssueHistory(ctx, 1, id)
	if err != nil || len(hist) != 1 || hist[0].From != "open" || hist[0].To != fp || hist[0].By.UserID != 5 || hist[0].Reason != why {
		t.Fatalf("history %+v %v", hist, err)
	}
	var audit []schema.AuditItem
	if err := a.tb.QueryAllConsistent(ctx, ddb.PKBeginsWith(schema.AuditPK(1), ""), &audit); err != nil || len(audit) != 1 || audit[0].Action != "issue.update" || audit[0].TargetID != id {
		t.Fatalf("audit %+v %v", audit, err)
	}
	bad := "suppressed"
	if _, err := a.triage.UpdateIssue(ctx, 1, id, triage.IssueUpdate{Status: &bad}, findings.Actor{UserID: 5}); !errors.Is(err, ddb.ErrInvalid) {
		t.Fatalf("a status no person sets: %v", err)
	}
	if _, err := a.triage.UpdateIssue(ctx, 2, id, u, findings.Actor{UserID: 5}); !errors.Is(err, ddb.ErrNotFound) {
		t.Fatalf("another company's issue: %v", err)
	}
}

// A triage of what a filter matches changes those not already in the
// status, counts exactly, and changes nothing when made again; the same
// change as a bulk operation, applied a page at a time, counts what it
// changed.
func TestTriageByFilterAndByOperation(t *testing.T) {
	t.Parallel()
	a := compose(t)
	ctx := context.Background()
	a.seed(t, 1, "Web", 24)
	cwe := 79
	fixing := "fix_in_progress"
	matched, changed, err := a.triage.TriageIssues(ctx, 1, issuelists.IssueFilter{CWE: &cwe}, fixing, "", schema.Terms{}, findings.Actor{UserID: 5})
	if err != nil || matched != 12 || changed != 12 {
		t.Fatalf("by filter: %d matched, %d changed, %v", matched, changed, err)
	}
	if _, changed, err := a.triage.TriageIssues(ctx, 1, issuelists.IssueFilter{CWE: &cwe}, fixing, "", schema.Terms{}, findings.Actor{UserID: 5}); err != nil || changed != 0 {
		t.Fatalf("again: %d %v", changed, err)
	}
	before := a.statuses(t, 1)
	if before[fixing] != 12 || before["open"] != 8 || before["false_positive"] != 4 {
		t.Fatalf("statuses %v", before)
	}

	op, err := a.triage.CreateTriageOp(ctx, schema.TriageOpItem{CompanyID: 1, UserID: 5, Status: "false_positive", Query: `{}`})
	if err != nil {
		t.Fatal(err)
	}
	op, _, err = a.triage.StartTriageOp(ctx, 1, op.ID, 5)
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	if err := a.lists.EachIssue(ctx, 1, func(i findings.Issue) error { all = append(all, i.ID); return nil }); err != nil {
		t.Fatal(err)
	}
	for len(all) > 0 {
		n := min(len(all), 7)
		next := "more"
		if n == len(all) {
			next = ""
		}
		if op, err = a.triage.CollectTriageIDs(ctx, op, all[:n], next); err != nil {
			t.Fatal(err)
		}
		all = all[n:]
	}
	for op.Page < op.Pages {
		if op, err = a.triage.ApplyTriagePage(ctx, op); err != nil {
			t.Fatal(err)
		}
	}
	after := a.statuses(t, 1)
	if op.Matched != 24 || op.Processed != 24 || op.Changed != 20 || int(op.Changed) != after["false_positive"]-before["false_positive"] || after["false_positive"] != 24 {
		t.Fatalf("operation %+v, statuses %v", op, after)
	}
}
