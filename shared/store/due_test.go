package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/recount"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/tabledef"
)

// pendingIDs are the ids EachPendingDue returns for every first detection
// up to by.
func pendingIDs(t *testing.T, st *store.Store, companyID int64, urgency string, by time.Time) []string {
	t.Helper()
	var out []string
	if err := st.Lists.EachPendingDue(context.Background(), companyID, urgency, by, func(i findings.Issue) error {
		out = append(out, i.ID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDueIndexBackfill strips the due keys as a table written before the
// index holds them, and backfills them: not before its time budget, then
// all, then nothing more; a breached issue stays breached.
func TestDueIndexBackfill(t *testing.T) {
	t.Parallel()
	st := testenv.NewStore(t)
	ctx := context.Background()
	company, err := st.Ledger.NextID(ctx, "company")
	if err != nil {
		t.Fatal(err)
	}
	detected := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	var issues []findings.Issue
	for n := range 60 {
		issues = append(issues, findings.Issue{ProjectID: 1, ProjectName: "p", Branch: "main", CWE: n % 5, FilePath: fmt.Sprintf("f%d.go", n),
			Urgency: findings.Urgencies[n%4], Status: []string{"open", "open", "fixed"}[n%3], CreatedAt: detected.Add(time.Duration(n) * time.Hour).Format(time.RFC3339)})
	}
	if _, err := bulkload.CreateIssues(ctx, st, company, issues); err != nil {
		t.Fatal(err)
	}
	// One breached issue: the backfill keeps its state.
	crit := pendingIDs(t, st, company, "CR", detected.AddDate(1, 0, 0))
	if len(crit) != 10 {
		t.Fatalf("%d pending critical issues, want 10", len(crit))
	}
	breached, err := st.Lists.GetIssue(ctx, company, crit[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Findings.MarkBreached(ctx, breached); err != nil {
		t.Fatal(err)
	}
	if err := st.Findings.MarkBreached(ctx, breached); err != ddb.ErrConflict {
		t.Fatalf("second move: %v", err)
	}
	open := 0
	if err := st.Lists.EachIssue(ctx, company, func(i findings.Issue) error {
		if i.Status == "open" && i.ID != breached.ID {
			open++
			upd := expression.Remove(expression.Name(tabledef.Due.PK)).Remove(expression.Name(tabledef.Due.SK))
			return store.Update(st, ctx, i.Key, upd, nil, nil)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Client().DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(st.TableName()), Key: map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "JOB#issue-index-keys"}, "SK": &types.AttributeValueMemberS{Value: "BACKFILL#2"}}}); err != nil {
		t.Fatal(err)
	}
	if err := recount.Check(ctx, recount.StoreOf(st), company); err == nil {
		t.Fatal("recount misses issues without due keys")
	}
	if got := pendingIDs(t, st, company, "CR", detected.AddDate(1, 0, 0)); len(got) != 0 {
		t.Fatalf("stripped, still pending: %v", got)
	}
	if done, n, err := st.Lists.BackfillDueIndex(ctx, time.Now().Add(-time.Second)); done || n != 0 || err != nil {
		t.Fatalf("out of time: done %v, %d written (%v)", done, n, err)
	}
	if done, n, err := st.Lists.BackfillDueIndex(ctx, time.Now().Add(time.Hour)); !done || n != open || err != nil {
		t.Fatalf("backfill: done %v, %d written of %d (%v)", done, n, open, err)
	}
	if done, n, err := st.Lists.BackfillDueIndex(ctx, time.Now().Add(time.Hour)); !done || n != 0 || err != nil {
		t.Fatalf("again: done %v, %d written (%v)", done, n, err)
	}
	testenv.Recount(t, st, company)
	if got := pendingIDs(t, st, company, "CR", detected.AddDate(1, 0, 0)); len(got) != 9 {
		t.Fatalf("%d pending critical issues after the backfill, want 9", len(got))
	}
	// Every open issue is counted once, the breached one too.
	var counted int64
	for _, u := range findings.Urgencies {
		n, err := st.Lists.CountOpenDetected(ctx, company, u, time.Time{}, detected.AddDate(1, 0, 0))
		if err != nil {
			t.Fatal(err)
		}
		counted += n
	}
	if counted != int64(open+1) {
		t.Fatalf("counted %d open issues, want %d", counted, open+1)
	}
}
