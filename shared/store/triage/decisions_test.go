package triage_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/triage"
)

// A project's decisions are read per tool, by fingerprint, inside the
// company and project they were made in; a decision is replaced by the
// next one of its identity and removed with it; an accepted risk ends at
// its end.
func TestToolDecisions(t *testing.T) {
	t.Parallel()
	tb := ddb.New(testenv.Table(t))
	d := triage.New(tb, &ledger.Ledger{T: tb, Retention: ledger.DefaultAuditRetention})
	ctx := context.Background()
	write := func(items ...types.TransactWriteItem) {
		t.Helper()
		if err := tb.Transact(ctx, items); err != nil {
			t.Fatal(err)
		}
	}
	put := func(company int64, dec schema.Decision) types.TransactWriteItem {
		t.Helper()
		it, err := d.TxPutDecision(company, dec)
		if err != nil {
			t.Fatal(err)
		}
		return it
	}
	mark := schema.DecisionMark{Scope: schema.DecisionProject, DecidedBy: 5, DecidedAt: "2026-11-27T10:00:00Z", Source: "main"}
	write(
		put(1, schema.Decision{ProjectID: 3, Tool: "semgrep", Fingerprint: "fp1", Status: "false_positive", IssueID: "i1", Mark: mark}),
		put(1, schema.Decision{ProjectID: 3, Tool: "semgrep", Fingerprint: "fp2", Status: "ignored", IssueID: "i2", Mark: mark}),
		put(1, schema.Decision{ProjectID: 3, Tool: "semgrep-pro", Fingerprint: "fp1", Status: "ignored", IssueID: "i3", Mark: mark}),
		put(1, schema.Decision{ProjectID: 4, Tool: "semgrep", Fingerprint: "fp1", Status: "ignored", IssueID: "i4", Mark: mark}),
		put(2, schema.Decision{ProjectID: 3, Tool: "semgrep", Fingerprint: "fp1", Status: "ignored", IssueID: "i5", Mark: mark}),
	)
	got, err := d.ToolDecisions(ctx, 1, 3, "semgrep")
	if err != nil || len(got) != 2 || got["fp1"].Status != "false_positive" || got["fp1"].Mark != mark || got["fp2"].IssueID != "i2" {
		t.Fatalf("semgrep of project 3: %+v %v", got, err)
	}
	write(put(1, schema.Decision{ProjectID: 3, Tool: "semgrep", Fingerprint: "fp1", Status: "accepted_risk", IssueID: "i1", Mark: mark,
		Terms: schema.Terms{ExpiresAt: "2026-12-01T00:00:00Z"}}))
	write(d.TxDeleteDecision(1, 3, "semgrep", "fp2"), d.TxDeleteDecision(1, 3, "semgrep", "never"))
	got, err = d.ToolDecisions(ctx, 1, 3, "semgrep")
	if err != nil || len(got) != 1 || got["fp1"].Status != "accepted_risk" {
		t.Fatalf("after a new decision and a removal: %+v %v", got, err)
	}
	end := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	if dec := got["fp1"]; dec.Ended(end.Add(-time.Second)) || !dec.Ended(end) {
		t.Fatal("an accepted risk ends at its end")
	}
	if (schema.Decision{Status: "false_positive"}).Ended(end) {
		t.Fatal("a dismissal ended")
	}
}
