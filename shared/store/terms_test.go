package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/triage"
	"github.com/acme/codescan-api/shared/triagemodel"
)

// An acceptance decided for the project carries its end and owner (and who
// accepted it, when) to the finding's issue of every branch, at once and
// at a later scan of a new branch; after its end a new branch's issue
// arrives open. A triage rule's acceptance ends when the rule says and is
// owned by the rule's author; once that end has passed the rule acts no
// more. All on a controlled clock.
func TestAcceptanceTermsFollowTheFinding(t *testing.T) {
	t.Parallel()
	w := newBranchWorld(t)
	now := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	w.st = store.New(w.st.Client(), w.st.TableName(), store.WithClock(func() time.Time { return now }))
	ctx := context.Background()
	a, b := finding{"a", 89}, finding{"b", 79}
	w.scan(t, "main", "gosec", a)
	w.scan(t, "dev", "gosec", a)
	ar, why := "accepted_risk", "compensating control"
	end := now.AddDate(0, 0, 30).Format(time.RFC3339)
	u := triage.IssueUpdate{Status: &ar, Reason: &why, Terms: schema.Terms{ExpiresAt: end, Owner: 42}}
	decided, err := w.st.Triage.DecideIssue(ctx, w.company, findings.IssueID(w.company, w.project, "main", "gosec", "a"), u, "", findings.Actor{UserID: 7})
	if err != nil {
		t.Fatal(err)
	}
	want := schema.Terms{ExpiresAt: end, Owner: 42, AcceptedBy: 7, AcceptedAt: now.Format(time.RFC3339)}
	if decided.Terms != want {
		t.Fatalf("decided terms %+v, want %+v", decided.Terms, want)
	}
	for _, branch := range []string{"dev", "feature"} {
		if branch == "feature" {
			now = now.AddDate(0, 0, 10) // a new branch's first scan, ten days later
			w.scan(t, branch, "gosec", a)
		}
		if i := w.issue(t, branch, "gosec", "a"); i.Status != ar || i.Terms != want {
			t.Fatalf("%s: %s %+v, want %+v", branch, i.Status, i.Terms, want)
		}
	}
	now = now.AddDate(0, 0, 21) // past the end
	w.scan(t, "late", "gosec", a)
	if i := w.issue(t, "late", "gosec", "a"); i.Status != "open" || i.Terms != (schema.Terms{}) {
		t.Fatalf("an ended acceptance carried: %s %+v", i.Status, i.Terms)
	}

	ruleEnd := now.AddDate(0, 0, 60)
	rule, err := w.st.Triage.CreateTriageRule(ctx, triage.Rule{CompanyID: w.company, CreatedBy: 5, Enabled: true,
		Matcher: triagemodel.Matcher{CWE: 79}, Action: triagemodel.Action{Status: ar, Reason: "legacy module", ExpiresAt: ruleEnd}})
	if err != nil {
		t.Fatal(err)
	}
	w.scan(t, "main", "gosec", a, b)
	if i := w.issue(t, "main", "gosec", "b"); i.Status != ar || i.ExpiresAt != ruleEnd.Format(time.RFC3339) || i.Owner != 5 {
		t.Fatalf("ruled: %s %+v", i.Status, i.Terms)
	}
	now = ruleEnd.Add(time.Second)
	w.scan(t, "dev", "gosec", a, b)
	if i := w.issue(t, "dev", "gosec", "b"); i.Status != "open" {
		t.Fatalf("an ended rule acted: %s %+v", i.Status, i.Terms)
	}
	// Nor does an application of it act, or a dry run count anything.
	for _, dry := range []bool{true, false} {
		if res, err := w.st.Triage.ApplyTriageRuleAll(ctx, w.company, rule.ID, dry, 5); !errors.Is(err, triage.ErrRuleEnded) || res.Changed != 0 {
			t.Fatalf("apply (dry run %v) of an ended rule: %+v %v", dry, res, err)
		}
	}
	if i := w.issue(t, "dev", "gosec", "b"); i.Status != "open" {
		t.Fatalf("an ended rule's application acted: %s", i.Status)
	}
	testenv.Recount(t, w.st, w.company)
}
