package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/triage"
)

// A decision is the finding's (tool and fingerprint), not the fingerprint's
// alone; the same call again changes nothing more; and it reaches an
// issue its first spread missed when made again (an attempt cut short is
// finished by its retry).
func TestDecideIssueRetriesAndIdentity(t *testing.T) {
	t.Parallel()
	w := newBranchWorld(t)
	ctx := context.Background()
	a := finding{"a", 89}
	w.scan(t, "main", "gosec", a)
	w.scan(t, "main", "semgrep", a) // same fingerprint, another tool
	w.scan(t, "dev", "gosec", a)
	lead := findings.Actor{UserID: 7}
	fp, why := "false_positive", "generated code"
	u := triage.IssueUpdate{Status: &fp, Reason: &why}
	main := findings.IssueID(w.company, w.project, "main", "gosec", "a")

	if _, err := w.st.Triage.DecideIssue(ctx, w.company, main, u, "everywhere", lead); !errors.Is(err, ddb.ErrInvalid) {
		t.Fatalf("bad scope: %v", err)
	}
	if got := w.issue(t, "dev", "gosec", "a"); got.Status != "open" {
		t.Fatalf("a refused decision moved dev: %+v", got)
	}
	first, err := w.st.Triage.DecideIssue(ctx, w.company, main, u, "", lead)
	if err != nil {
		t.Fatal(err)
	}
	want := schema.DecisionMark{Scope: schema.DecisionProject, DecidedBy: 7, DecidedAt: first.Decision.DecidedAt, Source: "main"}
	if first.Decision != want || first.Status != fp {
		t.Fatalf("decided: %+v", first)
	}
	dev := w.issue(t, "dev", "gosec", "a")
	if dev.Status != fp || dev.Reason != why || dev.Decision != want {
		t.Fatalf("dev: %+v", dev)
	}
	if other := w.issue(t, "main", "semgrep", "a"); other.Status != "open" || other.Decision != (schema.DecisionMark{}) {
		t.Fatalf("another tool's finding took it: %+v", other)
	}

	// The same decision again: nothing moves, no history is added.
	again, err := w.st.Triage.DecideIssue(ctx, w.company, main, u, "", lead)
	if err != nil || again != first || w.issue(t, "dev", "gosec", "a") != dev {
		t.Fatalf("again: %v\n%+v\n%+v", err, again, first)
	}
	if h, err := w.st.Lists.IssueHistory(ctx, w.company, dev.ID); err != nil || len(h) != 1 {
		t.Fatalf("dev's history: %v %+v", err, h)
	}

	// An issue the spread did not reach (written outside a scan, as if it
	// appeared while the decision spread) takes it from the retry.
	missed := w.found(scans.Scan{Branch: "qa", Tool: "gosec", CreatedAt: "2026-01-02T00:00:00Z"}, a)
	missed[0].Status = "open"
	if _, err := bulkload.CreateIssues(ctx, w.st, w.company, missed); err != nil {
		t.Fatal(err)
	}
	if _, err := w.st.Triage.DecideIssue(ctx, w.company, main, u, "", lead); err != nil {
		t.Fatal(err)
	}
	if qa := w.issue(t, "qa", "gosec", "a"); qa.Status != fp || qa.Decision != want {
		t.Fatalf("qa: %+v", qa)
	}
	testenv.Recount(t, w.st, w.company)
}

// Withdrawing a project decision reopens the branches that carry it, but
// not one the code fixed meanwhile: that one only loses the decision.
func TestWithdrawalReopensNothingFixed(t *testing.T) {
	t.Parallel()
	w := newBranchWorld(t)
	ctx := context.Background()
	a := finding{"a", 89}
	w.scan(t, "main", "gosec", a)
	w.scan(t, "dev", "gosec", a)
	main := findings.IssueID(w.company, w.project, "main", "gosec", "a")
	fip, why := "fix_in_progress", "patch under review"
	if _, err := w.st.Triage.DecideIssue(ctx, w.company, main, triage.IssueUpdate{Status: &fip, Reason: &why}, "", findings.Actor{UserID: 7}); err != nil {
		t.Fatal(err)
	}
	w.scan(t, "dev", "gosec") // dev no longer reports it: fixed
	if dev := w.issue(t, "dev", "gosec", "a"); dev.Status != "fixed" {
		t.Fatalf("dev: %+v", dev)
	}
	open := "open"
	if _, err := w.st.Triage.DecideIssue(ctx, w.company, main, triage.IssueUpdate{Status: &open}, "", findings.Actor{UserID: 7}); err != nil {
		t.Fatal(err)
	}
	if m := w.issue(t, "main", "gosec", "a"); m.Status != "open" || m.Decision != (schema.DecisionMark{}) {
		t.Fatalf("main: %+v", m)
	}
	if dev := w.issue(t, "dev", "gosec", "a"); dev.Status != "fixed" || dev.Decision != (schema.DecisionMark{}) || dev.ReopenCount != 0 {
		t.Fatalf("dev after the withdrawal: %s %+v reopened %d", dev.Status, dev.Decision, dev.ReopenCount)
	}
	testenv.Recount(t, w.st, w.company)
}
