package quality_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/quality"
	"github.com/acme/codescan-api/shared/store/schema"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const scan = "0b8f4a52-8c1e-4e7a-9d3b-2f6c5a1e0d94"

// issues are n quality findings of the scan in project 3, their
// classification taking turns among classes, their ids from their
// identity (so writing them again is the same write).
func issues(n int, classes ...string) []quality.Issue {
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	var out []quality.Issue
	for k := range n {
		out = append(out, quality.Issue{
			ID: schema.IssueID(1, 3, "main", "lint", fmt.Sprint("q", k)), ScanID: scan, ProjectID: 3, Urgency: "LO", Status: "open",
			CreatedAt: t0.Add(time.Duration(k) * time.Second).Format(time.RFC3339), Classification: quality.Classification{ID: "R", Name: classes[k%len(classes)]},
		})
	}
	return out
}

// A scan's quality findings are listed newest first with exact totals,
// per classification (a part of its name, any case) and per project;
// writing them again counts nothing twice; a finding moved to another
// class moves its count; another company sees none; a finding of a scan
// whose id is not a uuid is refused.
func TestQualityListsAndCounts(t *testing.T) {
	t.Parallel()
	tb := ddb.New(testenv.Table(t))
	x := quality.New(tb, &ledger.Ledger{T: tb, Retention: ledger.DefaultAuditRetention})
	ctx := context.Background()
	all := issues(25, "Unused variable", "Complexity")
	for range 2 {
		if err := x.PutQualityIssues(ctx, 1, all); err != nil {
			t.Fatal(err)
		}
	}
	classes := func() map[string]int {
		t.Helper()
		cs, err := x.QualityClasses(ctx, 1, scan)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int{}
		for _, c := range cs {
			out[c.Name] = c.Count
		}
		return out
	}
	if c := classes(); len(c) != 2 || c["Unused variable"] != 13 || c["Complexity"] != 12 {
		t.Fatalf("classes %v", c)
	}
	firstPage, err := x.ListScanQualityIssues(ctx, 1, scan, "", page.Request{Limit: 10})
	first, res, total := firstPage.Items, firstPage, firstPage.Count()
	if err != nil || total != 25 || len(first) != 10 || first[0].ID != all[24].ID || res.Next == "" {
		t.Fatalf("first page: %d of %d, %+v %v", len(first), total, res, err)
	}
	seen := map[string]bool{}
	for token := ""; ; {
		gotPage, err := x.ListScanQualityIssues(ctx, 1, scan, "", page.Request{Limit: 10, Token: token})
		got, res := gotPage.Items, gotPage
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range got {
			if seen[q.ID] {
				t.Fatalf("%s twice", q.ID)
			}
			seen[q.ID] = true
		}
		if token = res.Next; token == "" {
			break
		}
	}
	if len(seen) != 25 {
		t.Fatalf("the pages held %d findings", len(seen))
	}
	if got, err := x.ListScanQualityIssues(ctx, 1, scan, "UNUSED", page.Request{Limit: 50}); err != nil || got.Count() != 13 || len(got.Items) != 13 {
		t.Fatalf("by class: %d of %d %v", len(got.Items), got.Count(), err)
	}
	if got, err := x.ListProjectQualityIssues(ctx, 1, 3, page.Request{Limit: 1}); err != nil || got.Count() != 25 {
		t.Fatalf("project total %d %v", got.Count(), err)
	}
	moved := all[:1]
	moved[0].Classification.Name = "Complexity" // was "Unused variable"
	if err := x.PutQualityIssues(ctx, 1, moved); err != nil {
		t.Fatal(err)
	}
	if c := classes(); c["Unused variable"] != 12 || c["Complexity"] != 13 {
		t.Fatalf("after a move: %v", c)
	}
	if got, err := x.ListProjectQualityIssues(ctx, 2, 3, page.Request{Limit: 10}); err != nil || got.Count() != 0 {
		t.Fatalf("another company: %d %v", got.Count(), err)
	}
	bad := issues(1, "X")
	bad[0].ScanID = "not-a-uuid"
	if err := x.PutQualityIssues(ctx, 1, bad); !errors.Is(err, ddb.ErrInvalid) {
		t.Fatalf("a scan id that is not a uuid: %v", err)
	}
}
