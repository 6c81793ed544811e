package scans_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

// A completion's items end the scan complete with its findings count,
// clear its mark for the stalled-scan sweep and record its events:
// scan_completed with the new issues the apply counted, and one new-issue event per urgency with fresh issues to act on
// (a dismissed one is not); written again, they record the same events.
func TestCompletionItems(t *testing.T) {
	t.Parallel()
	tb := ddb.New(testenv.Table(t))
	tb.Now = func() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }
	l := &ledger.Ledger{T: tb, Retention: ledger.DefaultAuditRetention}
	cat := catalog.New(tb, l)
	st := scans.New(tb, l, scans.Deps{Catalog: cat})
	ctx := context.Background()
	proj, err := cat.CreateProject(ctx, schema.Project{CompanyID: 1, Name: "svc", DefaultBranch: "main"})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := st.CreateScan(ctx, scans.Scan{CompanyID: 1, ProjectID: proj.ID, Branch: "main", Engine: "sarif", Tool: "semgrep",
		RunID: "5b2e8c1d-4a3f-4e7b-9c6d-2f1a0b9e8d7c", Status: scans.ScanProcessing})
	if err != nil {
		t.Fatal(err)
	}
	done := scans.Applied{Findings: 7, Fresh: []scans.FreshIssue{
		{ID: "a", Title: "A", FilePath: "a.go", Line: 3, CWE: 79, Urgency: "CR", Status: "open"},
		{ID: "b", Urgency: "CR", Status: "suppressed"},
		{ID: "c", Urgency: "HI", Status: "false_positive"},
		{ID: "d", Urgency: "LO", Status: "open"},
	}, New: 3}
	for range 2 {
		items, err := st.CompletionItems(ctx, sc, done)
		if err != nil {
			t.Fatal(err)
		}
		if err := tb.Transact(ctx, items); err != nil {
			t.Fatal(err)
		}
	}
	got, err := st.GetScan(ctx, 1, sc.ID)
	if err != nil || got.Status != scans.ScanComplete || got.Findings != 7 || got.CompletedAt == "" {
		t.Fatalf("completed scan: %+v %v", got, err)
	}
	if stalled, err := st.StalledScans(ctx, time.Now().Add(time.Hour), 10); err != nil || len(stalled) != 0 {
		t.Fatalf("stalled after completion: %+v %v", stalled, err)
	}
	completed := event(t, tb, "scan_completed-"+sc.ID)
	if completed["new_issues"] != 3.0 || completed["findings"] != 7.0 || completed["project_name"] != "svc" ||
		completed["tool"] != "semgrep" || completed["completed_at"] != "2026-03-01T12:00:00Z" {
		t.Fatalf("scan_completed: %v", completed)
	}
	critical := event(t, tb, "new_critical_issue-"+sc.ID)
	if critical["count"] != 1.0 || len(critical["issues"].([]any)) != 1 || critical["scan_id"] != sc.ID {
		t.Fatalf("new_critical_issue: %v", critical)
	}
	var none schema.EventItem
	if err := tb.GetItemConsistent(ctx, schema.EventKey(1, "new_high_issue-"+sc.ID), &none); !errors.Is(err, ddb.ErrNotFound) {
		t.Fatalf("a dismissed issue is not new to act on: %+v %v", none, err)
	}
}

// event is the data of the company's event id.
func event(t *testing.T, tb *ddb.Table, id string) map[string]any {
	t.Helper()
	var it schema.EventItem
	if err := tb.GetItemConsistent(context.Background(), schema.EventKey(1, id), &it); err != nil {
		t.Fatalf("event %s: %v", id, err)
	}
	var data map[string]any
	if err := json.Unmarshal([]byte(it.Data), &data); err != nil {
		t.Fatal(err)
	}
	return data
}
